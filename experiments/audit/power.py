"""Power curves of the empirical privacy audit (docs/design.md §5.8): what an audit that finds
nothing rules out.

An audit that flags nothing says little on its own: it may have had no power. Here the audit is
repeated with independent seeds on a mechanism deliberately run at a larger budget than it
claims, and the share of repetitions that flag a violation estimates the audit's POWER against
that break, at each number of runs (draws per dataset). The BREAK is the factor the mechanism's
budget is multiplied by while the claim stays; break 1 is the correct mechanism, so its share is
the FALSE-ALARM rate, which the audit's confidence bounds by 1 - confidence = 0.05
(:data:`FALSE_ALARM_LIMIT`).

Three cheap batched mechanisms (:data:`POWER_MECHANISMS`), each on the neighbouring pair of its
registered audit (``experiments.audit.audits.AUDITS[name].setup``: the same mechanism on the same
pair, built at the broken budget):

- ``gaussian_step``: PLAN's last step, ``batched_gaussian_clipped_mean``, claim rho (zCDP),
  audited in zCDP's own measure with ``mechanisms.audit.audit_zcdp``; the break multiplies rho;
- ``userlevel_laplace``: the user-level Laplace mechanism, claim eps (pure DP), audited with
  ``audit_pair(..., delta=0)``; the break multiplies eps;
- ``exponential_quantile``: ``batched_exponential_quantile``, claim the pure
  eps = em_epsilon(rho) it runs at, ``audit_pair(..., delta=0)``; the break multiplies that eps,
  so the mechanism runs at rho x break^2.

Randomness: every audit's generator is ``SeedSequence(seed, spawn_key=(id("audit_power"),
id(mechanism), id(break), runs, repetition))`` (``id``: the CRC-32 of the name, or of the
break's repr as a float, so 1 and 1.0 are the same key): no global state, each (mechanism,
break, runs) cell independent of the others, and the same config gives the same rows byte for
byte. Adding a break or a number of runs leaves the other cells' rows unchanged.

Rows (:func:`power_curve`): mechanism, measure (rho or eps), claim, break, runs, repetitions,
flagged (count), power (flagged / repetitions), power_low and power_high (the two-sided 95 %
Clopper-Pearson interval of the power) and median_lower (the median over repetitions of the
lower bound the audit found, rho_lower or eps_lower, in the claim's measure).
"""
from __future__ import annotations

import math
import sys
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd

from mechanisms.audit import clopper_pearson_lower, clopper_pearson_upper, minimum_runs

from .audits import AUDITS, lower_bound

CONFIDENCE = 0.95  # the audits' confidence (mechanisms.audit's default)
FALSE_ALARM_LIMIT = 1.0 - CONFIDENCE  # the most a correct mechanism may be flagged
INTERVAL_LEVEL = 0.95  # the two-sided level of the power's Clopper-Pearson interval
COLUMNS = ["mechanism", "measure", "claim", "break", "runs", "repetitions", "flagged", "power", "power_low",
           "power_high", "median_lower"]


@dataclass(frozen=True)
class PowerMechanism:
    """A mechanism of the power curves: the registered audit whose mechanism, pair, claim and
    test it runs (``audit``: its ``budget_name``, ``measure`` and ``claim`` are this one's), and
    the budget the broken mechanism runs at (``broken_budget(budget, break)``). ``cost``: (seconds
    per audit, seconds per run of an audit) measured on 2 shared cores, for the workflow's time
    requests (:meth:`audit_seconds`)."""

    name: str
    label: str
    style: str  # experiments.outputs.styles.MECHANISM_STYLES key: its colour in every figure
    default_budget: float
    broken_budget: Callable[[float, float], float]
    cost: tuple[float, float]

    def audit_seconds(self, runs: int) -> float:
        """The measured seconds of one audit with ``runs`` draws per dataset."""
        per_audit, per_run = self.cost
        return per_audit + per_run * runs

    @property
    def audit(self):
        return AUDITS[self.name]

    @property
    def budget_name(self) -> str:
        return self.audit.budget_name

    @property
    def measure(self) -> str:
        return self.audit.measure

    def claim(self, budget: float) -> float:
        return self.audit.claim(budget)

    def run_once(self, budget: float, break_: float, *, runs: int, rng: np.random.Generator) -> tuple[bool, float]:
        """One audit of the mechanism run at its budget x ``break_`` against the claim of ``budget``:
        (flagged, the lower bound found)."""
        setup = self.audit.setup(self.broken_budget(budget, break_), False)
        result = self.audit.test(setup, self.claim(budget), runs=runs, rng=rng)
        return result.violation, lower_bound(result)


