"""Private per-column variance and standard-deviation estimation: the estimators of PLAN's
Table 2 (docs/design.md §5.6).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", Appendix D.
Every function takes ``x`` (n x d) and estimates a spread of every column, returning an
:class:`~mechanisms.accounting.Estimate` whose ``.mean`` field holds that spread (shape (d,)),
not a mean: the field name is shared with the mean estimators so that the same experiment
engine can run them.

* :func:`variance_direct`, :func:`variance_general`: our corrected estimators of the VARIANCE
  (``diagnostics["std_estimate"]`` holds their square roots). Accounting is exact rho-zCDP
  under swap neighbours: ``rho`` is the budget for all d columns together. One person touches
  every column, so each column's quantile searches get rho / d between them; each is an
  exponential-mechanism quantile (docs/design.md §5.1) with utility sensitivity 1, which is
  rho'-zCDP with eps = sqrt(8 rho'). The ledger sums to rho.
* :func:`std_direct`, :func:`std_general`: the STANDARD-DEVIATION estimators as the authors'
  evaluation of Table 2 ran them (Appendix D.2; docs/results.md#table-2): a share
  ``budget_share`` (1/8 as published) of rho, the direct one without the normal-quantile
  conversion, the general one over 2k shuffles of the rows. ``accounting="published"``
  calibrates the exponential mechanism as the published evaluation did and books each step's
  true cost under swap neighbours; ``accounting="exact"`` is exactly rho-zCDP.
"""
from __future__ import annotations

import numpy as np

from ._fast.pairs import group_pairs, group_sums  # Algorithm 2, steps 3-4 (shared with PLAN's step 3)
from ._layout import sample_data, transposed_copy
from ._validation import (
    as_real,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive_int,
    check_step_budgets,
)
from .accounting import UNSPENT, Estimate, LedgerEntry, check_rho, ledger_total, split_budget
from .plan import wilson_hilferty_factor
from .quantiles import em_epsilon, em_select_sorted, padded_sorted


def variance_direct(x, *, rho, bounds, rng, quantile=0.841) -> Estimate:
    """Variance from a private quantile minus a private centre (PLAN Appendix D.2, "direct").

    Appendix D.2: sigma~ = PrivQuantile(x, .841) - mu~, since the .841-quantile of N(mu, sigma^2)
    is about mu + sigma. Here, per column: centre = private median, Q = private
    ``quantile``-quantile, both on the universe ``bounds`` (values outside are clipped);
    std = max(Q - centre, 0) / Phi^{-1}(quantile) and the estimate is std^2 (a negative
    spread, possible only under heavy noise, is reported as 0; see
    ``diagnostics["negative_spread"]``). Dividing by the normal quantile makes every
    ``quantile`` in (0.5, 1) estimate sigma for Gaussian data. (Table 2's direct-0.75 and
    direct-0.9 errors, 0.27-0.33, match |(Q - mu~) - sigma| / sigma: the raw spread taken as
    sigma, without this division, and the error measured on sigma.)

    Budget: the paper gives mu~ as an input and does not say how Table 2 split the budget,
    so it is split evenly: rho / 2 for the centres, rho / 2 for the quantiles (rho / (2 d)
    per column each). The paper does not state Table 2's universe either; ``bounds`` is used
    as given. The empty parts of the universe matter little here: they lie at least
    n (1 - quantile) ranks from the target, which the exponential mechanism discounts by
    exp(-eps/2 per rank).

    Returns an Estimate whose ``.mean`` holds the variance estimates (shape (d,)).
    """
    data = check_data(sample_data(x))
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    q = as_real(quantile, "quantile", "a number in (0.5, 1)")
    if not 0.5 < q < 1.0:
        raise ValueError(f"quantile must be in (0.5, 1), got quantile={quantile!r}")
    d = data.shape[1]
    centre_rho, quantile_rho = split_budget(rho, [1, 1])
    check_step_budgets(f"rho={rho!r} with d={d}", centre=centre_rho / d, quantile=quantile_rho / d)
    edges = padded_sorted(transposed_copy(data), lo=lo, hi=hi)  # sorted once, searched twice
    centre_draws, quantile_draws = rng.random((2, 2, d))
    centre = em_select_sorted(edges, q=0.5, eps=em_epsilon(centre_rho / d), sensitivity=1.0, uniforms=centre_draws)
    upper = em_select_sorted(edges, q=q, eps=em_epsilon(quantile_rho / d), sensitivity=1.0, uniforms=quantile_draws)
    from scipy.special import ndtri  # imported here: scipy.special adds 0.05 s to every job

    z = float(ndtri(q))
    std = np.maximum(upper - centre, 0.0) / z
    ledger = (LedgerEntry("centre", centre_rho), LedgerEntry("quantile", quantile_rho))
    diagnostics = {
        "accounting": "exact",
        "requested_rho": rho,
        "true_rho": ledger_total(ledger),
        "ledger_total": ledger_total(ledger),
        "quantile": q,
        "normal_quantile": z,
        "centre": centre,
        "quantile_value": upper,
        "negative_spread": int(np.sum(upper < centre)),
        "std_estimate": std,
    }
    return Estimate(mean=std * std, ledger=ledger, diagnostics=diagnostics)


