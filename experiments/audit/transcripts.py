"""A privacy audit of whole PLAN through everything a run releases (docs/design.md §5.8, §5.2, §5.0).

experiments/audit/audits.py audits whole PLAN through its estimate alone, and under published
accounting finds nothing: its excess spending is in the centre and variance steps, which the
estimate mostly cancels. But PLAN releases its centre, its std estimate and its clip threshold
too (:func:`mechanisms.plan_transcript.plan_transcripts` draws them), and a rho-zCDP claim covers all of it.
This module audits that transcript with :func:`mechanisms.audit.audit_zcdp`.

**The statistic** (:class:`TranscriptLogLikelihoodRatio`): the log-likelihood ratio of the pair,
ln p_x(transcript) - ln p_x'(transcript), summed over the releases, each release's density
given the earlier ones, from the distributions PLAN really draws from (whatever it books):

* centre (step 2): the exponential mechanism's density (docs/design.md §5.1, :func:`em_log_density`):
  interval weights on the values the step sees (the stacked copies under published accounting),
  with the parameter and the assumed sensitivity the step runs with;
* std (step 3): the median of the pair statistics, a mixture over the random shuffle. Its
  density is estimated once per dataset, as the average of the exponential mechanism's
  densities over 20,000 shuffles (:class:`MixtureDensity`). That average is a fixed function of
  the release, so the statistic stays a function of the transcript (post-processing: the test
  stays sound) and the estimate's error only costs power. The std is a monotone function of the
  median, the same under x and x', so its Jacobian cancels: the ratio is taken on the median;
* clip threshold (step 5): the exponential mechanism's density on the norms of the scaled rows,
  given the released centre and std (which fix the scale and the search's upper end);
* estimate (step 6): the Gaussian density of the clipped mean plus noise, given centre, std and
  clip threshold.

The densities are checked by the likelihood-ratio identity E_x[p_x' / p_x] = 1 for every step
(tests/experiments/test_transcripts.py). A threshold on the log-likelihood ratio is the most
powerful rejection set (Neyman-Pearson), so it is the statistic the test's Bernoulli sees best.

**The pair** (:data:`PAIR_X`, :data:`PAIR_X_NEIGHBOUR`; n = 100, d = 1, universe [-1, 1]): 77
values evenly in [-0.2, 0.2] (the core), a shell of 11 values at -0.24, -0.245, ..., -0.29 and
11 at 0.24, ..., 0.29, and the person at -0.23 (x) or at 1 (x'). Each step leaks most when the
person crosses the region its output falls in, from below to above (the exponential
mechanism's loss is then +- the person's rank move on both sides of the target: randomised
response, which attains the step's zCDP bound):

* centre: the person moves from rank 11 (below the core, far below the median) to the top, so
  every interval around the median moves 3 stacked ranks (1 under exact accounting). Measured
  (KL divergence of the release given the earlier ones, 10^5 runs, published accounting,
  rho = 1/4): 0.182 of the step's 0.1875;
* clip threshold (the 0.85-quantile of the norms, target rank 85): the shell holds ranks
  78-99, so the threshold falls among shell norms, and the person's norm 0.23 is just below all
  of them: every interval the threshold can fall in moves one rank. 0.053 of 0.065;
* estimate: the person's scaled value at -0.23 is just inside the clip threshold (about the
  shell's norm), at 1 it is clipped to +C: a shift of nearly 2 C, the most one swap can make.
  0.127 of 0.141 (the Gaussian step's rho_3);
* std: nothing moves a person's pair statistics from below the median to above it whatever the
  partner: they depend on a partner drawn at random (and of two random points in one dimension
  at most half lie on opposite sides of a third), so the shuffle hides most of this step's
  excess. 0.015 of its 0.5625.

In all 0.377 of the 0.955 that published PLAN spends at rho = 1/4 (10^6 runs, five seeds:
0.3765-0.3779), against 0.287 on experiments/audit/audits.py's whole-PLAN pair (n = 100: 99 evenly in
[-0.2, 0.2], one person at -1 or +1), whose person never enters the clip threshold's region.
Other pairs measured (10^5 runs): the person at the edge of a uniform core 0.31; inside a
uniform, Gaussian or Cauchy-like core (centre 0.04-0.07, std up to 0.05) 0.17-0.20; n = 20 and
n = 50 variants 0.33-0.35; a core of half the width, or a dense middle, 0.35-0.37. Under exact
accounting the pair shows 0.165 of 0.25, 0.343 of 0.5 for the control with rho x 2 and 0.689 of
1 for rho x 4.

**What the test can see**: a threshold's Bernoulli keeps only part of a divergence. On this
pair the best one (plug-in rates of 10^5 runs) reaches about 1.04-1.06 rho under published
accounting at rho = 1/4 (1.12 rho at rho = 0.05, 0.95 rho at rho = 1), so published PLAN is only
just within reach of the claim rho, and about 1.16 rho for exact PLAN's control with rho x 2.
Measured results: the docstring of :func:`plan_transcript_setup`.
"""
from __future__ import annotations

