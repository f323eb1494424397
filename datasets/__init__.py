"""Datasets for the PLAN experiments: synthetic Gaussian and sparse binary generators (and,
later, fetchers and parsers)."""

from datasets.binary import bernoulli_rows, binary_synthetic, kosarak_shaped, pos_shaped, zipf_popularity
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
    "Sample",
    "bernoulli_rows",
    "binary_synthetic",
    "column_means",
    "gaussian_a",
    "gaussian_a_corr",
    "gaussian_a_corr_factor",
    "gaussian_c_corr",
    "gaussian_scalar",
    "gaussian_skewed",
    "kosarak_shaped",
    "pos_shaped",
    "zipf_popularity",
]