def variance_general(x, *, rho, bounds, rng, groups=1) -> Estimate:
    """Variance by Algorithm 2 (PLAN Appendix D.1) with the chi-square median-to-mean factor.

    Per column, with k = ``groups``: shuffle the rows (one permutation shared by all columns,
    drawn independently of the data), cut them into floor(n / 2k) groups of 2k rows (a leftover
    is dropped), y = sum over a group's k pairs (a, b) of (a - b)^2 / 2 (steps 3-4); the
    private median of the y on [0, k (hi - lo)^2 / 2] with the whole budget (step 5; values are
    first clipped to ``bounds``, so no y leaves that range), divided by k. For Gaussian data
    y ~ sigma^2 chi-square_k, so, as in Table 2 and the variance step of PLAN (docs/design.md §5.2
    step 3, which this shares its code with), the result is divided by the Wilson-Hilferty
    median-to-mean factor (1 - 2/(9k))^3. That approximation makes the estimate 3.3 % low for k = 1
    (the median of chi-square_1 is 0.4549, the factor is 0.4705) and 0.4 % low for k = 4.

    Swapping one person changes one group's y, so the median's rank utility has sensitivity 1:
    rho / d per column, rho in total. Needs n >= 2k.

    The universe matters when sigma^2 is tiny next to it and there are few groups: the empty
    range above the data, of width about k (hi - lo)^2 / 2, is only n' / 2 ranks from the
    median (n' = floor(n / 2k)). For Table 2's sigma^2 = 0.001, rho = 0.001, k = 4 it is
    chosen in about 3 % of runs on [-1000, 1000], and never in 1000 runs on [-200, 200].
    Keep ``bounds`` tight.

    Returns an Estimate whose ``.mean`` holds the variance estimates (shape (d,)).
    """
    data = check_data(sample_data(x))
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    groups = check_positive_int(groups, "groups")
    n, d = data.shape
    if n < 2 * groups:
        raise ValueError(f"x needs at least {2 * groups} rows for groups={groups}, got n={n}")
    check_step_budgets(f"rho={rho!r} with d={d}", variance=rho / d)
    rows = np.clip(transposed_copy(data), lo, hi)
    first, second = group_pairs(rng, n, groups)
    draws = rng.random((2, d))
    y = group_sums(rows, first, second, groups=groups)
    y_hi = groups * (hi - lo) ** 2 / 2.0
    median = em_select_sorted(
        padded_sorted(y, lo=0.0, hi=y_hi, inside=True), q=0.5, eps=em_epsilon(rho / d), sensitivity=1.0,
        uniforms=draws,
    )
    factor = wilson_hilferty_factor(groups)
    variance = median / groups / factor
    ledger = (LedgerEntry("variance", rho),)
    diagnostics = {
        "accounting": "exact",
        "requested_rho": rho,
        "true_rho": rho,
        "ledger_total": ledger_total(ledger),
        "groups": groups,
        "n_groups": int(y.shape[1]),
        "group_median": median,
        "wilson_hilferty_factor": factor,
        "search_upper": y_hi,
        "std_estimate": np.sqrt(variance),
    }
    return Estimate(mean=variance, ledger=ledger, diagnostics=diagnostics)


# ------------------------------------------------------------------ the authors' Table 2 protocol

ACCOUNTINGS = ("exact", "published")
PUBLISHED_BUDGET_SHARE = 0.125  # the evaluation calls each estimator with rho / (8 d)


def _check_quantile(quantile) -> float:
    q = as_real(quantile, "quantile", "a number in (0.5, 1)")
    if not 0.5 < q < 1.0:
        raise ValueError(f"quantile must be in (0.5, 1), got quantile={quantile!r}")
    return q