import time

import numpy as np

from mechanisms.audit import audit_zcdp_samples, draw_statistics, projected_runs
from mechanisms.plan_transcript import PlanSteps, PlanTranscript, plan_transcripts
from mechanisms.quantiles import MIN_INTERVAL_WIDTH, interval_weights

_FLOOR = 1e-300  # densities below are taken as this (the statistic stays finite)
MIXTURE_SHUFFLES = 20_000  # shuffles of step 3 averaged for its density (module docstring)
MIXTURE_SEED = 20_241_126
STATISTIC_CHUNK = 50_000  # runs whose densities are computed together (memory: a few arrays of runs x n)
TRANSCRIPT_CHUNK = 100_000  # runs per mechanism call the audits use


def em_log_density(edges, values, *, q, eps, sensitivity) -> np.ndarray:
    """ln of the exponential mechanism's output density (docs/design.md §5.1) at ``values``.

    Interval i of the padded sorted ``edges`` is drawn with probability w_i / sum w (w from
    :func:`~mechanisms.quantiles.interval_weights`) and the output is uniform in it, so the
    density at a value inside interval i is w_i / width_i / sum w. ``edges`` is one row (m + 2,)
    for every value, or one row per value (k x (m + 2)). A value on an edge takes the interval
    that starts there; a zero-width interval's width counts as its floor 1e-30 (its outputs are
    an atom of mass w_i / sum w, drawn with negligible probability on the audited pairs)."""
    values = np.asarray(values, dtype=float)
    edges = np.asarray(edges, dtype=float)
    shared = edges.ndim == 1
    rows = edges[None, :] if shared else edges
    weights = interval_weights(rows, q=q, eps=eps, sensitivity=sensitivity)
    last = rows.shape[1] - 2
    if shared:
        index = np.clip(np.searchsorted(rows[0], values, side="right") - 1, 0, last)
        row = np.zeros_like(index)
    else:
        index = np.clip((rows[:, 1:-1] <= values[:, None]).sum(axis=1), 0, last)
        row = np.arange(rows.shape[0])
    width = np.maximum(rows[row, index + 1] - rows[row, index], MIN_INTERVAL_WIDTH)
    total = weights.sum(axis=1)[row]
    return np.log(np.maximum(weights[row, index] / width, _FLOOR)) - np.log(total)


class MixtureDensity:
    """The density of step 3's median (docs/design.md §5.2) on one dataset, a mixture over the
    shuffle: the average of the exponential mechanism's densities over ``shuffles`` shuffles drawn
    from ``rng`` (:meth:`mechanisms.plan_transcript.PlanSteps.permutations`), per coordinate. Each shuffle's
    density is a step function of the median (constant on each interval of its padded sorted pair
    statistics); the average is kept as a step function on the union of their edges."""

    def __init__(self, steps: PlanSteps, data, *, shuffles: int, rng):
        stats = steps.pair_statistics(np.asarray(data, dtype=float), steps.permutations(rng, shuffles))
        self.breaks, self.levels = [], []
        for j in range(steps.d):
            edges = np.empty((shuffles, stats.shape[2] + 2))
            edges[:, 1:-1] = np.sort(stats[:, j], axis=1)
            edges[:, 0], edges[:, -1] = 0.0, steps.variance_upper
            weights = interval_weights(edges, q=0.5, eps=steps.variance_eps, sensitivity=steps.variance_sensitivity)
            widths = edges[:, 1:] - edges[:, :-1]
            # zero-width intervals hold atoms, not density
            density = np.where(widths > 0, weights / np.maximum(widths, _FLOOR), 0.0)
            density /= weights.sum(axis=1, keepdims=True)
            # Each shuffle's density jumps by density_i - density_(i-1) at its edge i.
            jumps = np.diff(density, axis=1, prepend=0.0, append=0.0).ravel()
            at = edges.ravel()
            order = np.argsort(at, kind="stable")
            jumps, at = jumps[order], at[order]
            breaks, first = np.unique(at, return_index=True)
            last = np.append(first[1:], at.size) - 1  # each break's last jump
            # The level after each break, summed from the left, or from the right (minus the jumps
            # still to come), whichever has the smaller rounding bound (the sum of the magnitudes
            # added): the tails are then summed without the peaks' large jumps, which cancel.
            from_left = np.cumsum(jumps)[last]
            from_right = -(np.cumsum(jumps[::-1])[::-1][last] - jumps[last])
            size = np.abs(jumps)
            left_error = np.cumsum(size)[last]
            right_error = np.cumsum(size[::-1])[::-1][last] - size[last]
            level = np.where(left_error <= right_error, from_left, from_right)
            self.breaks.append(breaks)
            self.levels.append(np.maximum(level / shuffles, 0.0))

    def log_density(self, median, j=0) -> np.ndarray:
        """ln of the mixture density at ``median`` (step 3's quantile output, before dividing by
        the groups) of coordinate ``j`` (floored at 1e-300)."""
        breaks, levels = self.breaks[j], self.levels[j]
        index = np.clip(np.searchsorted(breaks, median, side="right") - 1, 0, breaks.size - 1)
        return np.log(np.maximum(levels[index], _FLOOR))


