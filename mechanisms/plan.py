"""PLAN, Gaussian instantiation, and its relatives (DESIGN.md 5.0, 5.2, 5.3).

Aumüller, Lebeda, Nelson, Pagh, "PLAN: Variance-Aware Private Mean Estimation", Algorithm 1
with the parameters of the published Gaussian figures. Accounting:

* ``accounting="exact"`` (default): swap neighbours, exponential-mechanism sensitivity 1,
  no stacked copies. The ledger sums to rho.
* ``accounting="published"``: reproduces the published code's budget use: the centre and
  variance steps run on three shifted copies of every row with rho / 3 each, and the
  exponential mechanism is calibrated for sensitivity max(q, 1 - q). The ledger records
  what each step really costs, (used rho) * (true sensitivity / assumed sensitivity)^2,
  so it sums to more than rho (about 3.75 rho with the defaults); ``diagnostics["true_rho"]``
  is that sum.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import (
    MAX_MAGNITUDE,
    check_bounds,
    check_choice,
    check_data,
    check_fraction,
    check_generator,
    check_positive,
    check_positive_int,
    check_search_steps,
    check_step_budgets,
    check_work_size,
)
from ._layout import WORK_ARRAY, SharedSample, Workspace, transposed_of
from .accounting import UNSPENT, Estimate, LedgerEntry, check_rho, ledger_total
from .quantiles import (
    EMDraws,
    binary_search_sorted,
    block_rows,
    em_epsilon,
    em_select_regions,
    em_select_stack,
    padded_sorted,
    sort_padded,
    stack_is_merged,
    stacked_sorted,
)

ACCOUNTINGS = ("exact", "published")
QUANTILES = ("exponential", "binary_search")
_PUBLISHED_COPIES = 3  # the published code stacked (x + spread, x, x - spread)
_TINY = 1e-30
_MIN_BETA = 1e-300
_SELECT_BATCH_BYTES = 32 << 20  # rows answered together by one sampler call (see _coordinate_steps)


@dataclass(frozen=True)
class _QuantileRule:
    """How a PrivQuantile call is made and what it truly costs under swap neighbours."""

    method: str
    published: bool
    steps: int

    def assumed_sensitivity(self, q: float) -> float:
        if self.published and self.method == "exponential":
            return max(q, 1.0 - q)
        return 1.0

    def true_cost(self, used_rho: float, *, q: float, copies: int) -> float:
        """rho spent by a call calibrated for ``assumed_sensitivity`` when one person moves
        the utility (or count) by ``copies``: zCDP cost scales with the sensitivity squared."""
        return used_rho * (copies / self.assumed_sensitivity(q)) ** 2

    def draw(self, rng: np.random.Generator, queries: int):
        if self.method == "exponential":
            return EMDraws.draw(rng, queries)
        return rng.standard_normal((self.steps, queries))

    def part(self, draws, queries):
        """The draws of some of the queries (a slice)."""
        return draws[queries] if self.method == "exponential" else draws[:, queries]

    def select(self, rows, *, q, rho, lo, hi, draws):
        """The private q-quantile of every row of ``rows`` (clipped to [lo, hi]), rho per row."""
        return self.select_sorted(padded_sorted(rows, lo=lo, hi=hi), q=q, rho=rho, lo=lo, hi=hi, draws=draws)

    def select_sorted(self, edges, *, q, rho, lo, hi, draws, workspace=None):
        """:meth:`select` given the rows' padded sorted values (:func:`padded_sorted`)."""
        if self.method == "exponential":
            return em_select_regions(
                edges, q=q, eps=em_epsilon(rho), sensitivity=self.assumed_sensitivity(q), draws=draws,
                workspace=workspace,
            )
        return binary_search_sorted(
            edges[:, 1:-1], target_rank=q * (edges.shape[1] - 2), rho=rho, lo=lo, hi=hi, steps=self.steps, noise=draws
        )

    def merges_stack(self, n: int, *, copies: int, rho: float) -> bool:
        """Whether the median of a stack of ``copies`` x n values needs it merged; if not, it is
        drawn by :meth:`select_stack` from the sorted rows."""
        if self.method != "exponential":
            return True
        return stack_is_merged(n, copies, eps=em_epsilon(rho), sensitivity=self.assumed_sensitivity(0.5))

    def select_stack(self, sorted_rows, shifts, *, q, rho, lo, hi, draws, workspace):
        """:meth:`select` on the rows' stacked copies clip(x + shift, lo, hi), given the rows
        sorted (not clipped), where :meth:`merges_stack` is False."""
        return em_select_stack(
            sorted_rows, shifts, lo=lo, hi=hi, q=q, eps=em_epsilon(rho), sensitivity=self.assumed_sensitivity(q),
            draws=draws, workspace=workspace,
        )