POWER_MECHANISMS: dict[str, PowerMechanism] = {
    mechanism.name: mechanism for mechanism in (
        PowerMechanism("gaussian_step", "Gaussian step (PLAN's last step), zCDP test", "gaussian_step", 0.25,
                       broken_budget=lambda rho, factor: rho * factor, cost=(0.03, 7e-8)),
        PowerMechanism("userlevel_laplace", "user-level Laplace, pure-DP test", "Laplace", 1.0,
                       broken_budget=lambda eps, factor: eps * factor, cost=(0.001, 4e-7)),
        PowerMechanism("exponential_quantile", "exponential-mechanism quantile, pure-DP test", "exponential_quantile",
                       0.5, broken_budget=lambda rho, factor: rho * factor * factor, cost=(0.002, 5e-7)),
    )
}


# ---------------------------------------------------------------- settings


def least_runs() -> int:
    """The fewest runs per dataset at which the audits can bound anything (delta = 0)."""
    return minimum_runs(delta=0.0, confidence=CONFIDENCE)


def _is_integer(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))


def check_settings(*, runs, breaks, repetitions) -> tuple[list[int], list[float], int]:
    """The runs, breaks and repetitions of a power curve, checked: ``runs`` a non-empty list of
    distinct integers >= :func:`least_runs`, ``breaks`` a non-empty list of distinct finite
    numbers >= 1, ``repetitions`` an integer >= 1. A ValueError names the value (``runs[2]``)."""
    least = least_runs()
    if not isinstance(runs, Sequence) or isinstance(runs, str) or not runs:
        raise ValueError(f"runs: must be a non-empty list of integers >= {least}, got {runs!r}")
    for index, value in enumerate(runs):
        if not _is_integer(value) or value < least:
            raise ValueError(f"runs[{index}]: must be an integer >= {least} (the fewest draws per dataset an "
                             f"audit can bound anything with), got {value!r}")
    if len(set(runs)) != len(runs):
        raise ValueError(f"runs: has a value twice, got {list(runs)!r}")
    if not isinstance(breaks, Sequence) or isinstance(breaks, str) or not breaks:
        raise ValueError(f"breaks: must be a non-empty list of numbers >= 1, got {breaks!r}")
    for index, value in enumerate(breaks):
        if not _is_number(value) or value < 1:
            raise ValueError(f"breaks[{index}]: must be a finite number >= 1 (the factor the mechanism's budget is "
                             f"multiplied by; 1 is the correct mechanism), got {value!r}")
    if len({float(value) for value in breaks}) != len(breaks):
        raise ValueError(f"breaks: has a value twice, got {list(breaks)!r}")
    if not _is_integer(repetitions) or repetitions < 1:
        raise ValueError(f"repetitions: must be an integer >= 1, got {repetitions!r}")
    return [int(value) for value in runs], [float(value) for value in breaks], int(repetitions)


def check_mechanisms(entries: Mapping) -> dict[str, float]:
    """mechanism -> budget from the config's ``mechanisms`` (each ``{}``, null or ``{budget: b}``),
    in config order; a ValueError names an unknown mechanism or a bad budget."""
    if not isinstance(entries, Mapping) or not entries:
        raise ValueError(f"mechanisms: must name at least one of {list(POWER_MECHANISMS)}, got {entries!r}")
    budgets = {}
    for name, entry in entries.items():
        if name not in POWER_MECHANISMS:
            raise ValueError(f"mechanisms.{name}: no such mechanism; known: {list(POWER_MECHANISMS)}")
        entry = entry or {}
        if not isinstance(entry, Mapping) or set(entry) - {"budget"}:
            raise ValueError(f"mechanisms.{name}: must be {{}} or {{budget: value}}, got {entry!r}")
        budget = entry.get("budget")
        budgets[name] = check_budget(name, budget)
    return budgets


