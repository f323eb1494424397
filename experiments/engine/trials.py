"""Running the trials of the cells of one setting (docs/design.md §3).

Trial t of a setting draws its data from SeedSequence(seed, spawn_key=(experiment, setting,
t, 0)), where the setting is the cell without its rho, so every rho of a trial sees the same
data. Mechanism m of a cell draws from (experiment, cell, t, 1, m), and its randomness that
does not depend on rho (IOME's rotation, the option ``rotation_rng``) from (experiment,
setting, t, 2, m). Names enter as stable integer ids. With the experiment option ``fixed_data``
every trial of a setting sees one sample instead, drawn once from (experiment, setting, 0), a
key without a trial (the authors' protocol of Table 2: the trials then differ only in the
mechanisms' randomness). Results therefore do not depend on
cores, order, machine, or on whether the rho values of a setting run in one job or in
several: one job only shares their rho-independent work (a cache).

Batched experiments (the user-level family, docs/design.md §5.7, pure eps-DP) draw their Monte-Carlo
runs in batches: batch b plays the part of trial t above (data keyed by (experiment, setting, b,
0), mechanism m by (experiment, cell, b, 1, m)), and one call per mechanism and budget value
evaluates the whole batch. The budget is the experiment's, rho or eps.

A plug-in mechanism (docs/configuration.md, "Your own estimator") is called like the others:
``mechanisms.make_mechanism`` gives it the plain data and checks every estimate it returns; a
broken contract stops the run with a :class:`mechanisms.PluginContractError` naming the cell,
trial and mechanism, before any file of the job is written.
"""
from __future__ import annotations

import contextlib
import math
import sys
import time
import zlib

import numpy as np
import pandas as pd

import mechanisms
from datasets import column_means

from .config import RHO_FREE_STREAMS, Cell, ExperimentSpec, required_sample_options
from .metrics import BATCHED_METRICS, METRICS
from .sources import draw

DIAGNOSTICS = ("true_rho", "ledger_total", "clip_threshold", "fraction_clipped")
# The sample's public knowledge, passed to the mechanisms that take it: the universe, and where the
# source states them CoinPress's prior ball and sigma_max (datasets.Sample, docs/design.md §5.9).
SAMPLE_ARGUMENTS = ("bounds", "prior_ball", "max_std")


def stable_id(name: str) -> int:
    """A 32-bit id of a name that is the same on every machine and Python run."""
    return zlib.crc32(name.encode("utf-8"))