def _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread):
    data = check_data(x)
    rule = _QuantileRule(
        method=check_choice(quantile, "quantile", QUANTILES),
        published=check_choice(accounting, "accounting", ACCOUNTINGS) == "published",
        steps=check_search_steps(search_steps, "search_steps"),
    )
    if rule.method == "binary_search":  # the centre and variance steps draw (steps x d) normals each
        check_work_size(2 * 8 * rule.steps * data.shape[1], f"search_steps={search_steps!r}",
                        f"the noise of {rule.steps} search steps for each of d={data.shape[1]} coordinates")
    check_positive(spread, "spread")
    return data, check_rho(rho), check_bounds(bounds), check_generator(rng), rule


def _check_ranges(*, mode, lo, hi, d, n, rho, rho_3, p, beta, max_std_distance, std_max):
    """ValueError when steps 4-6 could leave float64 on some data: the clip threshold C is at most
    the search's upper end (noscale: (hi - lo) sqrt(d); else sqrt(ln d ln(1 / beta) sum std^e),
    e = 2p / (p + 2), std <= ``std_max``), step 6 computes its noise std as sqrt(2 C^2 / rho_3),
    and the estimate is centre + (clipped mean + noise) / b with the scale b >=
    (2 max_std_distance std_max)^(-2 / (p + 2)). Checked in logarithms, on the request alone (no
    data), so that every call that passes stays finite and nothing in the mechanism changes."""
    if mode == "noscale":
        log_c, log_inverse_scale, blame = math.log(hi - lo) + 0.5 * math.log(d), 0.0, ""
    else:
        log_std = math.log(max(std_max, _TINY))
        # C^2 as the body computes it (finite: std <= 1e100, e < 2), floored as there; ln(1 / beta) may be 0
        squared = math.log(max(d, 2)) * math.log(1.0 / beta) * d * math.exp(2.0 * p / (p + 2.0) * log_std)
        log_c = 0.5 * math.log(max(squared, _TINY * _TINY))
        log_delta = math.log(2.0) + math.log(max_std_distance) + log_std  # delta + its mean (regularise)
        log_inverse_scale = 2.0 / (p + 2.0) * max(log_delta, math.log(_TINY))
        blame = f", p={p!r}, max_std_distance={max_std_distance!r}, beta={beta!r} and std up to {std_max:.3g}"
    log_variance = math.log(2.0) + 2.0 * log_c - math.log(rho_3)  # 2 C^2 / rho_3
    # |estimate - centre| <= (C + 40 noise std) / b, the noise std being sqrt(2 C^2 / rho_3) / n
    log_error = max(log_c, math.log(40.0) + 0.5 * log_variance - math.log(n)) + math.log(2.0) + log_inverse_scale
    parts = {
        "max_std_distance * std (delta)": log_delta if mode != "noscale" else -math.inf,
        "the noise variance 2 C^2 / rho_3 of step 6": log_variance,
        "the estimate": log_error,
    }
    too_large = [f"{name} up to 1e+{value / math.log(10.0):.0f}" for name, value in parts.items()
                 if value > math.log(1e300)]
    if too_large:
        raise ValueError(
            f"rho={rho!r} with bounds=({lo!r}, {hi!r}), d={d}{blame}: {'; '.join(too_large)} would leave float64 "
            f"(the clip threshold C reaches 1e+{log_c / math.log(10.0):.0f}); use a larger rho or rescale the data"
        )