class TranscriptLogLikelihoodRatio:
    """The statistic of the module docstring: for a :class:`~mechanisms.plan_transcript.PlanTranscript` of R
    runs, ln p_x(run) - ln p_x'(run) for each run (R,), summed over the releases (docs/design.md
    §5.2 steps 2, 3, 5 and 6), each release's density given the earlier ones. Step 3's mixture
    densities are estimated at the first call for the transcript's steps (``shuffles`` shuffles
    from ``seed``) and kept."""

    def __init__(self, x, x_neighbour, *, shuffles=MIXTURE_SHUFFLES, seed=MIXTURE_SEED):
        self.data = (np.asarray(x, dtype=float), np.asarray(x_neighbour, dtype=float))
        if self.data[0].ndim != 2 or self.data[0].shape != self.data[1].shape:
            raise ValueError(f"x and x_neighbour must be n x d arrays of one shape, got {self.data[0].shape} "
                             f"and {self.data[1].shape}")
        self.shuffles, self.seed = shuffles, seed
        self._mixtures = {}

    def mixtures(self, steps: PlanSteps) -> tuple[MixtureDensity, MixtureDensity]:
        """Step 3's mixture densities on x and on x' for ``steps``."""
        if steps not in self._mixtures:
            self._mixtures[steps] = tuple(
                MixtureDensity(steps, data, shuffles=self.shuffles, rng=np.random.default_rng([self.seed, which]))
                for which, data in enumerate(self.data))
        return self._mixtures[steps]

    def log_densities(self, transcript: PlanTranscript, which: int) -> dict[str, np.ndarray]:
        """Each release's ln density under x (``which`` 0) or x' (1), given the earlier releases,
        per run: "centre", "variance", "clip" and "mean" (the last up to a term that x and x'
        share, so only differences mean something)."""
        steps, data = transcript.steps, self.data[which]
        if data.shape != (steps.n, steps.d):
            raise ValueError(f"the transcript is of n x d = {steps.n} x {steps.d} data, the pair of {data.shape}")
        mixture = self.mixtures(steps)[which]
        centre_edges = steps.centre_edges(data)
        out = {name: np.empty(transcript.runs) for name in ("centre", "variance", "clip", "mean")}
        for start in range(0, transcript.runs, STATISTIC_CHUNK):
            runs = slice(start, min(start + STATISTIC_CHUNK, transcript.runs))
            centre, std, clip = transcript.centre[runs], transcript.std[runs], transcript.clip[runs]
            out["centre"][runs] = sum(
                em_log_density(centre_edges[j], centre[:, j], q=0.5, eps=steps.centre_eps,
                               sensitivity=steps.centre_sensitivity) for j in range(steps.d))
            out["variance"][runs] = sum(mixture.log_density(transcript.variance[runs, j] * steps.groups, j)
                                        for j in range(steps.d))
            # Steps 4-5: the scaled rows given centre and std; the threshold's search on [0, U].
            scale = steps.scale(std)
            zt = (data.T[None] - centre[:, :, None]) * scale[:, :, None]
            norms = np.sqrt(np.einsum("rij,rij->rj", zt, zt))
            upper = steps.clip_upper(std)
            edges = np.empty((norms.shape[0], steps.n + 2))
            np.clip(norms, 0.0, upper[:, None], out=edges[:, 1:-1])
            edges[:, 1:-1].sort(axis=1)
            edges[:, 0], edges[:, -1] = 0.0, upper
            out["clip"][runs] = em_log_density(edges, clip, q=steps.clip_q, eps=steps.clip_eps,
                                               sensitivity=steps.clip_sensitivity)
            # Step 6: (estimate - centre) b is the clipped mean plus N(0, noise std^2) per coordinate.
            weights = np.minimum(1.0, clip[:, None] / np.maximum(norms, MIN_INTERVAL_WIDTH))
            clipped = np.einsum("rjn,rn->rj", zt, weights) / steps.n
            residual = ((transcript.mean[runs] - centre) * scale - clipped) / steps.noise_std(clip)[:, None]
            out["mean"][runs] = -0.5 * np.sum(residual * residual, axis=1)
        return out

    def steps(self, transcript: PlanTranscript) -> dict[str, np.ndarray]:
        """Each release's log-likelihood ratio per run, given the earlier releases."""
        first, second = self.log_densities(transcript, 0), self.log_densities(transcript, 1)
        return {name: first[name] - second[name] for name in first}

    def __call__(self, transcript: PlanTranscript) -> np.ndarray:
        return sum(self.steps(transcript).values())


