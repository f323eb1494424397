"""The exponential-mechanism quantile is eps-DP under swap neighbours (docs/design.md §5.0, §5.1).

The output density of the mechanism is computed exactly from the same interval weights the
sampler uses: density(y) = weight_i / width_i / sum(weights) for the interval i holding y.
"""
import math

import numpy as np
import pytest

from mechanisms.quantiles import em_epsilon, interval_weights, padded_sorted

LO, HI = 0.0, 10.0
GRID = np.linspace(LO, HI, 20001)[1:-1]  # output points strictly inside the universe


def output_density(values, *, q, eps, sensitivity):
    edges = padded_sorted(np.asarray(values, dtype=float)[None, :], lo=LO, hi=HI)
    weights = interval_weights(edges, q=q, eps=eps, sensitivity=sensitivity)[0]
    interval = np.clip(np.searchsorted(edges[0], GRID, side="right") - 1, 0, weights.size - 1)
    widths = np.diff(edges[0])
    return weights[interval] / widths[interval] / weights.sum()


def max_log_ratio(first, second, **mechanism):
    a, b = output_density(first, **mechanism), output_density(second, **mechanism)
    return float(np.max(np.abs(np.log(a) - np.log(b))))


BASE = [0.4, 1.1, 2.5, 3.0, 4.2, 5.5, 6.1, 7.7, 8.3]
NEIGHBOURS = [
    (BASE, [9.6] + BASE[1:]),                 # the smallest value swapped for a new largest
    (BASE, BASE[:4] + [0.05] + BASE[5:]),     # the median swapped for a new smallest
    (BASE, BASE[:-1] + [1.0]),                # the largest value moved into the lower half
]


@pytest.mark.parametrize("q", [0.5, 0.9])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("first,second", NEIGHBOURS)
def test_exponential_quantile_with_sensitivity_one_is_eps_dp_under_swap(first, second, eps, q):
    assert max_log_ratio(first, second, q=q, eps=eps, sensitivity=1.0) <= eps * (1 + 1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_published_median_sensitivity_of_one_half_exceeds_eps_under_swap(eps):
    worst = max(max_log_ratio(a, b, q=0.5, eps=eps, sensitivity=0.5) for a, b in NEIGHBOURS)
    assert worst > 1.05 * eps


def stacked(values, spread=0.1):
    x = np.asarray(values)
    return np.concatenate([np.clip(x + spread, LO, HI), x, np.clip(x - spread, LO, HI)])


def test_published_stacked_median_loses_more_than_it_books_but_within_its_ledger_cost():
    """The published centre step: three copies per person, rho / 3, sensitivity 1/2 assumed.

    It books rho (eps = sqrt(8 rho)); one call really uses eps' = sqrt(8 rho / 3) calibrated
    for sensitivity 1/2 while one person moves the utility by 3, so its true eps is 6 eps'
    and its true zCDP cost (6 eps')^2 / 8 = 12 rho, as the published ledger records.
    """
    rho = 0.02
    eps_used = em_epsilon(rho / 3)
    loss = max(max_log_ratio(stacked(a), stacked(b), q=0.5, eps=eps_used, sensitivity=0.5) for a, b in NEIGHBOURS)
    assert loss > em_epsilon(rho)
    assert loss <= em_epsilon(12 * rho) * (1 + 1e-9)
    assert em_epsilon(12 * rho) == pytest.approx(6 * eps_used)


def test_exponential_mechanism_epsilon_is_the_square_root_of_eight_rho():
    """The exponential mechanism with parameter eps is eps^2 / 8-zCDP (Cesar and Rogers 2021)."""
    assert em_epsilon(0.125) == pytest.approx(1.0)
    assert em_epsilon(2.0) == pytest.approx(math.sqrt(16.0))