def _true_cost(used_rho: float, *, moved: int, assumed_sensitivity: float) -> float:
    """rho really spent by an exponential mechanism run with ``used_rho`` and calibrated for
    ``assumed_sensitivity`` when one person moves the rank utility by ``moved``: zCDP cost
    grows with the squared ratio of the true to the assumed sensitivity."""
    return used_rho * (moved / assumed_sensitivity) ** 2


def std_direct(x, *, rho, bounds, rng, quantile=0.841, budget_share=PUBLISHED_BUDGET_SHARE,
               accounting="exact") -> Estimate:
    """Standard deviation as the private ``quantile``-quantile minus the private median, per
    column, as the authors' evaluation of Table 2 computed it (Appendix D.2, "direct").

    Appendix D.2: sigma~ = PrivQuantile(x, .841) - mu~. The evaluation gives the estimator
    ``budget_share`` rho (rho / 8 as published; rho / (8 d) per column) and spends half of it on
    each quantile, both exponential-mechanism quantiles (:func:`~.quantiles.em_select_sorted`)
    on the universe ``bounds`` (values outside are clipped). The difference is returned as it
    is: no division by the normal quantile Phi^-1(q), so only ``quantile`` = 0.841 estimates
    sigma for Gaussian data (0.75 gives about 0.674 sigma, 0.9 about 1.28 sigma), and under
    heavy noise the difference may be NEGATIVE: ``.mean`` holds these signed std estimates
    (shape (d,)).

    ``accounting="published"`` calibrates each exponential mechanism for the utility
    sensitivity max(q, 1 - q) (1/2 for the median), as the evaluation's quantile did; under swap
    neighbours the rank utility moves by 1, so each step really spends (1 / max(q, 1 - q))^2
    times its rho, which the ledger books (``diagnostics["true_rho"]``: their sum).
    ``accounting="exact"`` uses sensitivity 1 and the ledger sums to rho. Both book the
    unused share (1 - budget_share) rho as unspent.
    """
    data = check_data(sample_data(x))
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    q = _check_quantile(quantile)
    share = check_fraction(budget_share, "budget_share")
    published = check_choice(accounting, "accounting", ACCOUNTINGS) == "published"
    d = data.shape[1]
    used = share * rho
    step_rho = used / 2.0 / d  # per column, for the median and for the quantile
    check_step_budgets(f"rho={rho!r} with budget_share={budget_share!r} and d={d}", quantile=step_rho)
    median_sensitivity = 0.5 if published else 1.0
    quantile_sensitivity = max(q, 1.0 - q) if published else 1.0
    edges = padded_sorted(transposed_copy(data), lo=lo, hi=hi)  # sorted once, searched twice
    median_draws, quantile_draws = rng.random((2, 2, d))
    eps = em_epsilon(step_rho)
    median = em_select_sorted(edges, q=0.5, eps=eps, sensitivity=median_sensitivity, uniforms=median_draws)
    upper = em_select_sorted(edges, q=q, eps=eps, sensitivity=quantile_sensitivity, uniforms=quantile_draws)
    ledger = (
        LedgerEntry("median", d * _true_cost(step_rho, moved=1, assumed_sensitivity=median_sensitivity)),
        LedgerEntry("quantile", d * _true_cost(step_rho, moved=1, assumed_sensitivity=quantile_sensitivity)),
        LedgerEntry(UNSPENT, rho - used),
    )
    true_rho = ledger_total(ledger[:2])
    diagnostics = {
        "accounting": accounting,
        "requested_rho": rho,
        "booked_rho": used,
        "true_rho": true_rho,
        "ledger_total": ledger_total(ledger),
        "quantile": q,
        "eps": eps,
        "median_sensitivity": median_sensitivity,
        "quantile_sensitivity": quantile_sensitivity,
        "median": median,
        "quantile_value": upper,
    }
    return Estimate(mean=upper - median, ledger=ledger, diagnostics=diagnostics)


