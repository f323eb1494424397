"""The fast paths behind PLAN's per-coordinate steps (docs/design.md §5.2 steps 1-3, §8).

:mod:`mechanisms.plan` reads as the algorithm; this package computes its quantile steps fast.
:func:`centre_and_variance` (its docstring states exactly what it computes) is steps 1-3 for all
coordinates at once, and :func:`private_quantile` one PrivQuantile call as PLAN makes it (the
clip threshold, step 5). Nothing here changes a result, only the work:

* :mod:`.coordinates`: one blocked pass that sorts each coordinate once, answers them in batches,
  and keeps what later PLAN variants can reuse in a :class:`~mechanisms.SharedSample`;
* :mod:`.calls`: how a call is drawn (all randomness up front) and answered;
* :mod:`.regions`: the exponential mechanism sampled by regions (rejection sampling, the same
  distribution as weighing every interval, docs/design.md §5.1);
* :mod:`.stack`: the published stack's median without merging the stack (docs/design.md §5.0);
* :mod:`.pairs`: the pair statistics of the variance step (Algorithm 2).

tests/mechanisms/test_fast_sampling.py checks the samplers against the exact distribution; tests of
block sizes, shared samples and the engine check that results do not depend on the shortcuts.
"""
from .calls import private_quantile
from .coordinates import centre_and_variance

__all__ = ["centre_and_variance", "private_quantile"]