def check_budget(mechanism: str, budget) -> float:
    """The mechanism's claimed budget (None: its default), a finite number > 0."""
    spec = POWER_MECHANISMS[mechanism]
    if budget is None:
        return spec.default_budget
    if not _is_number(budget) or budget <= 0:
        raise ValueError(f"mechanisms.{mechanism}.budget: must be a finite {spec.budget_name} > 0, got {budget!r}")
    return float(budget)


# ---------------------------------------------------------------- the runner


def _name_key(text: str) -> int:
    """A 32-bit key of a name, the same on every machine and Python run."""
    return zlib.crc32(text.encode("utf-8"))


def audit_generator(seed: int, mechanism: str, break_: float, runs: int, repetition: int) -> np.random.Generator:
    """The generator of one audit, from the config seed and its (mechanism, break, runs,
    repetition) key."""
    key = (_name_key("audit_power"), _name_key(mechanism), _name_key(repr(float(break_))), int(runs), int(repetition))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


def power_interval(flagged: int, repetitions: int) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval of a binomial share at :data:`INTERVAL_LEVEL`."""
    alpha = (1.0 - INTERVAL_LEVEL) / 2.0
    return (float(clopper_pearson_lower(flagged, repetitions, alpha=alpha)),
            float(clopper_pearson_upper(flagged, repetitions, alpha=alpha)))


def power_curve(mechanism: str, *, seed: int, runs, breaks, repetitions: int, budget=None,
                progress=sys.stderr) -> pd.DataFrame:
    """The power of the audit against each break at each number of runs: one row per (runs,
    break), runs ascending, breaks in the given order (:data:`COLUMNS`). One line per number of
    runs on ``progress`` (None: silent): the flagged counts per break and the seconds taken (wall
    and CPU: on a shared machine the CPU seconds are what the audits cost)."""
    if mechanism not in POWER_MECHANISMS:
        raise ValueError(f"mechanism must be one of {list(POWER_MECHANISMS)}, got mechanism={mechanism!r}")
    if not _is_integer(seed) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got seed={seed!r}")
    runs, breaks, repetitions = check_settings(runs=runs, breaks=breaks, repetitions=repetitions)
    spec = POWER_MECHANISMS[mechanism]
    budget = check_budget(mechanism, budget)
    claim = spec.claim(budget)
    rows = []
    for count in sorted(runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        found = []
        for break_ in breaks:
            outcomes = [spec.run_once(budget, break_, runs=count,
                                      rng=audit_generator(seed, mechanism, break_, count, repetition))
                        for repetition in range(repetitions)]
            flagged = sum(bool(violation) for violation, _ in outcomes)
            low, high = power_interval(flagged, repetitions)
            rows.append({"mechanism": mechanism, "measure": spec.measure, "claim": claim, "break": break_,
                         "runs": count, "repetitions": repetitions, "flagged": flagged,
                         "power": flagged / repetitions, "power_low": low, "power_high": high,
                         "median_lower": float(np.median([lower for _, lower in outcomes]))})
            found.append(f"{break_:g}: {flagged}/{repetitions}")
        if progress is not None:
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            audits = len(breaks) * repetitions
            print(f"{mechanism}: {count} runs, {audits} audits in {seconds:.1f} s ({seconds / audits:.4f} s per audit, "
                  f"{cpu / audits:.4f} CPU s); flagged per break {', '.join(found)}", file=progress, flush=True)
    return pd.DataFrame(rows, columns=COLUMNS)


def false_alarms(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of break 1 (the correct mechanism): their power is the false-alarm rate."""
    return table[np.isclose(table["break"].astype(float), 1.0)]


def main(argv=None) -> None:
    """``python -m experiments.audit.power MECHANISM [--runs R ...] [--breaks B ...] [--repetitions N]
    [--seed S] [--budget B]``: one power curve, as CSV on standard output (progress on standard error)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("mechanism", choices=list(POWER_MECHANISMS))
    parser.add_argument("--runs", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--breaks", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--budget", type=float, default=None)
    args = parser.parse_args(argv)
    table = power_curve(args.mechanism, seed=args.seed, runs=args.runs, breaks=args.breaks,
                        repetitions=args.repetitions, budget=args.budget)
    print(table.to_csv(index=False), end="")


if __name__ == "__main__":
    main()
