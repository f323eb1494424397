"""Privacy accounting: results with a budget ledger, zCDP splits and conversions.

Budgets are in zero-concentrated DP (rho-zCDP) unless a mechanism family says otherwise
(docs/design.md §5): the user-level mechanisms (5.7) are pure eps-DP. Both compose
additively, so a ledger is a list of (step, budget spent) entries, ``LedgerEntry`` (rho) or
``PureLedgerEntry`` (eps), whose sum is the total cost of a run in its mechanism's one unit.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ._validation import as_real, check_budget

UNSPENT = "unspent"


class LedgerEntry(NamedTuple):
    """One step of a mechanism and the zCDP budget it really spent."""

    step: str
    rho: float
    unit = "rho"

    @property
    def amount(self) -> float:
        return self.rho


class ApproxLedgerEntry(NamedTuple):
    """One step of an (eps, delta)-DP mechanism (the local model, docs/design.md §5.13) and the
    (eps, delta) it really spent. Its unit is eps, so a ledger's total is in eps; its deltas add
    up separately (:attr:`Estimate.delta_total`)."""

    step: str
    eps: float
    delta: float
    unit = "eps"

    @property
    def amount(self) -> float:
        return self.eps


class PureLedgerEntry(NamedTuple):
    """One step of a pure-DP mechanism (docs/design.md §5.7) and the eps it really spent. It has no
    ``rho``: adding it to a zCDP ledger fails instead of mixing units."""

    step: str
    eps: float
    unit = "eps"

    @property
    def amount(self) -> float:
        return self.eps


class MechanismRefusal(ValueError):
    """A mechanism declines this input for this budget (e.g. a library's automatic bounds on too
    little data) and releases nothing: an outcome an experiment records (experiments/engine/trials.py),
    not a failure of the run."""


@dataclass(frozen=True)
class Estimate:
    """A private estimate with its budget ledger and diagnostics.

    ``ledger`` holds every share of the requested budget, unspent shares included as
    ``LedgerEntry("unspent", ...)``, so under exact accounting it sums to the requested rho
    (or eps, for a pure-DP mechanism: ``unit``).
    """

    mean: np.ndarray
    ledger: tuple[LedgerEntry, ...]
    diagnostics: dict = field(default_factory=dict)

    @property
    def unit(self) -> str:
        """The ledger's budget unit, "rho" (zCDP) or "eps" (pure DP)."""
        units = {entry.unit for entry in self.ledger} or {"rho"}
        if len(units) > 1:
            raise ValueError(f"a ledger mixes budget units {sorted(units)}")
        return units.pop()

    @property
    def total(self) -> float:
        """Sum of the ledger (spent and unspent shares), in ``unit``."""
        return ledger_total(self.ledger)

    @property
    def spent(self) -> float:
        """Sum of the ledger without its unspent shares, in ``unit``."""
        return math.fsum(entry.amount for entry in self.ledger if entry.step != UNSPENT)

    @property
    def delta_total(self) -> float:
        """Sum of the deltas of the ledger's (eps, delta) entries: 0 for pure DP and zCDP ledgers."""
        return math.fsum(getattr(entry, "delta", 0.0) for entry in self.ledger)

    @property
    def rho_total(self) -> float:
        """``total`` of a zCDP ledger."""
        return math.fsum(entry.rho for entry in self.ledger)

    @property
    def rho_spent(self) -> float:
        """``spent`` of a zCDP ledger."""
        return math.fsum(entry.rho for entry in self.ledger if entry.step != UNSPENT)


def ledger_total(ledger) -> float:
    """Exact floating-point sum of a ledger's budgets; they must share one unit."""
    units = {entry.unit for entry in ledger}
    if len(units) > 1:
        raise ValueError(f"a ledger mixes budget units {sorted(units)}")
    return math.fsum(entry.amount for entry in ledger)


def check_rho(rho, name: str = "rho") -> float:
    """Return rho as a float, or raise ValueError unless it is a finite number > 0 inside the
    budget range of :func:`._validation.check_budget` ([1e-300, 1e300])."""
    return check_budget(rho, name)


def split_budget(rho, shares) -> tuple[float, ...]:
    """Split a zCDP budget into parts proportional to ``shares`` (they need not sum to 1).

    zCDP composes additively, so the parts sum to rho.
    """
    rho = check_rho(rho)
    try:
        values = np.asarray([as_real(s, "shares", "a list of numbers") for s in shares], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"shares must be a non-empty list of numbers, got shares={shares!r}") from None
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values < 0) or values.sum() <= 0:
        raise ValueError(f"shares must be finite, >= 0 and not all 0, got shares={shares!r}")
    shares = values
    return tuple(float(rho * s / shares.sum()) for s in shares)


