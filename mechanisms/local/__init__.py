"""The local model (docs/design.md §5.13): every user randomizes its own report, the aggregator
only sees the reports. The IOME paper's three-round Shifted-CM (its Section 5.1) on a locally
private range-counting protocol, and Gaboardi, Rogers and Sheffet's KnownVar and UnkVar applied
coordinate by coordinate, as the IOME paper compares them (its Section 6.2)."""

from .grs import (
    bit_flip_report,
    bit_flip_totals,
    gaussian_noise_std,
    grs_known_var,
    grs_unknown_var,
    randomized_response_report,
    randomized_response_total,
)
from .range_counting import (
    aggregate_range_counts,
    cells_of,
    consistent_counts,
    node_count,
    prefix_count,
    range_report,
    report_noise_std,
    tree_quantile,
    true_node_counts,
)
from .shifted_cm import clipped_noise_std, clipped_report, iome_local, local_clip_rank, round_budgets

__all__ = [
    "aggregate_range_counts",
    "bit_flip_report",
    "bit_flip_totals",
    "cells_of",
    "clipped_noise_std",
    "clipped_report",
    "consistent_counts",
    "gaussian_noise_std",
    "grs_known_var",
    "grs_unknown_var",
    "iome_local",
    "local_clip_rank",
    "node_count",
    "prefix_count",
    "randomized_response_report",
    "randomized_response_total",
    "range_report",
    "report_noise_std",
    "round_budgets",
    "tree_quantile",
    "true_node_counts",
]
