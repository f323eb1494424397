"""Locally private range counting and quantiles (docs/design.md §5.13): the hierarchical histogram
of Cormode, Kulkarni and Srivastava (VLDB 2019, the IOME paper's [14]) in the zCDP form its
Lemma 5.1 uses, with branching factor 2 and every user reporting every level.

The domain [lo, hi] is cut into 2^T cells; level l = 1..T of the tree has 2^l nodes, a node
holding the cells below it. A user with a value in cell k holds, at each level, the one-hot
vector of its node there (node k >> (T - l)). Its report is those T one-hot vectors, every entry
plus N(0, sigma^2): two values differ in at most one node per level, in two entries, so the
report's l2 sensitivity is sqrt(2 T) and sigma = sqrt(2 T / (2 rho)) = sqrt(T / rho) makes it
rho-zCDP (per user; a user with m trees, one per coordinate, has sensitivity sqrt(2 T m)).

Why this variant (CKS19 also splits users between levels, or uses Haar coefficients): with
Gaussian noise, reporting all levels gives every node the noise variance n T / rho of the sum,
the same as sampling one level per user (n / T users, counts scaled by T, each at rho) but
without the sampling error, and its sum is exactly the true counts plus N(0, n sigma^2): the
aggregate is drawn in one step (:func:`aggregate_range_counts`) instead of n reports. Branching
2 turns a quantile into a walk down the tree (:func:`tree_quantile`), on counts made consistent
first as CKS19 recommend (:func:`consistent_counts`: Hay, Rastogi, Miklau and Suciu's weighted
averaging and mean consistency, with the root fixed at the public number of users).

Nodes are stored level after level in one flat axis: level l at offsets 2^l - 2 .. 2^(l+1) - 3.
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import check_work_size


def node_count(levels: int) -> int:
    """Nodes of a tree with ``levels`` levels below its root: 2 + 4 + ... + 2^T = 2^(T+1) - 2."""
    return (1 << (levels + 1)) - 2


def level_offset(level: int) -> int:
    """Where level ``level`` (1..T) starts on the flat node axis."""
    return (1 << level) - 2


def cells_of(values, *, lo: float, hi: float, levels: int) -> np.ndarray:
    """The cell index 0..2^T - 1 of every value on [lo, hi] cut into 2^T equal cells; values
    outside go to the end cells (a user outside the domain reports its nearest cell)."""
    cells = 1 << levels
    scaled = (np.asarray(values, dtype=float) - lo) * (cells / (hi - lo))
    return np.clip(np.floor(scaled), 0, cells - 1).astype(np.int64)


def report_noise_std(*, levels: int, rho: float, trees: int = 1) -> float:
    """sigma of one user's report: sensitivity sqrt(2 T trees) over sqrt(2 rho) (module docstring)."""
    return math.sqrt(2.0 * levels * trees) / math.sqrt(2.0 * rho)


def true_node_counts(cells: np.ndarray, *, levels: int) -> np.ndarray:
    """How many users sit in every node: ``cells`` (n,) or (n, m) for m trees gives (nodes,) or
    (m, nodes). The leaves by one bincount per tree, each level above by pairwise sums."""
    cells = np.asarray(cells)
    columns = cells.reshape(cells.shape[0], -1)
    m, width = columns.shape[1], 1 << levels
    # one bincount for all trees: tree j's cells shifted by j * 2^T
    leaves = np.bincount((columns + np.arange(m) * width).ravel(), minlength=m * width).reshape(m, width)
    counts = np.empty((m, node_count(levels)))
    level_counts = leaves.astype(float)
    for level in range(levels, 0, -1):
        counts[:, level_offset(level):level_offset(level + 1)] = level_counts
        level_counts = level_counts[:, 0::2] + level_counts[:, 1::2]
    return counts[0] if cells.ndim == 1 else counts


def range_report(cells, *, levels: int, rho: float, rng: np.random.Generator, trees: int = 1) -> np.ndarray:
    """The per-user randomizer: every user's noisy one-hot vectors, (users, nodes) for ``cells``
    of shape (users,), or (users, m, nodes) for (users, m) (m trees sharing the user's rho:
    ``trees`` = m). Each entry is its indicator plus N(0, :func:`report_noise_std` ^ 2)."""
    cells = np.asarray(cells)
    shape = cells.shape + (node_count(levels),)
    check_work_size(8 * math.prod(shape), f"range_report of {cells.size} cells", "its users' reports")
    sigma = report_noise_std(levels=levels, rho=rho, trees=trees)
    report = rng.standard_normal(shape) * sigma
    for level in range(1, levels + 1):
        node = level_offset(level) + (cells >> (levels - level))
        np.put_along_axis(report, node[..., None], np.take_along_axis(report, node[..., None], axis=-1) + 1.0,
                          axis=-1)
    return report