def _recall(shared, key, shape):
    """(the array the :class:`SharedSample` ``shared`` keeps under ``key``, else None; if none is
    kept, an empty array of ``shape`` to record it into when it is worth recording
    (:meth:`SharedSample.worth_recording`) and fits, else None). (None, None) without a sample."""
    if shared is None:
        return None, None
    kept = shared.kept(key)
    if kept is not None:
        return kept, None
    worth = shared.worth_recording(key) and shared.has_room(8 * math.prod(shape))
    return None, (shared.buffer(shape) if worth else None)


def _clipped(edges, *, lo, hi, workspace):
    """Padded sorted rows clipped to [lo, hi] (:func:`padded_sorted`): ``edges`` itself if
    their ends are inside, else a clipped copy (clipping keeps them sorted)."""
    if edges[:, 1].min() >= lo and edges[:, -2].max() <= hi:
        return edges
    return np.clip(edges, lo, hi, out=workspace.get("clipped", edges.shape))


def stack_members(index, n: int, shifts):
    """Positions ``index`` of the stacked copies x + shift (copy c at c n .. c n + n - 1) as
    (position in x, shift added, or None when there is one unshifted copy)."""
    if len(shifts) == 1 and shifts[0] == 0.0:
        return index, None
    return np.ascontiguousarray(index % n), np.asarray(shifts, dtype=np.float64)[index // n]


def wilson_hilferty_factor(groups: int) -> float:
    """(1 - 2/(9k))^3: median of chi-square_k / k by Wilson-Hilferty (PLAN Section 7, Appendix D.2).

    A sum of k terms (a - b)^2 / 2 of Gaussian data is sigma^2 chi-square_k, so dividing its
    median by k and by this factor estimates sigma^2 (5.2 step 3).
    """
    return (1.0 - 2.0 / (9.0 * groups)) ** 3


def group_pairs(rng, rows: int, groups: int):
    """Algorithm 2, step 3: shuffle ``rows`` row indices into floor(rows / 2k) groups of 2k
    (a leftover is dropped), k consecutive pairs (a, b) per group. Returns the index arrays
    (first, second) of the pairs, group by group."""
    n_groups = rows // (2 * groups)
    pairs = rng.permutation(rows)[: n_groups * 2 * groups].reshape(-1, 2)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def group_sums(rows, first, second, *, groups, first_shift=None, second_shift=None, bounds=None, out=None,
               workspace=None):
    """Algorithm 2, step 4, for every row of ``rows`` (coordinates x values): per group,
    y = sum over its k pairs (a, b) of (a - b)^2 / 2, where a = clip(row[first] + first_shift)
    and b likewise (:func:`stack_members`; no shift if None, no clip unless ``bounds`` =
    (lo, hi)). Values in [lo, hi] give y in [0, k (hi - lo)^2 / 2]. ``rows`` and ``out`` may be
    views whose rows are not adjacent (padded edges); without ``out`` the result may live in
    ``workspace``."""
    workspace = workspace or Workspace()
    width, pairs = rows.shape[0], first.size
    out = workspace.get("sums", (width, pairs // groups)) if out is None else out
    terms = out if groups == 1 else workspace.get("terms", (width, pairs))
    other = workspace.get("second", (pairs,))
    # Row by row: np.take along an axis of a view copies it first. The indices come from
    # group_pairs, so they are in range: mode="clip" spares numpy the buffered copy it makes
    # of ``out`` under the default mode="raise".
    for row, target in zip(rows, terms):
        for values, index, shift in ((target, first, first_shift), (other, second, second_shift)):
            np.take(row, index, out=values, mode="clip")
            if shift is not None:
                values += shift
            if bounds is not None:
                np.clip(values, *bounds, out=values)
        target -= other
    np.square(terms, out=terms)
    if groups > 1:
        terms.reshape(width, -1, groups).sum(axis=2, out=out)
    out *= 0.5
    return out


def _coordinate_steps(x, transposed, *, shape, lo, hi, rng, rule, spread, centre_rho, variance_rho, groups):
    """Private centre (5.2 steps 1-2) and, if ``variance_rho``, variance (step 3) per coordinate.

    ``x`` is what the mechanism was given (n x d, ``shape``); ``transposed()`` returns the data
    transposed (d x n), and is called only if the coordinates must be sorted. A
    :class:`SharedSample` keeps the sorted coordinates (padded with lo and hi, not clipped) for
    every PLAN variant, and the merged published stack when the quantile merges it
    (:meth:`_QuantileRule.merges_stack`). Under published accounting the quantiles see the stack
    (x + spread, x, x - spread) clipped to the universe, and each call gets a third of the
    booked ``centre_rho`` / ``variance_rho``, as the published code did. Returns (centre, raw
    variance or None).
    """
    shared = x if isinstance(x, SharedSample) else None
    n, d = shape
    shifts = (spread, 0.0, -spread) if rule.published else (0.0,)
    copies = len(shifts)
    merge = rule.published and rule.merges_stack(n, copies=copies, rho=centre_rho / copies)
    stack_key, coordinates_key = ("merged_stack", spread, lo, hi), ("sorted_coordinates", lo, hi)
    stack = shared.kept(stack_key) if merge and shared is not None else None
    coordinates, coordinates_record = (None, None)
    if variance_rho or stack is None:
        coordinates, coordinates_record = _recall(shared, coordinates_key, (d, n + 2))
    stack_record = _recall(shared, stack_key, (d, copies * n + 2))[1] if merge and stack is None else None
    xt = transposed() if (variance_rho or stack is None) and coordinates is None else None

    centre_draws = rule.draw(rng, d)
    if variance_rho:
        # Algorithm 2: groups of 2k shuffled rows (a leftover is dropped), k pairs (a, b) each.
        first, second = group_pairs(rng, copies * n, groups)
        variance_draws = rule.draw(rng, d)
        (first, first_shift), (second, second_shift) = (stack_members(i, n, shifts) for i in (first, second))
        # (a - b)^2 / 2 of values inside [lo, hi] never leaves [0, (hi - lo)^2 / 2]
        variance_hi = groups * (hi - lo) ** 2 / 2.0
    centre = np.empty(d)
    variance = np.empty(d) if variance_rho else None
    centre_space, variance_space = Workspace(), Workspace()
    pairs = first.size // groups if variance_rho else 0
    step = block_rows(copies * n)
    # Rows are sorted a cache block at a time, but answered a batch at a time: the samplers'
    # per-call work is then shared by many rows (about 13x fewer calls at n = 100000).
    batch = max(step, _SELECT_BATCH_BYTES // (8 * (max(copies * n if merge else n, pairs) + 2)))
    for batch_start in range(0, d, batch):
        rows = slice(batch_start, min(batch_start + batch, d))
        count = rows.stop - rows.start
        edges = coordinates[rows] if coordinates is not None else None
        if edges is None and xt is not None:
            edges = coordinates_record[rows] if coordinates_record is not None else centre_space.get(
                "sorted", (count, n + 2))
        stack_edges = None
        if merge:
            stack_edges = stack[rows] if stack is not None else (
                stack_record[rows] if stack_record is not None else centre_space.get("stack", (count, copies * n + 2)))
        sums = variance_space.get("edges", (count, pairs + 2)) if variance_rho else None
        for start in range(0, count, step):
            block = slice(start, min(start + step, count))
            if coordinates is None and xt is not None:
                edges[block, 1:-1] = xt[rows.start + block.start:rows.start + block.stop]
                sort_padded(edges[block], lo=lo, hi=hi)
            if merge and stack is None:
                stacked_sorted(edges[block, 1:-1], shifts, lo=lo, hi=hi, out=stack_edges[block])
            if variance_rho:
                values = edges[block, 1:-1]  # sorted, not clipped
                # The pairs are a uniformly random matching of the rows, so taking them from the
                # sorted rows (still in cache) gives the same distribution as from the data's order.
                # Rounding is monotone: if the shifted extremes stay inside, nothing needs clipping.
                inside = lo <= values[:, 0].min() + min(shifts) and values[:, -1].max() + max(shifts) <= hi
                group_sums(values, first, second, groups=groups, first_shift=first_shift, second_shift=second_shift,
                           bounds=None if inside else (lo, hi), out=sums[block, 1:-1], workspace=variance_space)
                sort_padded(sums[block], lo=0.0, hi=variance_hi)
        centre_draws_batch = rule.part(centre_draws, rows)
        if merge:
            centre[rows] = rule.select_sorted(stack_edges, q=0.5, rho=centre_rho / copies, lo=lo, hi=hi,
                                              draws=centre_draws_batch, workspace=centre_space)
        elif rule.published:
            centre[rows] = rule.select_stack(edges[:, 1:-1], shifts, q=0.5, rho=centre_rho / copies, lo=lo, hi=hi,
                                             draws=centre_draws_batch, workspace=centre_space)
        else:
            centre[rows] = rule.select_sorted(_clipped(edges, lo=lo, hi=hi, workspace=centre_space), q=0.5,
                                              rho=centre_rho, lo=lo, hi=hi, draws=centre_draws_batch,
                                              workspace=centre_space)
        if variance_rho:
            variance[rows] = rule.select_sorted(
                sums, q=0.5, rho=variance_rho / copies, lo=0.0, hi=variance_hi,
                draws=rule.part(variance_draws, rows), workspace=variance_space,
            ) / groups
    for key, record in ((coordinates_key, coordinates_record), (stack_key, stack_record)):
        if record is not None:
            shared.keep(key, record)
    return centre, variance


def _clip_threshold_fraction(*, n, hi_minus_lo, rho_k, beta):
    """k of 5.2 step 5: the share of rows allowed above the clip threshold, in (0, 1)."""
    # T = ln(universe width); floored at 1 so that ln(T / beta) stays defined for tiny universes.
    t = max(math.log(hi_minus_lo), 1.0)
    k = (math.sqrt(n) + math.sqrt(t / 2.0 * math.log(t / beta) / rho_k)) / n
    return min(max(k, 1.0 / (2.0 * n)), 1.0 - 1.0 / (2.0 * n))


def gaussian_clipped_mean(zt, *, clip, rho, rng, norms=None):
    """Clip every column of ``zt`` (d x n) to l2 norm ``clip``, average, add Gaussian noise.

    Replacing one column moves the clipped sum by at most 2 C, so the noise on the mean is
    N(0, 2 C^2 / rho) / n per coordinate (5.2 step 6). ``norms``: the columns' norms, if the
    caller has them. Returns (noisy mean, noise std, fraction of columns clipped).
    """
    n = zt.shape[1]
    norms = column_norms(zt) if norms is None else norms
    weights = np.minimum(1.0, clip / np.maximum(norms, _TINY))
    noise_std = math.sqrt(2.0 * clip * clip / rho) / n
    noisy = zt @ weights / n + noise_std * rng.standard_normal(zt.shape[0])
    return noisy, noise_std, float(np.mean(norms > clip))


def column_norms(zt):
    """The l2 norm of every column of ``zt`` (d x n)."""
    return np.sqrt(np.einsum("ij,ij->j", zt, zt))


def _plan(x, *, rho, bounds, rng, mode, oracle_std, p, accounting, quantile, pre_share, centre_share,
          topk_share, groups, max_std_distance, beta, wilson_hilferty, regularise, spread, search_steps):
    groups = check_positive_int(groups, "groups")
    data, rho, (lo, hi), rng, rule = _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread)
    p = check_positive(p, "p")
    pre_share = check_fraction(pre_share, "pre_share", closed_high=False)
    # PLAN with estimated variances needs some budget left for the variance step.
    centre_share = check_fraction(centre_share, "centre_share", closed_high=mode != "estimated")
    topk_share = check_fraction(topk_share, "topk_share", closed_high=False)
    max_std_distance = check_positive(max_std_distance, "max_std_distance")
    beta = check_fraction(beta, "beta", closed_high=False)
    if beta < _MIN_BETA:  # ln(1 / beta) and ln(T / beta) of the clip threshold must stay finite
        raise ValueError(f"beta must be at least {_MIN_BETA:g} (1 / beta overflows float64 below), got beta={beta!r}")
    n, d = data.shape
    copies = _PUBLISHED_COPIES if rule.published else 1
    if mode == "estimated" and copies * n < 2 * groups:
        raise ValueError(f"x needs at least {2 * groups} rows for the variance step with groups={groups}, got n={n}")
    # the step budgets of the body below (per coordinate and quantile call), computed as there
    rho_pre, rho_main = pre_share * rho, rho - pre_share * rho
    shares = {"pre_share": pre_share, "topk_share": topk_share} | ({} if mode == "noscale" else {
        "centre_share": centre_share})
    check_step_budgets(
        f"rho={rho!r} with {', '.join(f'{k}={v!r}' for k, v in shares.items())} and d={d}",
        centre=(1.0 if mode == "noscale" else centre_share) * rho_pre / d / copies,
        **({"variance": (1.0 - centre_share) * rho_pre / d / copies} if mode == "estimated" else {}),
        clip_threshold=topk_share * rho_main, gaussian_noise=rho_main - topk_share * rho_main,
    )
    if mode == "estimated":  # the variance search runs on [0, groups (hi - lo)^2 / 2], then / groups, / factor
        std_max = (hi - lo) * math.sqrt(0.5 / (wilson_hilferty_factor(groups) if wilson_hilferty else 1.0))
    else:
        std_max = float(np.max(oracle_std)) if mode == "oracle" else 0.0
    _check_ranges(mode=mode, lo=lo, hi=hi, d=d, n=n, rho=rho, rho_3=rho_main - topk_share * rho_main, p=p, beta=beta,
                  max_std_distance=max_std_distance, std_max=std_max)
    xt = transposed_of(x, data)  # first: kept before the sorted coordinates check whether they still fit

    # Step 1: budgets. rho_pre / d per coordinate, split between centre and variance.
    rho_pre = pre_share * rho
    if mode == "noscale":
        centre_share = 1.0
    centre_rho = centre_share * rho_pre / d
    variance_rho = (1.0 - centre_share) * rho_pre / d
    centre, raw_variance = _coordinate_steps(
        x, lambda: xt, shape=(n, d), lo=lo, hi=hi, rng=rng, rule=rule, spread=spread,
        centre_rho=centre_rho, variance_rho=variance_rho if mode == "estimated" else 0.0, groups=groups,
    )
    ledger = [LedgerEntry("centre", d * rule.true_cost(centre_rho / copies, q=0.5, copies=copies))]

    # Steps 3-4: the scale b = Delta^(-2 / (p + 2)) (Delta^(-1/2) for p = 2).
    if mode == "noscale":
        std = None
        scale = np.ones(d)
        norm_hi = (hi - lo) * math.sqrt(d)  # Algorithm 1, line 6: the whole universe
    else:
        if mode == "estimated":
            if wilson_hilferty:
                raw_variance = raw_variance / wilson_hilferty_factor(groups)
            std = np.sqrt(raw_variance)
            ledger.append(LedgerEntry("variance", d * rule.true_cost(variance_rho / copies, q=0.5, copies=copies)))
        else:
            std = oracle_std
            if variance_rho > 0:
                ledger.append(LedgerEntry(UNSPENT, d * variance_rho))  # published: the oracle leaves it unused
        delta = np.maximum(max_std_distance * std, _TINY)
        if regularise:
            delta = delta + delta.sum() / d
        scale = delta ** (-2.0 / (p + 2.0))
        norm_hi = math.sqrt(math.log(max(d, 2)) * math.log(1.0 / beta) * np.sum(std ** (2.0 * p / (p + 2.0))))
    norm_hi = max(norm_hi, _TINY)

    # Step 5: clip threshold C, a private (1 - k)-quantile of the scaled norms.
    rho_main = rho - rho_pre
    rho_k = topk_share * rho_main
    k_fraction = _clip_threshold_fraction(n=n, hi_minus_lo=hi - lo, rho_k=rho_k, beta=beta)
    q_norm = 1.0 - k_fraction
    # z = (x - centre) * b: in place, or in the shared sample's work array if xt is its kept copy
    zt = np.subtract(xt, centre[:, None], out=xt if xt.flags.writeable else x.scratch(WORK_ARRAY, xt.shape))
    zt *= scale[:, None]
    norm_draws = rule.draw(rng, 1)
    norms = column_norms(zt)
    clip = float(rule.select(norms[None, :], q=q_norm, rho=rho_k, lo=0.0, hi=norm_hi, draws=norm_draws)[0])
    ledger.append(LedgerEntry("clip_threshold", rule.true_cost(rho_k, q=q_norm, copies=1)))

    # Step 6: Gaussian mechanism on the clipped scaled rows, then undo the scaling.
    rho_3 = rho_main - rho_k
    noisy, noise_std, fraction_clipped = gaussian_clipped_mean(zt, clip=clip, rho=rho_3, rng=rng, norms=norms)
    ledger.append(LedgerEntry("gaussian_noise", rho_3))
    ledger = tuple(ledger)
    true_rho = ledger_total(ledger) - sum(e.rho for e in ledger if e.step == UNSPENT)
    diagnostics = {
        "accounting": accounting,
        "requested_rho": rho,
        "true_rho": true_rho,
        "ledger_total": ledger_total(ledger),
        "clip_threshold": clip,
        "clip_search_upper": norm_hi,
        "fraction_clipped": fraction_clipped,
        "noise_std": noise_std,
        "centre": centre,
        "scale": scale,
    }
    if std is not None:
        diagnostics["std_estimate"] = std
    return Estimate(mean=noisy / scale + centre, ledger=ledger, diagnostics=diagnostics)


def plan_gaussian(x, *, rho, bounds, rng, p=2.0, accounting="exact", quantile="exponential", pre_share=0.25,
                  centre_share=0.25, topk_share=0.25, groups=1, max_std_distance=2.0, beta=0.1,
                  wilson_hilferty=True, regularise=True, spread=0.1, search_steps=20) -> Estimate:
    """PLAN for l_p error with privately estimated variances (DESIGN.md 5.2, Algorithm 1).

    ``x`` (n x d) with every coordinate in ``bounds=(lo, hi)`` (values outside are clipped
    by the quantile steps; the clipping of step 6 bounds the sensitivity whatever the
    data). Defaults are the published Gaussian parameters: a quarter of rho for centre and
    variance (a quarter of that for the centre), a quarter of the rest for the clip
    threshold, groups k = 1, max_std_distance 2, beta 0.1, Wilson-Hilferty correction and
    regularisation on. ``quantile`` picks the exponential mechanism or private binary search
    (``search_steps`` steps); ``accounting`` is "exact" (rho-zCDP) or "published" (the
    paper's budget use, see the module docstring). ``spread`` only applies to published
    accounting.
    """
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="estimated", oracle_std=None, p=p, accounting=accounting,
                 quantile=quantile, pre_share=pre_share, centre_share=centre_share, topk_share=topk_share,
                 groups=groups, max_std_distance=max_std_distance, beta=beta, wilson_hilferty=wilson_hilferty,
                 regularise=regularise, spread=spread, search_steps=search_steps)


def plan_noscale(x, *, rho, bounds, rng, accounting="exact", quantile="exponential", pre_share=0.25,
                 topk_share=0.25, beta=0.1, spread=0.1, search_steps=20) -> Estimate:
    """PLAN without scaling (DESIGN.md 5.3): all of rho_pre on the centre, b = 1, and the
    clip threshold searched over the whole universe [0, (hi - lo) sqrt(d)]."""
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="noscale", oracle_std=None, p=2.0, accounting=accounting,
                 quantile=quantile, pre_share=pre_share, centre_share=1.0, topk_share=topk_share, groups=1,
                 max_std_distance=1.0, beta=beta, wilson_hilferty=False, regularise=False, spread=spread,
                 search_steps=search_steps)


def plan_oracle(x, *, rho, bounds, rng, std, p=2.0, accounting="exact", quantile="exponential", pre_share=0.25,
                centre_share=0.25, topk_share=0.25, max_std_distance=2.0, beta=0.1, regularise=True, spread=0.1,
                search_steps=20) -> Estimate:
    """PLAN with known per-coordinate standard deviations ``std`` (DESIGN.md 5.3).

    The variance share of rho_pre is left unspent, as published; the ledger records it as
    "unspent", so it still sums to rho under exact accounting.
    """
    data = check_data(x)
    std_arr = np.asarray(std, dtype=np.float64)
    if std_arr.shape != (data.shape[1],):
        raise ValueError(f"std must have one value per column of x ({data.shape[1]}), got std with shape {std_arr.shape}")
    bad = np.flatnonzero(~np.isfinite(std_arr) | (std_arr < 0))
    if bad.size:
        raise ValueError(f"std must be finite and >= 0, got std[{bad[0]}]={std_arr[bad[0]]}")
    bad = np.flatnonzero(std_arr > MAX_MAGNITUDE)
    if bad.size:
        raise ValueError(f"std must be at most {MAX_MAGNITUDE:g} (as values and bounds: beyond, the scaling overflows "
                         f"float64), got std[{bad[0]}]={std_arr[bad[0]]!r}; rescale the data")
    return _plan(x, rho=rho, bounds=bounds, rng=rng, mode="oracle", oracle_std=std_arr, p=p,
                 accounting=accounting, quantile=quantile, pre_share=pre_share, centre_share=centre_share,
                 topk_share=topk_share, groups=1, max_std_distance=max_std_distance, beta=beta,
                 wilson_hilferty=False, regularise=regularise, spread=spread, search_steps=search_steps)


def coordinate_median(x, *, rho, bounds, rng, budget_share=1.0, accounting="exact", quantile="exponential",
                      spread=0.1, search_steps=20) -> Estimate:
    """Private coordinate-wise median (5.2 step 2 alone) spending ``budget_share * rho``.

    With ``budget_share=0.25, accounting="published"`` it reproduces the published
    "PLAN-NOSCALE" Gaussian curve (DESIGN.md 5.3 errata).
    """
    data, rho, (lo, hi), rng, rule = _check_common(x, rho, bounds, rng, accounting, quantile, search_steps, spread)
    budget_share = check_fraction(budget_share, "budget_share")
    d = data.shape[1]
    copies = _PUBLISHED_COPIES if rule.published else 1
    check_step_budgets(f"rho={rho!r} with budget_share={budget_share!r} and d={d}",
                       centre=budget_share * rho / d / copies)
    centre_rho = budget_share * rho / d
    centre, _ = _coordinate_steps(
        x, lambda: transposed_of(x, data), shape=data.shape, lo=lo, hi=hi, rng=rng, rule=rule, spread=spread,
        centre_rho=centre_rho, variance_rho=0.0, groups=1,
    )
    ledger = [LedgerEntry("centre", d * rule.true_cost(centre_rho / copies, q=0.5, copies=copies))]
    if budget_share < 1.0:
        ledger.append(LedgerEntry(UNSPENT, (1.0 - budget_share) * rho))
    ledger = tuple(ledger)
    diagnostics = {
        "accounting": accounting,
        "requested_rho": rho,
        "true_rho": ledger[0].rho,
        "ledger_total": ledger_total(ledger),
    }
    return Estimate(mean=centre, ledger=ledger, diagnostics=diagnostics)