# ---------------------------------------------------------------- the pair and the registry's setup

PAIR_BOUNDS = (-1.0, 1.0)
PAIR_CORE = np.linspace(-0.2, 0.2, 77)
PAIR_SHELL = 0.24 + 0.005 * np.arange(11)
PAIR_PERSON, PAIR_PERSON_NEIGHBOUR = -0.23, 1.0


def _pair():
    """The module docstring's pair: n = 100 rows of one coordinate."""
    others = np.concatenate([PAIR_CORE, -PAIR_SHELL, PAIR_SHELL])
    return (np.concatenate([[PAIR_PERSON], others])[:, None],
            np.concatenate([[PAIR_PERSON_NEIGHBOUR], others])[:, None])


PAIR_X, PAIR_X_NEIGHBOUR = _pair()
PAIR_DOC = ("n = 100 on [-1, 1]: 77 evenly in [-0.2, 0.2], 11 at -0.24, ..., -0.29 and 11 at 0.24, ..., 0.29; "
            "the person at -0.23 (x) or 1 (x'); statistic: the transcript's log-likelihood ratio")


def plan_transcript_setup(accounting):
    """``setup(rho, factor)`` -> (mechanism, x, x_neighbour, statistic) for the transcript audit of
    whole PLAN under ``accounting`` ("exact" or "published") on the module docstring's pair.

    ``mechanism(x, rng, k)`` draws k transcripts (:func:`mechanisms.plan_transcript.plan_transcripts`) with
    rho x ``factor`` (the positive control: factor 2 or 4 while the claim stays rho); the
    statistic maps them to their log-likelihood ratios (:class:`TranscriptLogLikelihoodRatio`, for
    the rho x factor the mechanism runs with). Call :func:`mechanisms.audit.audit_zcdp` with
    ``batched=True``, ``claimed_rho=rho`` and ``chunk`` = :data:`TRANSCRIPT_CHUNK` or so.

    Measured (``python -m experiments.audit.transcripts ACCOUNTING --factor F --runs R --seed 1 2 3 4 5``;
    rho = 1/4 and the claim 1/4; rho_lower per seed; seconds for both datasets, statistic
    included, on 2 cores shared with other jobs, so they vary with the load):

    ============== ======= ===================================== ======= =========
    audit          runs    rho_lower                             flagged s
    ============== ======= ===================================== ======= =========
    published      10^5    0.242 0.245 0.230 0.234 0.240         0 of 5  29-46
    published      10^6    0.2513 0.2516 0.2535 0.2511 0.2529    5 of 5  53-325
    published      3 10^6  0.2527 0.2550 (seeds 6, 7)            2 of 2  293-368
    exact          10^5    0.111 0.106 0.115 0.105 0.111         0 of 5  15-18
    exact          10^6    0.123 0.121 0.122 0.123 0.123         0 of 5  45-278
    exact, rho x 2 10^5    0.219 0.213 0.212 0.215 0.228         0 of 5  14-16
    exact, rho x 2 10^6    0.2511 0.2459 0.2430                 1 of 3  39-47
    exact, rho x 2 3 10^6  0.2581 0.2442 0.2543 (seeds 2, 3, 4)  2 of 3  211-271
    exact, rho x 4 10^5    0.442 0.444 0.425 0.438 0.447         5 of 5  6-8
    exact, rho x 4 10^6    0.499 0.498                           2 of 2  43-46
    ============== ======= ===================================== ======= =========

    Published PLAN is flagged at 10^6 runs on every seed, by a margin of 0.001-0.004: the test
    finds its threshold in the bulk (alpha 1.0-1.35), where the Bernoulli's divergence is near its
    ceiling (about 1.04 rho, module docstring) and more runs add little (3 10^6: 0.253, 0.255).
    rho_lower against the runs (the first R runs of each 10^6 sample, seeds 1-5): 0.20-0.24 at
    10^4, 0.22-0.24 at 3 10^4, 0.24-0.25 at 10^5, 0.248-0.256 at 3 10^5. Exact PLAN is far from
    its claim (0.12); its control with rho x 2 sits at the claim's edge (its best threshold is in
    the tail, alpha about 4-5, where more runs keep helping: 0.17-0.20 at 10^4, 0.21-0.23 at 10^5,
    0.243-0.251 at 10^6, 0.244-0.258 at 3 10^6); with rho x 4 it is flagged from 10^4 runs on.
    """
    if accounting not in ("exact", "published"):
        raise ValueError(f"accounting must be one of ['exact', 'published'], got accounting={accounting!r}")

    def setup(rho, factor=1.0):
        statistic = TranscriptLogLikelihoodRatio(PAIR_X, PAIR_X_NEIGHBOUR)

        def mechanism(x, rng, runs):
            return plan_transcripts(x, rho=factor * rho, bounds=PAIR_BOUNDS, rng=rng, runs=runs, accounting=accounting)

        return mechanism, PAIR_X, PAIR_X_NEIGHBOUR, statistic
    return setup


