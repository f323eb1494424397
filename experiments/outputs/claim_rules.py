"""The rules the claims table judges the papers' statements by: one rule per kind of claim, fixed
before any number is seen (docs/workflow.md, "Claims"), so that two claims of the same kind are
never judged by different standards.

- **X larger than Y** (``larger``): at least 80 % of the settings show it with z >= 2 and none is
  significantly the other way (z <= -2); z = (X - f Y) / sqrt(se_X^2 + f^2 se_Y^2), f the factor
  the claim states ("much larger": 1.5, else 1).
- **X comparable to Y** (``within_band``): X / Y inside the claim's stated band at >= 80 % of the
  settings and none significantly outside it (z >= 2 beyond an edge).
- **grows with x** (``trend``): the Mann-Kendall trend test stratified over the claim's groups
  (e.g. each rho): S = sum over groups of sign(v_j - v_i) for i < j in x order, its variance
  sum n (n - 1) (2 n + 5) / 18, z = (S - sign S) / sd >= 2; not the endpoints.

Each returns a ``Judgement``: what was measured, whether the claim holds, and the share of
settings (or pairs) that show it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CLAIM_SHARE = 0.8
CLAIM_Z = 2.0
SIMILAR = (2 / 3, 1.5)  # "comparable", "similar": the band the PLAN claims state


@dataclass(frozen=True)
class Estimate:
    """A mean (or another statistic) with its standard error."""

    value: float
    se: float

    def ratio(self, other: Estimate) -> Estimate:
        """self / other, its standard error by the delta method (independent estimates)."""
        value = self.value / other.value
        return Estimate(value, abs(value) * math.hypot(self.se / self.value if self.value else 0.0,
                                                       other.se / other.value))


@dataclass(frozen=True)
class Judgement:
    measured: str
    holds: bool
    share: str  # e.g. "12 of 14 settings"


def z_above(first: Estimate, second: Estimate, factor: float = 1.0) -> float:
    """z of first - factor x second (positive: first is larger)."""
    difference = first.value - factor * second.value
    se = math.hypot(first.se, factor * second.se)
    if se > 0:
        return difference / se
    return math.copysign(math.inf, difference) if difference else 0.0


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _span(values: Sequence[float]) -> str:
    low, high = _fmt(min(values)), _fmt(max(values))
    return low if low == high else f"{low}-{high}"


def larger(pairs: Mapping[str, tuple[Estimate, Estimate]], label: str, factor: float = 1.0) -> Judgement:
    """``pairs``: setting -> (the estimate claimed larger, the other); the claim: first > factor x second."""
    zs = {where: z_above(first, second, factor) for where, (first, second) in pairs.items()}
    shown = sum(z >= CLAIM_Z for z in zs.values())
    against = [where for where, z in zs.items() if z <= -CLAIM_Z]
    ratios = [first.value / second.value for first, second in pairs.values()]
    times = f"{_fmt(factor)} x " if factor != 1 else ""
    measured = (f"{label} {_span(ratios)}; above {times}with z >= {CLAIM_Z:g} in {shown} of {len(pairs)} settings"
                + (f"; significantly the other way at {', '.join(against)}" if against else ""))
    return Judgement(measured, shown >= CLAIM_SHARE * len(pairs) and not against, f"{shown} of {len(pairs)} settings")


def within_band(pairs: Mapping[str, tuple[Estimate, Estimate]], label: str,
               band: tuple[float, float] = SIMILAR) -> Judgement:
    """``pairs``: setting -> (X, Y); the claim: X / Y inside ``band``."""
    inside = sum(band[0] <= first.value / second.value <= band[1] for first, second in pairs.values())
    outside = [where for where, (first, second) in pairs.items()
               if (math.isfinite(band[1]) and z_above(first, second, band[1]) >= CLAIM_Z)
               or z_above(first, second, band[0]) <= -CLAIM_Z]
    ratios = [first.value / second.value for first, second in pairs.values()]
    measured = (f"{label} {_span(ratios)}; inside [{_fmt(band[0])}, {_fmt(band[1])}] in {inside} of {len(pairs)} "
                "settings" + (f"; significantly outside at {', '.join(outside)}" if outside else ""))
    return Judgement(measured, inside >= CLAIM_SHARE * len(pairs) and not outside,
                     f"{inside} of {len(pairs)} settings")


def mann_kendall(groups: Mapping[str, Sequence[float]]) -> tuple[int, int, float]:
    """(S, the number of pairs compared, z) of the Mann-Kendall statistic stratified over
    ``groups`` (each: values in the order of x)."""
    statistic, pairs, variance = 0, 0, 0.0
    for values in groups.values():
        n = len(values)
        statistic += sum((b > a) - (b < a) for i, a in enumerate(values) for b in values[i + 1:])
        pairs += n * (n - 1) // 2
        variance += n * (n - 1) * (2 * n + 5) / 18
    z = (statistic - math.copysign(1, statistic)) / math.sqrt(variance) if statistic and variance else 0.0
    return statistic, pairs, z


def trend(groups: Mapping[str, Sequence[float]], label: str, increasing: bool = True) -> Judgement:
    """``groups``: group -> values in the order of x; the claim: they grow (or fall) with x."""
    statistic, pairs, z = mann_kendall(groups)
    if not increasing:
        statistic, z = -statistic, -z
    agreeing = sum((b > a) if increasing else (b < a)  # pairs in the claimed order
                   for values in groups.values() for i, a in enumerate(values) for b in values[i + 1:])
    direction = "grows" if increasing else "falls"
    measured = (f"{label}: " + "; ".join(f"{group}: {', '.join(_fmt(v) for v in values)}"
                                        for group, values in groups.items())
                + f"; Mann-Kendall z = {z:.2f} that it {direction}")
    return Judgement(measured, z >= CLAIM_Z, f"{agreeing} of {pairs} pairs")


def both(first: Judgement, second: Judgement) -> Judgement:
    """A claim of two parts: it holds when both do."""
    return Judgement(f"{first.measured}; {second.measured}", first.holds and second.holds,
                     f"{first.share}; {second.share}")