def shuffled_groups(*, n: int, groups: int, rng) -> np.ndarray:
    """The members of the general estimator's values: 2k independent shuffles of the n rows,
    each cut into floor(n / 2k) groups of 2k rows (a leftover is dropped), k consecutive pairs
    per group (Algorithm 2, step 3, repeated 2k times). Returns (2k floor(n / 2k), 2k) row
    indices, one row per value, its pairs at columns (0, 1), (2, 3), ...; a row appears in at
    most one value per shuffle, so in at most 2k values (exactly 2k when 2k divides n)."""
    width = 2 * groups
    kept = (n // width) * width
    orders = rng.permuted(np.broadcast_to(np.arange(n), (width, n)), axis=1)
    return orders[:, :kept].reshape(-1, width)


def std_general(x, *, rho, bounds, rng, groups=1, budget_share=PUBLISHED_BUDGET_SHARE,
                accounting="exact") -> Estimate:
    """Standard deviation by Algorithm 2 (PLAN Appendix D.1) as the authors' evaluation of
    Table 2 ran it (Appendix D.2, "general"), per column.

    With k = ``groups``: 2k shuffles of the rows (:func:`shuffled_groups`, drawn independently
    of the data and shared by the columns), each cut into groups of k pairs (a, b) whose values
    (a - b)^2 / 2 are averaged (summed and divided by k), so each row enters 2k of the about n
    values y; the private median of the y on [0, hi^2] (hi = the upper end of ``bounds``,
    values clipped to ``bounds`` first, y above hi^2 clipped to it), and
    std = sqrt(median / (1 - 2/(9k))^3), the chi-square median-to-mean factor of Appendix D.2.
    The estimator gets ``budget_share`` rho (rho / 8 as published) and spends half of it on
    the median; the other half and the unused (1 - budget_share) rho are booked unspent.

    Swapping one person changes the 2k values it is in, so the median's rank utility moves by
    up to 2k. ``accounting="published"``, as the evaluation: the median's budget is divided
    by 2k and the exponential mechanism calibrated for sensitivity 1/2, so the step really
    spends (2k / (1/2))^2 = 16 k^2 times the rho it runs with, 8k times the rho / 16 it
    books; the ledger records that true cost (``diagnostics["true_rho"]``).
    ``accounting="exact"``: the whole median budget with sensitivity 2k; the ledger sums to rho.

    ``.mean`` holds the std estimates (shape (d,)). Needs n >= 2k and hi > 0.
    """
    data = check_data(sample_data(x))
    rho = check_rho(rho)
    lo, hi = check_bounds(bounds)
    rng = check_generator(rng)
    groups = check_positive_int(groups, "groups")
    share = check_fraction(budget_share, "budget_share")
    published = check_choice(accounting, "accounting", ACCOUNTINGS) == "published"
    n, d = data.shape
    if n < 2 * groups:
        raise ValueError(f"x needs at least {2 * groups} rows for groups={groups}, got n={n}")
    y_hi = hi * hi
    if not (hi > 0 and y_hi >= np.finfo(float).tiny):
        raise ValueError(f"bounds=({lo!r}, {hi!r}): the median's universe [0, hi^2] needs an upper end hi > 0 "
                         f"whose square is a normal float64 number, got hi^2={y_hi!r}")
    shuffles = 2 * groups
    used = share * rho
    median_rho = used / 2.0
    call_rho = median_rho / d / (shuffles if published else 1)  # per column
    check_step_budgets(f"rho={rho!r} with budget_share={budget_share!r}, groups={groups} and d={d}",
                       median=call_rho)
    sensitivity = 0.5 if published else float(shuffles)
    rows = np.clip(transposed_copy(data), lo, hi)
    members = shuffled_groups(n=n, groups=groups, rng=rng)
    draws = rng.random((2, d))
    values = np.zeros((d, members.shape[0]))
    for pair in range(groups):  # k pair positions of a group, each over every value at once
        difference = rows[:, members[:, 2 * pair]] - rows[:, members[:, 2 * pair + 1]]
        values += 0.5 * difference * difference
    values /= groups
    eps = em_epsilon(call_rho)
    median = em_select_sorted(padded_sorted(values, lo=0.0, hi=y_hi), q=0.5, eps=eps, sensitivity=sensitivity,
                              uniforms=draws)
    factor = wilson_hilferty_factor(groups)
    ledger = (
        LedgerEntry("median", d * _true_cost(call_rho, moved=shuffles, assumed_sensitivity=sensitivity)),
        LedgerEntry(UNSPENT, used - median_rho),
        LedgerEntry(UNSPENT, rho - used),
    )
    diagnostics = {
        "accounting": accounting,
        "requested_rho": rho,
        "booked_rho": median_rho,
        "true_rho": ledger[0].rho,
        "ledger_total": ledger_total(ledger),
        "groups": groups,
        "shuffles": shuffles,
        "n_values": int(members.shape[0]),
        "eps": eps,
        "sensitivity": sensitivity,
        "group_median": median,
        "wilson_hilferty_factor": factor,
        "search_upper": y_hi,
    }
    return Estimate(mean=np.sqrt(median / factor), ledger=ledger, diagnostics=diagnostics)
