"""The claims table's rules (experiments/outputs/claim_rules.py): one per kind of claim."""
import math

import pytest

from experiments.outputs.claim_rules import Estimate, both, larger, mann_kendall, trend, within_band, z_above


def pairs_with(zs, se=1.0, base=100.0):
    """Settings whose first estimate lies z combined standard errors above the second."""
    return {f"s{i}": (Estimate(base + z * math.sqrt(2) * se, se), Estimate(base, se)) for i, z in enumerate(zs)}


def test_z_above_is_the_difference_over_the_combined_standard_error():
    assert z_above(Estimate(5.0, 3.0), Estimate(1.0, 4.0)) == pytest.approx(4.0 / 5.0)
    assert z_above(Estimate(5.0, 3.0), Estimate(1.0, 2.0), factor=2.0) == pytest.approx(3.0 / 5.0)
    assert z_above(Estimate(2.0, 0.0), Estimate(1.0, 0.0)) == math.inf and z_above(Estimate(1, 0), Estimate(1, 0)) == 0


def test_larger_holds_with_noise_settings_when_80_percent_show_it_and_none_is_significant_the_other_way():
    # the issue's "IOME slightly larger on A'": 12 of 14 settings show it, two are noise (z -0.95 and -0.23)
    judged = larger(pairs_with([3.0] * 12 + [-0.95, -0.23]), "IOME A' / A")
    assert judged.holds and judged.share == "12 of 14 settings"
    assert not larger(pairs_with([3.0] * 11 + [1.0] * 3), "x").holds  # 11 of 14 < 80 %
    against = larger(pairs_with([3.0] * 13 + [-2.5]), "x")
    assert not against.holds and "significantly the other way at s13" in against.measured


def test_larger_by_a_factor_tests_against_that_multiple():
    pairs = {"s": (Estimate(2.0, 0.1), Estimate(1.0, 0.01))}
    assert larger(pairs, "x").holds and not larger(pairs, "x", factor=1.9).holds
    assert "above 1.9 x with z >= 2" in larger(pairs, "x", factor=1.9).measured


def test_within_band_needs_80_percent_inside_and_none_significantly_outside():
    inside = {f"s{i}": (Estimate(1.0 + 0.05 * i, 0.01), Estimate(1.0, 0.01)) for i in range(5)}
    assert within_band(inside, "x").holds and within_band(inside, "x").share == "5 of 5 settings"
    noisy = inside | {"noisy": (Estimate(1.6, 0.5), Estimate(1.0, 0.01))}  # outside, not significantly
    assert within_band(noisy, "x").holds and within_band(noisy, "x").share == "5 of 6 settings"
    far = inside | {"far": (Estimate(3.0, 0.1), Estimate(1.0, 0.01))}
    judged = within_band(far, "x")
    assert not judged.holds and "significantly outside at far" in judged.measured
    assert within_band({"s": (Estimate(5.0, 0.0), Estimate(1.0, 0.0))}, "x", (1.0, math.inf)).holds


def test_mann_kendall_counts_concordant_pairs_and_its_variance_is_summed_over_groups():
    statistic, pairs, z = mann_kendall({"a": [1, 2, 3, 4], "b": [3, 1, 2]})
    # a: 6 increasing pairs; b: (3,1) -, (3,2) -, (1,2) +  -> S = 6 - 1 = 5
    variance = 4 * 3 * 13 / 18 + 3 * 2 * 11 / 18
    assert (statistic, pairs) == (5, 9) and z == pytest.approx(4 / math.sqrt(variance))


def test_a_trend_is_judged_by_the_whole_series_not_the_endpoints():
    # the "PLAN's advantage grows with d": larger at d = 1024 than at d = 16 for both rho, but at
    # rho = 1 IOME is better for d = 128-512
    series = {"rho 1/8": [1.01, 0.898, 2.02, 1.63, 3.17, 3.99, 5.33], "rho 1": [1.14, 1.15, 1.54, 0.939, 0.893, 0.939,
                                                                               1.33]}
    judged = trend(series, "IOME / PLAN")
    assert all(values[-1] > values[0] for values in series.values()) and not judged.holds
    assert judged.share == "28 of 42 pairs" and "Mann-Kendall z = 1.49" in judged.measured
    assert trend({"a": [5, 4, 3, 2, 1], "b": [6, 5, 4, 3, 2]}, "x", increasing=False).holds


def test_a_claim_of_two_parts_holds_when_both_do():
    yes, no = larger(pairs_with([3.0]), "a"), larger(pairs_with([0.0]), "b")
    assert both(yes, yes).holds and not both(yes, no).holds
    assert both(yes, no).share == "1 of 1 settings; 0 of 1 settings"
