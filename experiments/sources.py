"""Data sources the experiments can draw from, by config name (docs/design.md §6).

A source is a function ``f(*, rng, **params)`` returning a :class:`datasets.Sample` with
``x`` (dense, or sparse for binary data), ``true_mean``, ``true_std`` and ``bounds`` (and, where
the source states them, the public ``prior_ball`` and ``max_std``). Its
keyword parameters are the names a config may set under ``data:`` or sweep in ``grid:``,
except ``out``: a source that takes it draws into that array (the previous trial's data)
instead of allocating.
"""
from __future__ import annotations

import inspect
import os
from functools import lru_cache

from datasets import Sample, binary, synthetic
from datasets import userlevel as userlevel_data


def real_dataset(*, rng, dataset: str, processed_dir: str = "datasets/processed") -> Sample:
    """A real dataset (docs/design.md §7) as the workflow's parse step cached it under
    ``processed_dir``: the same rows in every trial (``rng`` draws nothing), its distribution
    unknown (``true_mean`` and ``true_std`` None: the error is measured against the empirical
    frequencies), in the binary universe (0, sqrt(D'))."""
    path = os.path.join(processed_dir, f"{dataset}.npz")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        from datasets.real import DatasetError

        raise DatasetError(f"dataset {dataset!r} is not processed: {path} is missing "
                           f"(run `snakemake {path}`)") from None
    x = _load_processed(dataset, processed_dir, status.st_mtime_ns, status.st_size)
    return Sample(x=x, true_mean=None, true_std=None, bounds=binary.binary_universe(x.shape[1]))


def userlevel(*, rng, runs: int, collection: str, d: int = 1, bound: float = 65.0, M: int = 6, L: int = 101,
              m_star: int = 10, exponent: float = 1.0, max_count: int = 64, distribution: str | None = None) -> Sample:
    """``runs`` datasets of one user-level collection (``datasets.userlevel_collection``) with
    the same users: ``x`` is (runs, n) for d = 1, (runs, n, d) otherwise, ``users`` the user
    of each sample, ``true_mean`` the target f(D) of each run, (runs, d)."""
    from mechanisms.userlevel import true_mean

    data = userlevel_data.userlevel_collection(
        collection=collection, runs=runs, rng=rng, d=d, bound=bound, M=M, L=L, m_star=m_star,
        exponent=exponent, max_count=max_count, distribution=distribution)
    return Sample(x=data.samples, true_mean=true_mean(data.samples, users=data.users, batched=True), true_std=None,
                  bounds=(0.0, float(bound)), users=data.users)


@lru_cache(maxsize=2)
def _load_processed(dataset, processed_dir, mtime_ns, size):
    """Loaded once per process for all trials (keyed by the file's state, so a re-parsed
    file is read again); the mechanisms never modify their input."""
    from datasets.real import load

    return load(dataset, processed_dir=processed_dir)[0]

DATA_SOURCES = {
    "gaussian_a": synthetic.gaussian_a,
    "gaussian_skewed": synthetic.gaussian_skewed,
    "gaussian_a_corr": synthetic.gaussian_a_corr,
    "gaussian_c_corr": synthetic.gaussian_c_corr,
    "gaussian_scalar": synthetic.gaussian_scalar,
    "gaussian_std": synthetic.gaussian_std,  # the authors' Table 2 protocol (PLAN Appendix D.2)
    # N(0, I_d) with a public prior ball: the CoinPress mean experiments (docs/design.md §6)
    "coinpress_gaussian": synthetic.coinpress_gaussian,
    # N(mean 1_d, U Lambda U^T) with a random rotation U: the IOME paper's statistical experiments (docs/design.md §7)
    "rotated_gaussian": synthetic.rotated_gaussian,
    # rows i^2 1_d, i = 1..n, deterministic: the data of IOME's Figure 9 (docs/design.md §7)
    "quadratic_ramp": synthetic.quadratic_ramp,
    # sparse binary rows (scipy.sparse.csr_matrix), docs/design.md §6
    "binary_synthetic": binary.binary_synthetic,
    "kosarak_shaped": binary.kosarak_shaped,
    "pos_shaped": binary.pos_shaped,
    # a fetched and parsed real dataset (config `datasets:`, workflow/rules/datasets.smk)
    "real_dataset": real_dataset,
    # user-level collections, a batch of Monte-Carlo runs per call (docs/design.md §5.7)
    "userlevel": userlevel,
}


# What the engine passes, not a config: the generator, the array to draw into, the batch size.
ENGINE_ARGUMENTS = ("rng", "out", "runs")


def source_parameters(source: str, *, required_only: bool = False) -> set[str]:
    parameters = inspect.signature(DATA_SOURCES[source]).parameters
    return {
        name
        for name, parameter in parameters.items()
        if name not in ENGINE_ARGUMENTS and (not required_only or parameter.default is inspect.Parameter.empty)
    }


def source_defaults(source: str) -> dict:
    """The default values of a source's parameters (e.g. the n and d of a stand-in dataset)."""
    parameters = inspect.signature(DATA_SOURCES[source]).parameters
    return {
        name: parameter.default
        for name, parameter in parameters.items()
        if name not in ENGINE_ARGUMENTS and parameter.default is not inspect.Parameter.empty
    }


def draw(source: str, params: dict, rng, out=None):
    """A sample of ``source``; into ``out`` (an array of the sample's shape) if the source
    takes it."""
    function = DATA_SOURCES[source]
    if out is not None and "out" in inspect.signature(function).parameters:
        return function(rng=rng, out=out, **params)
    return function(rng=rng, **params)
