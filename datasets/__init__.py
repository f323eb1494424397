"""Datasets for the PLAN experiments: synthetic Gaussian and sparse binary generators, and the
real datasets (Kosarak, BMS-POS): fetch, parse, check and cache them (``datasets.real``), and the
user-level collections of the user-level clipping experiments (``datasets.userlevel``). For the
IOME paper's empirical mean estimation: MNIST (``datasets.real``) and its stand-in
(``datasets.images``)."""

from datasets.binary import bernoulli_rows, binary_synthetic, kosarak_shaped, pos_shaped, zipf_popularity
from datasets.images import LabelledImages, image_sample, mnist_shaped
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
from datasets.sample import PriorBall, Sample, column_means
from datasets.synthetic import (
    coinpress_gaussian,
    gaussian_a,
    gaussian_a_corr,
    gaussian_a_corr_factor,
    gaussian_c_corr,
    gaussian_scalar,
    gaussian_skewed,
    gaussian_std,
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
    "LabelledImages",
    "PriorBall",
    "RawFormat",
    "RealDataset",
    "Sample",
    "Source",
    "UserSamples",
    "bernoulli_rows",
    "binary_synthetic",
    "coinpress_gaussian",
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
    "gaussian_std",
    "geometric_counts",
    "image_sample",
    "kosarak_shaped",
    "load",
    "mnist_shaped",
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
