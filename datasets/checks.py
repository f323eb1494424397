"""Argument checks shared by the data generators (synthetic, binary, user-level): each raises one
error naming the bad value."""
from __future__ import annotations

import math
import numbers

import numpy as np


def check_positive_int(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    # bool is an int subclass, but n=True is a bug, not a size.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")


def check_real(**kwargs: object) -> None:
    ((name, value),) = kwargs.items()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {name}={value!r}")


def check_rng(rng: object) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got rng={rng!r}"
        )
