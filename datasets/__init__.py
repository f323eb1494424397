"""Datasets for the PLAN experiments: synthetic generators (and, later, fetchers and parsers)."""

from datasets.synthetic import GaussianSample, gaussian_a, gaussian_skewed

__all__ = ["GaussianSample", "gaussian_a", "gaussian_skewed"]