def aggregate_range_counts(cells, *, levels: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    """The aggregator's sum of every user's :func:`range_report`, drawn exactly: the true node
    counts plus N(0, n sigma^2) per node (a sum of n independent normals). ``cells`` (n,) gives
    one tree (nodes,); (n, m) gives m trees (m, nodes), the users' rho shared by their m trees."""
    cells = np.asarray(cells)
    trees = 1 if cells.ndim == 1 else cells.shape[1]
    sigma = report_noise_std(levels=levels, rho=rho, trees=trees)
    counts = true_node_counts(cells, levels=levels)
    return counts + rng.standard_normal(counts.shape) * (sigma * math.sqrt(cells.shape[0]))


def consistent_counts(node_counts, *, levels: int, total) -> np.ndarray:
    """The least-squares counts of every tree (``node_counts`` (nodes,) or (m, nodes)) whose
    children add up to their parent and whose top two nodes add up to ``total`` (the number of
    users, public): Hay, Rastogi, Miklau and Suciu (VLDB 2010, Theorem 3) for branching 2 and
    equal noise per node. Bottom-up, a node of height h (leaves 1) averages its own count with
    its children's estimates, weights (2^h - 2^(h-1)) / (2^h - 1) and (2^(h-1) - 1) / (2^h - 1);
    top-down, every pair of siblings shares its parent's surplus equally. Post-processing of the
    reports and n: it costs no privacy."""
    counts = np.asarray(node_counts, dtype=float)
    flat = counts.reshape(-1, counts.shape[-1])
    weighted = np.empty_like(flat)
    below = None
    for level in range(levels, 0, -1):
        own = flat[:, level_offset(level):level_offset(level + 1)]
        if below is None:
            weighted_level = own
        else:
            h = levels - level + 1
            children = below[:, 0::2] + below[:, 1::2]
            weighted_level = ((2**h - 2 ** (h - 1)) * own + (2 ** (h - 1) - 1) * children) / (2**h - 1)
        weighted[:, level_offset(level):level_offset(level + 1)] = weighted_level
        below = weighted_level
    consistent = np.empty_like(flat)
    parents = np.broadcast_to(np.asarray(total, dtype=float), (flat.shape[0],))[:, None]
    for level in range(1, levels + 1):
        nodes = weighted[:, level_offset(level):level_offset(level + 1)]
        surplus = parents - (nodes[:, 0::2] + nodes[:, 1::2])
        fixed = nodes + np.repeat(surplus / 2.0, 2, axis=1)
        consistent[:, level_offset(level):level_offset(level + 1)] = fixed
        parents = fixed
    return consistent.reshape(counts.shape)


def prefix_count(node_counts, cell: int, *, levels: int):
    """The (noisy) number of users in cells 0..cell - 1 (``cell`` in 0..2^T): the sum of the at
    most T canonical nodes that tile them (one per level where ``cell``'s binary digit is 1): the
    protocol's answer to a range query. Works on one tree (nodes,) or many (..., nodes)."""
    node_counts = np.asarray(node_counts, dtype=float)
    if cell >= 1 << levels:  # every cell: the two nodes of level 1
        return node_counts[..., 0] + node_counts[..., 1]
    total = np.zeros(node_counts.shape[:-1])
    for level in range(1, levels + 1):
        prefix = cell >> (levels - level)
        if prefix & 1:
            total = total + node_counts[..., level_offset(level) + prefix - 1]
    return total


def tree_quantile(node_counts, *, levels: int, target_rank, lo: float, hi: float) -> np.ndarray:
    """Walk down every tree (``node_counts`` (m, nodes)) to the cell where the noisy count of the
    cells left of it, plus the cell, first reaches ``target_rank`` (a number, or one per tree):
    at each level go left when the mass left of the node plus its left child's count reaches
    the target, else add the left child to the mass and go right. Returns the midpoints of the
    cells reached, (m,). Each comparison is the binary search's of docs/design.md §5.1, its count
    read off the tree instead of asked in a round of its own."""
    node_counts = np.atleast_2d(np.asarray(node_counts, dtype=float))
    trees = node_counts.shape[0]
    target = np.broadcast_to(np.asarray(target_rank, dtype=float), (trees,))
    node = np.zeros(trees, dtype=np.int64)  # index within the level
    mass = np.zeros(trees)
    rows = np.arange(trees)
    for level in range(1, levels + 1):
        left = 2 * node
        left_count = node_counts[rows, level_offset(level) + left]
        go_left = mass + left_count >= target
        mass = np.where(go_left, mass, mass + left_count)
        node = np.where(go_left, left, left + 1)
    width = (hi - lo) / (1 << levels)
    return lo + (node + 0.5) * width
