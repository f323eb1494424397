"""Datasets for the PLAN experiments: synthetic generators (and, later, fetchers and parsers)."""

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
    "column_means",
    "gaussian_a",
    "gaussian_a_corr",
    "gaussian_a_corr_factor",
    "gaussian_c_corr",
    "gaussian_scalar",
    "gaussian_skewed",
]
