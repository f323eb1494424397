"""Datasets for the PLAN experiments: synthetic generators (and, later, fetchers and parsers)."""

from datasets.synthetic import (
    GaussianSample,
    gaussian_a,
    gaussian_a_corr,
    gaussian_a_corr_factor,
    gaussian_c_corr,
    gaussian_scalar,
    gaussian_skewed,
)

__all__ = [
    "GaussianSample",
    "gaussian_a",
    "gaussian_a_corr",
    "gaussian_a_corr_factor",
    "gaussian_c_corr",
    "gaussian_scalar",
    "gaussian_skewed",
]
