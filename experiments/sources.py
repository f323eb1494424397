"""Data sources the experiments can draw from, by config name (DESIGN.md 6).

A source is a function ``f(*, rng, **params)`` returning a :class:`datasets.Sample` with
``x`` (dense, or sparse for binary data), ``true_mean``, ``true_std`` and ``bounds``. Its keyword parameters are the names a config
may set under ``data:`` or sweep in ``grid:``, except ``out``: a source that takes it
draws into that array (the previous trial's data) instead of allocating.
"""
from __future__ import annotations

import inspect

from datasets import binary, synthetic

DATA_SOURCES = {
    "gaussian_a": synthetic.gaussian_a,
    "gaussian_skewed": synthetic.gaussian_skewed,
    "gaussian_a_corr": synthetic.gaussian_a_corr,
    "gaussian_c_corr": synthetic.gaussian_c_corr,
    "gaussian_scalar": synthetic.gaussian_scalar,
    # sparse binary rows (scipy.sparse.csr_matrix), DESIGN.md 6
    "binary_synthetic": binary.binary_synthetic,
    "kosarak_shaped": binary.kosarak_shaped,
    "pos_shaped": binary.pos_shaped,
}


def source_parameters(source: str, *, required_only: bool = False) -> set[str]:
    parameters = inspect.signature(DATA_SOURCES[source]).parameters
    return {
        name
        for name, parameter in parameters.items()
        if name not in ("rng", "out") and (not required_only or parameter.default is inspect.Parameter.empty)
    }


def source_defaults(source: str) -> dict:
    """The default values of a source's parameters (e.g. the n and d of a stand-in dataset)."""
    parameters = inspect.signature(DATA_SOURCES[source]).parameters
    return {
        name: parameter.default
        for name, parameter in parameters.items()
        if name not in ("rng", "out") and parameter.default is not inspect.Parameter.empty
    }


def draw(source: str, params: dict, rng, out=None):
    """A sample of ``source``; into ``out`` (an array of the sample's shape) if the source
    takes it."""
    function = DATA_SOURCES[source]
    if out is not None and "out" in inspect.signature(function).parameters:
        return function(rng=rng, out=out, **params)
    return function(rng=rng, **params)
