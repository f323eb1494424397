"""Private per-column variance estimation: the estimators of PLAN's Table 2 (DESIGN.md 5.6).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", Appendix D.
Both functions take ``x`` (n x d) and estimate the variance of every column. They return an
:class:`~mechanisms.accounting.Estimate` whose ``.mean`` field holds the per-column
VARIANCE estimates (shape (d,)), not a mean: the field name is shared with the mean
estimators so that the same experiment engine can run them. ``diagnostics["std_estimate"]``
holds their square roots.

Accounting is exact rho-zCDP under swap neighbours: ``rho`` is the budget for all d columns
together. One person touches every column, so each column's quantile searches get rho / d
between them; each is an exponential-mechanism quantile (DESIGN.md 5.1) with utility
sensitivity 1, which is rho'-zCDP with eps = sqrt(8 rho'). The ledger sums to rho.
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ._fast.pairs import group_pairs, group_sums  # Algorithm 2, steps 3-4 (shared with PLAN's step 3)
from ._layout import transposed_copy
from ._validation import as_real, check_bounds, check_data, check_generator, check_positive_int, check_step_budgets
from .accounting import Estimate, LedgerEntry, check_rho, ledger_total, split_budget
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
    data = check_data(x)
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
    y ~ sigma^2 chi-square_k, so, as in Table 2 and the variance step of PLAN (DESIGN.md 5.2
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
    data = check_data(x)
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
