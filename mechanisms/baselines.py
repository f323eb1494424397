"""Non-private reference estimators."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse

from ._layout import sample_data
from ._validation import check_bounds, check_budget, check_data, check_generator, check_sparse, check_work_size
from .accounting import Estimate, LedgerEntry, PureLedgerEntry, check_rho

NON_PRIVATE = "non_private_release"


def empirical_mean(x, *, rho, bounds, rng) -> Estimate:
    """The sample mean: the non-private baseline of every figure.

    It is not differentially private for any finite budget, so its ledger records one
    release of infinite cost rather than pretending to spend ``rho``. The privacy
    arguments are accepted (and checked) so that it runs through the same interface.
    ``x`` may be sparse (n x d, e.g. binary rows): it is summed by column, not densified.
    """
    mean = _sample_mean(x)
    check_rho(rho)
    check_bounds(bounds)
    check_generator(rng)
    ledger = (LedgerEntry(NON_PRIVATE, math.inf),)
    return Estimate(
        mean=mean,
        ledger=ledger,
        diagnostics={"accounting": "none", "requested_rho": float(rho), "true_rho": math.inf, "private": False},
    )


def empirical_mean_eps(x, *, eps, bounds, rng) -> Estimate:
    """:func:`empirical_mean` beside mechanisms that spend an eps budget (the local model's
    experiments, docs/design.md §5.13): the same sample mean, its one release of infinite cost
    booked in eps."""
    mean = _sample_mean(x)
    check_budget(eps, "eps")
    check_bounds(bounds)
    check_generator(rng)
    return Estimate(
        mean=mean,
        ledger=(PureLedgerEntry(NON_PRIVATE, math.inf),),
        diagnostics={"accounting": "none", "requested_eps": float(eps), "true_eps": math.inf, "private": False},
    )


def _sample_mean(x) -> np.ndarray:
    """Column means of dense or sparse (n x d) data; sparse data is summed by column, not densified."""
    given = sample_data(x)
    if scipy.sparse.issparse(given):
        sparse = check_sparse(given)
        check_work_size(8 * sparse.shape[1], f"x of shape {sparse.shape}", "its dense vector of column means")
        return np.asarray(sparse.sum(axis=0)).ravel() / sparse.shape[0]
    return check_data(given).mean(axis=0)