def _generator(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def data_generator(seed: int, experiment: str, cell: Cell, trial: int) -> np.random.Generator:
    """The data of a trial: keyed by the setting, so every rho of the trial sees the same data."""
    return _generator(seed, stable_id(experiment), stable_id(cell.setting_id), trial, 0)


def fixed_data_generator(seed: int, experiment: str, cell: Cell) -> np.random.Generator:
    """The one sample of every trial of a setting (``fixed_data``): keyed by the setting, without
    a trial (three words against the four of :func:`data_generator`: no trial's stream)."""
    return _generator(seed, stable_id(experiment), stable_id(cell.setting_id), 0)


def mechanism_generator(seed: int, experiment: str, cell: Cell, trial: int, name: str) -> np.random.Generator:
    """A mechanism's own randomness in one cell and trial (its noise)."""
    return _generator(seed, stable_id(experiment), stable_id(cell.id), trial, 1, stable_id(name))


def rho_free_generator(seed: int, experiment: str, cell: Cell, trial: int, name: str) -> np.random.Generator:
    """A mechanism's randomness that must be the same for every rho of a trial (IOME's
    rotation), so that its rho-independent work can serve them all."""
    return _generator(seed, stable_id(experiment), stable_id(cell.setting_id), trial, 2, stable_id(name))


@contextlib.contextmanager
def _plugin_context(spec: ExperimentSpec, cell: Cell, index: int, name: str, unit: str = "trial"):
    """A plug-in's broken contract or its own exception, raised again naming where it happened
    (the variant, beside the plug-in's file:function its message names)."""
    try:
        yield
    except (mechanisms.PluginContractError, mechanisms.PluginError) as error:
        raise type(error)(f"experiment {spec.id}, cell {cell.id}, {unit} {index}, mechanism {name!r}: "
                          f"{error}") from error


def run_cells(spec: ExperimentSpec, cells: list[Cell], *, seed: int, log=sys.stderr,
                cache_bytes: int | None = None, trials: range | None = None) -> dict[str, pd.DataFrame]:
    """The trials of ``cells`` (``trials``: a shard's consecutive trials, experiments/planning/shards.py;
    else all), cells of one setting that differ only in rho: one table per
    cell id, one row per trial and mechanism. Each trial's data are drawn once and seen by
    every mechanism at every rho; what the mechanisms derive from them without rho-dependent
    randomness is shared through one :class:`mechanisms.SharedSample`, whose cache holds up to
    ``cache_bytes`` (None: its default; the results are the same bytes whatever the size)."""
    settings = {cell.setting_id for cell in cells}
    if len(settings) != 1:
        raise ValueError(f"cells of one setting expected, got settings {sorted(settings)}")
    trials = range(spec.trials) if trials is None else trials
    if trials.step != 1 or trials.start < 0 or trials.stop > spec.trials or not trials:
        raise ValueError(f"trials {trials} are not consecutive trials of the {spec.trials} of experiment {spec.id}")
    samples = _samples(spec, cells[0], seed=seed, trials=trials)
    if spec.batch_size is not None:
        return _run_batched(spec, cells, samples, seed=seed, log=log, trials=trials)
    functions = {m.name: mechanisms.make_mechanism(m.algorithm, **m.options_dict()) for m in spec.mechanisms}
    from_sample = {m.name: required_sample_options(m.algorithm, m.options_dict()) for m in spec.mechanisms}
    call_arguments = {m.name: mechanisms.call_arguments(m.algorithm) for m in spec.mechanisms}
    rho_free = {
        m.name: [option for option in RHO_FREE_STREAMS if option in mechanisms.mechanism_options(m.algorithm)]
        for m in spec.mechanisms
    }
    metric = METRICS[spec.metric]
    extra_metrics = {name: METRICS[name] for name in spec.extra_metrics}
    rows = {cell.id: [] for cell in cells}
    started = time.perf_counter()
    buffers, wanted = [], None
    cache = {} if cache_bytes is None else {"cache_bytes": int(cache_bytes)}
    for done, (trial, sample) in enumerate(samples, start=1):
        empirical_mean = column_means(sample.x)
        # The mechanisms of a trial share what they derive from the data without rho-dependent
        # randomness (sorted coordinate rows, the transposed copy; for sparse data IOME's
        # rotated counts, which serve every rho): same results, computed once, into the
        # previous trial's arrays, and only what the previous trial's mechanisms reused.
        shared = mechanisms.SharedSample(sample.x, buffers=buffers, wanted=wanted, **cache)
        for cell in cells:
            for name, function in functions.items():
                extra = {option: getattr(sample, f"true_{option}") for option in from_sample[name]}
                extra.update({option: rho_free_generator(seed, spec.id, cell, trial, name)
                              for option in rho_free[name]})
                extra.update({argument: getattr(sample, argument) for argument in SAMPLE_ARGUMENTS
                              if argument in call_arguments[name]})
                tic = time.perf_counter()
                extra[spec.budget] = cell.budget
                try:
                    with _plugin_context(spec, cell, trial, name):
                        estimate = function(shared, rng=mechanism_generator(seed, spec.id, cell, trial, name),
                                            **extra)
                except mechanisms.MechanismRefusal as refusal:
                    # released nothing: a row without errors that says why (docs/design.md §6.1)
                    rows[cell.id].append(_refused_row(spec, cell, trial, name, refusal,
                                                      time.perf_counter() - tic, extra_metrics))
                    continue
                runtime = time.perf_counter() - tic
                error, error_vs_empirical = metric(estimate.mean, sample, empirical_mean)
                row = {"experiment": spec.id, **dict(cell.params), "trial": trial, "mechanism": name,
                       "error": error, "error_vs_empirical": error_vs_empirical, "runtime_s": runtime}
                for metric_name, extra in extra_metrics.items():  # the same estimate, other errors
                    row[f"error_{metric_name}"], row[f"error_{metric_name}_vs_empirical"] = extra(
                        estimate.mean, sample, empirical_mean)
                row.update({key: float(estimate.diagnostics.get(key, math.nan)) for key in DIAGNOSTICS})
                rows[cell.id].append(row)
        wanted = shared.recalled
        buffers = shared.release()
        del shared, sample
        if log is not None and (done == len(trials) or done % max(1, len(trials) // 5) == 0):
            values = f"{len(cells)} {spec.budget} values"
            label = cells[0].id if len(cells) == 1 else f"{cells[0].setting_id or 'all'} ({values})"
            print(f"{spec.id} {label}: {done}/{len(trials)} trials{_shard_label(spec, trials)}, "
                  f"{time.perf_counter() - started:.1f} s", file=log, flush=True)
    return {cell_id: pd.DataFrame(cell_rows) for cell_id, cell_rows in rows.items()}


def _samples(spec: ExperimentSpec, cell: Cell, *, seed: int, trials: range):
    """(trial, its sample) for each of ``trials`` of ``cell``'s setting, each drawn from its own key
    (module docstring) into the previous trial's array where the source takes ``out=``; with
    ``fixed_data`` the one sample of the setting for every trial. A batched experiment gets
    (first run, the batch's sample) for each batch of its runs. One draw, for every kind."""
    params = {**dict(spec.data), **{name: value for name, value in cell.params if name != spec.budget}}
    sample = None
    for index in range(trials.start, trials.stop, spec.batch_size or 1):
        if spec.batch_size is not None:
            key = data_generator(seed, spec.id, cell, index // spec.batch_size)
            wanted, spare = {**params, "runs": min(spec.batch_size, spec.trials - index)}, None
        elif spec.fixed_data:
            if sample is not None:
                yield index, sample
                continue
            key, wanted, spare = fixed_data_generator(seed, spec.id, cell), params, None
        else:  # into the previous trial's array
            key, wanted = data_generator(seed, spec.id, cell, index), params
            spare = None if sample is None else sample.x
        sample = draw(spec.source, wanted, key, out=spare)
        yield index, sample


def _refused_row(spec: ExperimentSpec, cell: Cell, trial: int, name: str, refusal: Exception, runtime: float,
                 extra_metrics) -> dict:
    """The row of a mechanism that refused its input (:class:`mechanisms.MechanismRefusal`): every
    error NaN and the refusal's message in ``refused``, a column only cells with a refusal have."""
    extra_errors = [f"error_{metric}{suffix}" for metric in extra_metrics for suffix in ("", "_vs_empirical")]
    # the keys in the order of a released row's, so that a cell's columns do not depend on which row comes first
    return {"experiment": spec.id, **dict(cell.params), "trial": trial, "mechanism": name,
            "error": math.nan, "error_vs_empirical": math.nan, "runtime_s": runtime,
            **dict.fromkeys(extra_errors, math.nan), **dict.fromkeys(DIAGNOSTICS, math.nan), "refused": str(refusal)}


def _shard_label(spec: ExperimentSpec, trials: range) -> str:
    """`` (trials a-b of T)`` for a shard, nothing for a whole job."""
    return "" if len(trials) == spec.trials else f" (trials {trials.start}-{trials.stop - 1} of {spec.trials})"


def _run_batched(spec: ExperimentSpec, cells: list[Cell], samples, *, seed: int, log,
                 trials: range) -> dict[str, pd.DataFrame]:
    """The runs ``trials`` of ``cells`` in batches of ``spec.batch_size``: each batch of datasets
    is drawn once (one seed key per batch) and every mechanism evaluates it in one vectorised call
    per budget value; the same data for every mechanism and budget of a run. A shard's runs
    start and end at batch boundaries (experiments/planning/shards.py)."""
    functions = {m.name: mechanisms.make_mechanism(m.algorithm, **m.options_dict()) for m in spec.mechanisms}
    metric = BATCHED_METRICS[spec.metric]
    frames = {cell.id: [] for cell in cells}
    started = time.perf_counter()
    if trials.start % spec.batch_size or (trials.stop % spec.batch_size and trials.stop != spec.trials):
        raise ValueError(f"runs {trials.start}-{trials.stop - 1} of experiment {spec.id} do not start and end "
                         f"at batches of {spec.batch_size}")
    for first, sample in samples:
        batch = first // spec.batch_size
        runs = min(spec.batch_size, spec.trials - first)
        for cell in cells:
            for name, function in functions.items():
                tic = time.perf_counter()
                with _plugin_context(spec, cell, batch, name, unit="batch"):
                    estimate = function(sample.x, users=sample.users, bound=sample.bounds[1], batched=True,
                                        rng=mechanism_generator(seed, spec.id, cell, batch, name),
                                        **{spec.budget: cell.budget})
                runtime = time.perf_counter() - tic
                if not math.isclose(estimate.total, cell.budget, rel_tol=1e-12):
                    raise RuntimeError(f"{name} spent {estimate.total} {spec.budget}, not the cell's {cell.budget}")
                # Only the error per run: 10^4 runs per cell (the target f(D) is the sample's own
                # statistic, so there is no separate error against the empirical mean).
                frames[cell.id].append(pd.DataFrame({
                    "experiment": spec.id, **dict(cell.params), "trial": np.arange(first, first + runs),
                    "mechanism": name, "error": metric(estimate.mean, sample.true_mean),
                }))
                if log is not None:
                    threshold = estimate.diagnostics.get("T_eps", math.nan)
                    print(f"{cell.id} {name}: {runs} runs in {runtime:.3f} s, ledger {estimate.total:g} {spec.budget}, "
                          f"threshold {np.mean(threshold):.6g}", file=log)
        if log is not None:
            print(f"{spec.id} {cells[0].setting_id or 'all'} ({len(cells)} {spec.budget} values): "
                  f"{first + runs - trials.start}/{len(trials)} runs{_shard_label(spec, trials)}, "
                  f"{time.perf_counter() - started:.1f} s", file=log, flush=True)
    return {cell_id: pd.concat(parts, ignore_index=True) for cell_id, parts in frames.items()}
