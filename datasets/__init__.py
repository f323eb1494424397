"""Datasets for the PLAN experiments: synthetic Gaussian and sparse binary generators, and the
real datasets (Kosarak, BMS-POS): fetch, parse, check and cache them (``datasets.real``)."""

from datasets.binary import bernoulli_rows, binary_synthetic, kosarak_shaped, pos_shaped, zipf_popularity
from datasets.real import (
    REAL_DATASETS,
    DatasetError,
    DatasetUnavailable,
    RealDataset,
    fetch,
    load,
    parse,
    parse_kosarak,
    parse_pos,
    process,
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

__all__ = [
    "REAL_DATASETS",
    "DatasetError",
    "DatasetUnavailable",
    "RealDataset",
    "Sample",
    "bernoulli_rows",
    "binary_synthetic",
    "column_means",
    "fetch",
    "gaussian_a",
    "gaussian_a_corr",
    "gaussian_a_corr_factor",
    "gaussian_c_corr",
    "gaussian_scalar",
    "gaussian_skewed",
    "kosarak_shaped",
    "load",
    "parse",
    "parse_kosarak",
    "parse_pos",
    "pos_shaped",
    "process",
    "zipf_popularity",
]