def zcdp_to_approx_dp(rho, *, delta) -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Bun and Steinke 2016, Proposition 1.3: eps = rho + 2 sqrt(rho ln(1/delta)).
    """
    rho = check_rho(rho)
    delta = _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def approx_dp_to_zcdp(epsilon, *, delta) -> float:
    """Largest rho whose conversion by :func:`zcdp_to_approx_dp` gives at most epsilon."""
    epsilon = check_rho(epsilon, "epsilon")
    delta = _check_delta(delta)
    # Solve rho + 2 sqrt(rho L) = eps for sqrt(rho): a quadratic in sqrt(rho).
    log_term = math.log(1.0 / delta)
    root = -math.sqrt(log_term) + math.sqrt(log_term + epsilon)
    return root * root


def advanced_composition(epsilon, delta, *, steps, slack) -> tuple[float, float]:
    """(eps', delta') of ``steps`` adaptive (epsilon, delta)-DP steps (Dwork, Rothblum, Vadhan 2010;
    Dwork and Roth 2014, Theorem 3.20): eps' = sqrt(2 k ln(1 / slack)) eps + k eps (e^eps - 1),
    delta' = k delta + slack."""
    epsilon = check_rho(epsilon, "epsilon")
    steps = _check_steps(steps)
    delta, slack = _check_delta_or_zero(delta), _check_delta(slack)
    return _advanced_epsilon(epsilon, steps=steps, slack=slack), steps * delta + slack


def _advanced_epsilon(epsilon: float, *, steps: int, slack: float) -> float:
    growth = math.expm1(epsilon) if epsilon < 700.0 else math.inf  # e^eps - 1 leaves float64 near eps = 709.8
    return math.sqrt(2.0 * steps * math.log(1.0 / slack)) * epsilon + steps * epsilon * growth


def per_step_budget(epsilon, delta, *, steps) -> tuple[float, float]:
    """The (eps_j, delta_j) of each of ``steps`` steps whose composition is (epsilon, delta)-DP
    (docs/design.md §5.13): half of delta to the advanced composition's slack, the other half
    split evenly, delta_j = delta / (2 k); eps_j the larger of basic composition's epsilon / k and
    the largest eps_j whose :func:`advanced_composition` stays within epsilon (found by bisection
    on the increasing function, to the last float)."""
    epsilon = check_rho(epsilon, "epsilon")
    delta = _check_delta(delta)
    steps = _check_steps(steps)
    slack, step_delta = delta / 2.0, delta / (2.0 * steps)
    if not step_delta >= sys.float_info.min:
        raise ValueError(f"delta={delta!r} split over {steps} steps gives each delta / (2 k) = {step_delta!r}, below "
                         "float64's normal range; use a larger delta")
    if steps == 1:
        return epsilon, delta
    # k >= 2 steps of eps_j = min(epsilon, 1) exceed epsilon under advanced composition (k eps_j (e - 1) > epsilon
    # for eps_j >= 1, where basic composition's epsilon / k is larger anyway)
    low, high = 0.0, min(epsilon, 1.0)
    while True:
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        if _advanced_epsilon(mid, steps=steps, slack=slack) <= epsilon:
            low = mid
        else:
            high = mid
    basic = epsilon / steps
    return (low, step_delta) if low > basic else (basic, delta / steps)


def _check_steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got steps={steps!r}")
    return int(steps)


def _check_delta_or_zero(delta) -> float:
    value = as_real(delta, "delta", "a number in [0, 1)")
    if not 0 <= value < 1:
        raise ValueError(f"delta must be in [0, 1), got delta={delta!r}")
    return value


def _check_delta(delta) -> float:
    value = as_real(delta, "delta", "a number in (0, 1)")
    if not 0 < value < 1:
        raise ValueError(f"delta must be in (0, 1), got delta={delta!r}")
    return value


def gaussian_sigma(*, sensitivity, rho) -> float:
    """Noise std of the Gaussian mechanism: N(0, S^2 / (2 rho)) is rho-zCDP (docs/design.md §5)."""
    rho = check_rho(rho)
    return float(sensitivity) / math.sqrt(2.0 * rho)
