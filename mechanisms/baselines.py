"""Non-private reference estimators."""
from __future__ import annotations

import math

import numpy as np

from ._validation import check_bounds, check_data, check_generator
from .accounting import Estimate, LedgerEntry, check_rho

NON_PRIVATE = "non_private_release"


def empirical_mean(x, *, rho, bounds, rng) -> Estimate:
    """The sample mean: the non-private baseline of every figure.

    It is not differentially private for any finite budget, so its ledger records one
    release of infinite cost rather than pretending to spend ``rho``. The privacy
    arguments are accepted (and checked) so that it runs through the same interface.
    """
    data = check_data(x)
    check_rho(rho)
    check_bounds(bounds)
    check_generator(rng)
    ledger = (LedgerEntry(NON_PRIVATE, math.inf),)
    return Estimate(
        mean=data.mean(axis=0),
        ledger=ledger,
        diagnostics={"accounting": "none", "requested_rho": float(rho), "true_rho": math.inf, "private": False},
    )