def run_transcript_audit(accounting, *, rho=0.25, factor=1.0, runs, rng, chunk=TRANSCRIPT_CHUNK) -> dict:
    """The transcript audit of ``accounting`` PLAN with rho x ``factor`` against the claim ``rho``
    (:func:`mechanisms.audit.audit_zcdp`'s test on :func:`plan_transcript_setup`'s draws):
    its result as a dict, with the seconds it took and, when it does not flag, the runs
    :func:`mechanisms.audit.projected_runs` projects to flag it."""
    start = time.perf_counter()
    mechanism, x, x_neighbour, statistic = plan_transcript_setup(accounting)(rho, factor)
    options = dict(runs=runs, rng=rng, statistic=statistic, batched=True, chunk=chunk)
    draws = [draw_statistics(mechanism, data, **options) for data in (x, x_neighbour)]
    result = audit_zcdp_samples(*draws, claimed_rho=rho)
    projected = None if result.violation else projected_runs(*draws, claimed_rho=rho)
    return {"accounting": accounting, "factor": factor, **result.as_dict(), "projected_runs": projected,
            "seconds": time.perf_counter() - start}


def main(argv=None) -> None:
    """``python -m experiments.audit.transcripts ACCOUNTING [--factor F] [--runs R] [--seed S ...] [--rho RHO]``:
    the transcript audit, one line per seed S, drawn from ``default_rng([2024, S, F, A])`` (A = 1
    for published accounting, else 0)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("accounting", choices=["exact", "published"])
    parser.add_argument("--factor", type=int, default=1)
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, nargs="+", default=[2024])
    parser.add_argument("--rho", type=float, default=0.25)
    args = parser.parse_args(argv)
    for seed in args.seed:
        found = run_transcript_audit(args.accounting, rho=args.rho, factor=args.factor, runs=args.runs,
                                     rng=np.random.default_rng([2024, seed, args.factor,
                                                                 int(args.accounting == "published")]))
        print(f"{args.accounting} factor={args.factor} runs={args.runs} seed={seed}: "
              f"rho_lower={found['rho_lower']:.4f} (claim {args.rho:g}, alpha {found['alpha']:.3g}) "
              f"violation={found['violation']} projected_runs={found['projected_runs']} "
              f"seconds={found['seconds']:.1f}", flush=True)


if __name__ == "__main__":
    main()
