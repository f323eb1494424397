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

from datasets import Sample, binary, images, synthetic
from datasets import userlevel as userlevel_data

# The data sources that read a processed real dataset (config `datasets:`, made by the workflow's
# fetch checkpoint and parse step, workflow/rules/datasets.smk), named by their `dataset`
# parameter, and the kind of real dataset each reads (datasets.real.REAL_DATASETS; docs/design.md §7).
# An experiment of such a source waits for its dataset's fetch, is left out (and reported) when
# the dataset cannot be obtained, and sizes its jobs by the dataset's expected statistics.
REAL_DATASET_SOURCES = {"real_dataset": "binary", "mnist": "images"}


def real_dataset(*, rng, dataset: str, processed_dir: str = "datasets/processed") -> Sample:
    """A real dataset (docs/design.md §7) as the workflow's parse step cached it under
    ``processed_dir``: the same rows in every trial (``rng`` draws nothing), its distribution
    unknown (``true_mean`` and ``true_std`` None: the error is measured against the empirical
    frequencies), in the binary universe (0, sqrt(D'))."""
    x = _processed(dataset, processed_dir, source="real_dataset")
    return Sample(x=x, true_mean=None, true_std=None, bounds=binary.binary_universe(x.shape[1]))


def mnist(*, rng, dataset: str = "mnist", digit: int | None = None, split: str = "train", scale: float = 1 / 255,
          radius_scale: float = 50.0, processed_dir: str = "datasets/processed") -> Sample:
    """MNIST's images of ``digit`` (None: every digit) in ``split`` ("train", "test" or "all"), as
    the workflow's parse step cached them under ``processed_dir`` (docs/design.md §7): the IOME
    paper's empirical mean estimation (Section 6.1, Figures 7 and 8 on the train images of digits
    0, 1 and 2). float64 pixels times ``scale`` (the authors divide by 255); the same rows in every
    trial (``rng`` draws nothing); ``true_mean`` None, so the error is measured against the rows'
    own mean (``error_vs_empirical``); the prior ball B(0, R), R = ``radius_scale`` sqrt(784) (the
    authors' 50 sqrt(d) = 1400), and the universe (-2R, 2R), the authors' u = 2R for Shifted-CM and
    CM (datasets.image_sample says how IOME reads it)."""
    labelled = _processed(dataset, processed_dir, source="mnist")
    return images.image_sample(labelled, digit=digit, split=split, scale=scale, radius_scale=radius_scale,
                               what=f"dataset {dataset!r}")


def mnist_shaped(*, rng, digit: int | None = None, split: str = "train", scale: float = 1 / 255,
                 radius_scale: float = 50.0, seed: int = images.MNIST_SHAPED_SEED, n_train: int = 60_000,
                 n_test: int = 10_000) -> Sample:
    """The same as :func:`mnist` from the MNIST-shaped stand-in (``datasets.mnist_shaped``, made
    from its own ``seed``, not ``rng``: the same rows in every trial), which is not MNIST: synthetic
    images of its shape (docs/design.md §7); ``n_train`` and ``n_test`` images (MNIST's 60,000 and
    10,000 by default; the smoke config's stand-in is smaller)."""
    labelled = images.mnist_shaped(seed=seed, digit=digit, split=split, n_train=n_train, n_test=n_test)
    return images.image_sample(labelled, digit=digit, split=split, scale=scale, radius_scale=radius_scale,
                               what="the MNIST-shaped stand-in")


def real_dataset_of(source: str, data) -> str | None:
    """The real dataset an experiment of data source ``source`` with the fixed data parameters
    ``data`` (a mapping or (name, value) pairs) reads: its ``dataset``, else the source's default;
    None for a source that reads none (:data:`REAL_DATASET_SOURCES`)."""
    if source not in REAL_DATASET_SOURCES:
        return None
    return dict(data).get("dataset", source_defaults(source).get("dataset"))


def _processed(dataset: str, processed_dir: str, *, source: str):
    """The data of the processed real ``dataset`` (loaded once per process), which must be of the
    kind ``source`` reads."""
    from datasets.real import REAL_DATASETS, DatasetError

    kind = REAL_DATASET_SOURCES[source]
    if getattr(REAL_DATASETS.get(dataset), "kind", None) != kind:
        readable = [name for name, entry in REAL_DATASETS.items() if entry.kind == kind]
        raise DatasetError(f"data source {source!r} reads the {kind} datasets ({', '.join(readable)}),"
                           f" got dataset={dataset!r}")
    path = os.path.join(processed_dir, f"{dataset}.npz")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise DatasetError(f"dataset {dataset!r} is not processed: {path} is missing "
                           f"(run `snakemake {path}`)") from None
    return _load_processed(dataset, processed_dir, status.st_mtime_ns, status.st_size)


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
    # MNIST's images of a digit, and the MNIST-shaped stand-in (docs/design.md §7)
    "mnist": mnist,
    "mnist_shaped": mnist_shaped,
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
