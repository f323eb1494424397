"""Datasets for the PLAN experiments: synthetic Gaussian and sparse binary generators, and the
real datasets (Kosarak, BMS-POS): fetch, parse, check and cache them (``datasets.real``), and the
user-level collections of the user-level clipping experiments (``datasets.userlevel``)."""

from datasets.binary import bernoulli_rows, binary_synthetic, kosarak_shaped, pos_shaped, zipf_popularity
from datasets.real import (
    REAL_DATASETS,
    DatasetError,
    DatasetUnavailable,
    RawFormat,
    RealDataset,
    Source,
    fetch,
    load,
    obtain,
    parse,
    parse_ann_benchmarks_hdf5,
    parse_kosarak,
    parse_pos,
    process,
    sources_of,
)
from datasets.sample import Sample, column_means
from datasets.synthetic import (
    gaussian_a,
    gaussian_a_corr,
    gaussian_a_corr_factor,
    gaussian_c_corr,
    gaussian_scalar,
    gaussian_skewed,
)
from datasets.userlevel import (
    UserSamples,
    collection_counts,
    extreme_counts,
    geometric_counts,
    user_samples,
    userlevel_collection,
    zipf_counts,
)

__all__ = [
    "REAL_DATASETS",
    "DatasetError",
    "DatasetUnavailable",
    "RawFormat",
    "RealDataset",
    "Sample",
    "Source",
    "UserSamples",
    "bernoulli_rows",
    "binary_synthetic",
    "collection_counts",
    "column_means",
    "extreme_counts",
    "fetch",
    "gaussian_a",
    "gaussian_a_corr",
    "gaussian_a_corr_factor",
    "gaussian_c_corr",
    "gaussian_scalar",
    "gaussian_skewed",
    "geometric_counts",
    "kosarak_shaped",
    "load",
    "obtain",
    "parse",
    "parse_ann_benchmarks_hdf5",
    "parse_kosarak",
    "parse_pos",
    "pos_shaped",
    "process",
    "sources_of",
    "user_samples",
    "userlevel_collection",
    "zipf_counts",
    "zipf_popularity",
]
