"""Estimators of one's own, named in a config as ``"package.module:function"`` or
``"path/to/file.py:function"`` (docs/design.md §4; docs/configuration.md, "Your own estimator").

:mod:`.registry` resolves such a name here, so that ``call_arguments``, ``budget_name``,
``mechanism_options`` and ``make_mechanism`` take it as they take a registered name. A file path
is relative to the working directory (where snakemake runs); a module must be importable.

Two contracts, each broken with one error that names the plug-in and what is wrong:

- before any call, when the name is resolved (:func:`load_plugin`, :class:`PluginError`): the
  name is well formed; the file or module exists and imports; the attribute is callable; its
  first parameter takes the data positionally; it takes the keyword arguments ``rng`` and exactly
  one budget, ``rho`` (zCDP) or ``eps`` (pure DP); the only other engine arguments it takes are
  ``bounds``, or for a batched user-level estimator (docs/design.md §5.7) ``users``, ``bound``
  and ``batched`` together;
- after every call (:func:`check_estimate`, :class:`PluginContractError`): it returned an
  ``Estimate`` whose mean has one finite value per coordinate and whose ledger is non-empty,
  holds only ``LedgerEntry`` (rho) or only ``PureLedgerEntry`` (eps) items of finite amounts
  >= 0, and sums to the budget it was called with.

A plug-in is given the data as a plain array or a CSR matrix (a :class:`SharedSample` is
unwrapped), read-only: the other mechanisms of the trial see the same arrays.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import math
import re
import sys
from dataclasses import dataclass
from numbers import Real
from pathlib import Path

import numpy as np
import scipy.sparse

from ._layout import SharedSample
from .accounting import Estimate, LedgerEntry, MechanismRefusal, PureLedgerEntry

# What the engine passes a mechanism (docs/design.md §4): the data (first, positionally), a
# budget, the randomness, the universe; the user-level family its user index and batching; and the
# public knowledge a data source may state beyond the universe (CoinPress's prior ball and
# sigma_max, docs/design.md §5.9).
CALL_ARGUMENTS = ("x", "samples", "rho", "eps", "bounds", "bound", "users", "rng", "batched", "prior_ball", "max_std")
BUDGET_NAMES = ("rho", "eps")
DATA_ARGUMENTS = ("x", "samples")
USER_LEVEL_ARGUMENTS = ("users", "bound", "batched")
LEDGER_ENTRIES = {"rho": LedgerEntry, "eps": PureLedgerEntry}
LEDGER_TOLERANCE = 1e-9  # relative: a ledger's sum against the budget of the call

_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_FORM = "expected 'package.module:function' or 'path/to/file.py:function'"


class PluginError(ValueError):
    """A plug-in that cannot be used: a malformed name, a file or module that does not import,
    or a function whose signature breaks the calling convention."""


class PluginContractError(ValueError):
    """A plug-in returned what the engine cannot use: no Estimate, a mean of the wrong shape
    or not finite, or a ledger that is empty, mixes units or does not sum to the budget."""


@dataclass(frozen=True)
class Plugin:
    """A loaded plug-in: its config name, the function, the file its code is read from (None:
    a module without one), and what its signature says."""

    name: str
    function: object
    source: Path | None
    budget_name: str
    budget_default: object  # the budget's default in the signature (inspect.Parameter.empty: none)
    user_level: bool

    def mechanism(self, options: dict):
        """``f(x, **arguments)``: the plug-in with ``options`` fixed, given plain read-only data,
        its result checked (:func:`check_estimate`)."""
        function = functools.partial(self.function, **options)

        @functools.wraps(self.function)
        def mechanism(x, **arguments):
            data = plugin_data(x)
            try:
                estimate = function(data, **arguments)
            except MechanismRefusal:
                raise  # declining an input is an outcome the run records (experiments/engine/trials.py)
            except Exception as error:  # the user's code: named, so that a run's log says whose it is
                raise PluginError(f"plug-in {self.name!r} raised {type(error).__name__}: {error}") from error
            check_estimate(estimate, plugin=self.name, budget_name=self.budget_name,
                           budget=arguments.get(self.budget_name, self.budget_default),
                           shape=self.mean_shape(data, arguments))
            return estimate

        return mechanism

    def mean_shape(self, data, arguments) -> tuple[int, ...]:
        """The shape of the mean a call on ``data`` must return: (d,) for n x d rows; for the
        user-level family (samples (n,) or (n, d), batched (B, n) or (B, n, d)) (d,) or (B, d)."""
        if not self.user_level:
            return (data.shape[-1],)
        batched = bool(arguments.get("batched", False))
        coordinates = 1 if data.ndim == (2 if batched else 1) else data.shape[-1]
        return (data.shape[0], coordinates) if batched else (coordinates,)


def is_plugin(algorithm) -> bool:
    """Whether ``algorithm`` names a plug-in (registered names have no colon)."""
    return isinstance(algorithm, str) and ":" in algorithm


def parse_name(name: str) -> tuple[str, str]:
    """(file path or module, attribute) of a plug-in name; PluginError if it is malformed."""
    target, _, attribute = name.rpartition(":")
    if not target or not attribute.isidentifier():
        raise PluginError(f"plug-in {name!r} is malformed: {_FORM}")
    if not target.endswith(".py") and not _MODULE_PATH.fullmatch(target):
        raise PluginError(f"plug-in {name!r} is malformed: {target!r} is neither a dotted module name nor a .py "
                          f"file; {_FORM}")
    return target, attribute


_LOADED: dict[tuple, Plugin] = {}


def load_plugin(name: str) -> Plugin:
    """The plug-in ``name`` refers to, loaded and its signature checked (module docstring).
    Cached: a file is loaded again only when its contents change; a module is imported once per
    process."""
    target, attribute = parse_name(name)
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise PluginError(f"plug-in {name!r}: no file {target!r} (looked for {path}; a relative path is read from "
                              "the working directory, where snakemake runs)")
        digest = _digest(path)
        key = (name, str(path), digest)
        if key not in _LOADED:
            _LOADED[key] = _checked(name, _load_file(name, path), path.name, attribute, path)
        return _LOADED[key]
    key = (name,)
    if key not in _LOADED:
        module = _import(name, target)
        source = Path(module.__file__) if getattr(module, "__file__", None) else None
        _LOADED[key] = _checked(name, module, target, attribute, source)
    return _LOADED[key]


def source_digest(name: str) -> str | None:
    """The SHA-256 of the plug-in's source file as it is now (None: a module without a file):
    what the cells' fingerprints hold, so that editing the file reruns its cells."""
    source = load_plugin(name).source
    return _digest(source) if source is not None else None


def plugin_file(name: str) -> str | None:
    """The file a file plug-in names, as written (relative to the working directory); None for
    a module."""
    target, _ = parse_name(name)
    return target if target.endswith(".py") else None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_file(name: str, path: Path):
    """The module of a plug-in file, under a stable name of its own (its path's hash): a class
    it defines can be found by that name (pickling, dataclasses)."""
    stem = re.sub(r"\W", "_", path.stem)
    module_name = f"mechanism_plugin_{stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[module_name]
        raise PluginError(f"plug-in {name!r}: importing {path.name} raised {type(error).__name__}: {error}") from error
    return module


def _import(name: str, target: str):
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name is not None and (target == error.name or target.startswith(error.name + ".")):
            raise PluginError(f"plug-in {name!r}: no module {target!r} on the Python path (install it, add its "
                              "folder to PYTHONPATH, or name the file: 'path/to/file.py:function')") from error
        raise PluginError(f"plug-in {name!r}: importing {target} raised {type(error).__name__}: {error}") from error
    except Exception as error:
        raise PluginError(f"plug-in {name!r}: importing {target} raised {type(error).__name__}: {error}") from error


def _checked(name: str, module, label: str, attribute: str, source: Path | None) -> Plugin:
    """The plug-in's function (``label``: its file's or module's name) with its signature checked
    against the calling convention."""
    if not hasattr(module, attribute):
        raise PluginError(f"plug-in {name!r}: {label} has no attribute {attribute!r}")
    function = getattr(module, attribute)
    if not callable(function):
        raise PluginError(f"plug-in {name!r}: {attribute!r} is a {type(function).__name__}, not a function")
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError) as error:
        raise PluginError(f"plug-in {name!r}: its signature cannot be read ({error})") from error
    call = f"{attribute}(x, *, rho or eps, rng, ...)"
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not parameters or parameters[0].kind not in positional:
        raise PluginError(f"plug-in {name!r}: its first parameter must take the data positionally; the engine calls "
                          f"{call}")
    data = parameters[0].name
    if data in CALL_ARGUMENTS and data not in DATA_ARGUMENTS:
        raise PluginError(f"plug-in {name!r}: its first parameter, the data, is named {data!r}, an argument the "
                          "engine passes by keyword")
    for parameter in parameters[1:]:
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY and parameter.default is inspect.Parameter.empty:
            raise PluginError(f"plug-in {name!r}: parameter {parameter.name!r} is positional-only without a default; "
                              "the engine passes everything but the data by keyword")
    keywords = [p.name for p in parameters[1:]
                if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    if "rng" not in keywords:
        raise PluginError(f"plug-in {name!r}: takes no keyword argument 'rng' (the engine passes its "
                          f"numpy.random.Generator as rng=); the engine calls {call}")
    budgets = [budget for budget in BUDGET_NAMES if budget in keywords]
    if len(budgets) != 1:
        taken = "both rho and eps" if budgets else "neither rho nor eps"
        raise PluginError(f"plug-in {name!r}: takes {taken}; it must take exactly one budget, rho (zCDP) or eps "
                          "(pure DP), in which its ledger is kept")
    engine = [keyword for keyword in keywords if keyword in CALL_ARGUMENTS and keyword not in ("rng", budgets[0])]
    misplaced = [keyword for keyword in engine if keyword in DATA_ARGUMENTS]
    if misplaced:
        raise PluginError(f"plug-in {name!r}: takes {misplaced[0]!r} by keyword; the data come as the first "
                          "positional argument")
    user_level = [keyword for keyword in engine if keyword in USER_LEVEL_ARGUMENTS]
    if user_level and (set(user_level) != set(USER_LEVEL_ARGUMENTS) or "bounds" in engine or budgets[0] != "eps"):
        raise PluginError(f"plug-in {name!r}: takes {', '.join(engine)} with {budgets[0]}; the engine passes a "
                          "per-trial estimator bounds (if it takes them), and a batched user-level one (eps) users, "
                          "bound and batched, all three")
    budget = next(p for p in parameters if p.name == budgets[0])
    return Plugin(name=name, function=function, source=source, budget_name=budgets[0], budget_default=budget.default,
                  user_level=bool(user_level))


def plugin_data(x):
    """What a plug-in is given for ``x``: the plain array or CSR matrix (a :class:`SharedSample`
    unwrapped), read-only and sharing its memory, so a plug-in cannot change what the other
    mechanisms of the trial see (:func:`_read_only`)."""
    if isinstance(x, SharedSample):
        x = x.x
    if scipy.sparse.issparse(x):
        x = x.tocsr()
        return scipy.sparse.csr_matrix((_read_only(x.data), _read_only(x.indices), _read_only(x.indptr)),
                                       shape=x.shape, copy=False)
    return _read_only(np.asarray(x))


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array`` through a read-only buffer (no copy): unlike a view with its flag cleared, whose
    flag ``x.flags.writeable = True`` sets back while the base is writeable, an array on a
    read-only buffer refuses the flag. (Code that reaches the original through ``x.base.obj`` is
    not stopped: a plug-in is trusted code, docs/configuration.md#your-own-estimator.) A dtype the
    buffer protocol cannot carry (datetime, timedelta) is given as a read-only copy: writing to it
    changes nothing shared."""
    try:
        return np.asarray(memoryview(array).toreadonly())
    except (TypeError, ValueError, BufferError):
        copy = np.array(array, copy=True)
        copy.flags.writeable = False
        return copy


def check_estimate(estimate, *, plugin: str, budget_name: str, budget: float, shape: tuple[int, ...]) -> None:
    """PluginContractError unless ``estimate`` is an Estimate whose mean has ``shape`` and is
    finite, and whose ledger is non-empty, in ``budget_name``'s one unit (``LEDGER_ENTRIES``),
    of finite amounts >= 0 summing to ``budget`` (relative tolerance ``LEDGER_TOLERANCE``)."""
    if not isinstance(estimate, Estimate):
        raise PluginContractError(f"plug-in {plugin!r} returned a {type(estimate).__name__}, not a "
                                  "mechanisms.Estimate(mean=..., ledger=...)")
    mean = np.asarray(estimate.mean)
    if mean.shape != shape:
        raise PluginContractError(f"plug-in {plugin!r} returned a mean of shape {mean.shape}; expected {shape}, "
                                  "one value per coordinate of the data")
    if mean.dtype.kind not in "iuf":  # booleans too: a mean of 0/1 flags is no estimate of a mean
        raise PluginContractError(f"plug-in {plugin!r} returned a mean of dtype {mean.dtype}, not real numbers")
    bad = np.flatnonzero(~np.isfinite(mean.reshape(-1)))
    if bad.size:
        raise PluginContractError(f"plug-in {plugin!r} returned a mean with {bad.size} non-finite value(s), the "
                                  f"first {mean.reshape(-1)[bad[0]]} at flat index {bad[0]}")
    ledger = estimate.ledger
    entry = LEDGER_ENTRIES[budget_name]
    if not isinstance(ledger, (tuple, list)) or not ledger:
        raise PluginContractError(f"plug-in {plugin!r} returned the ledger {ledger!r}; book every share of the "
                                  f"budget as {entry.__name__}(step, {budget_name}) entries")
    for item in ledger:
        if not isinstance(item, entry):
            raise PluginContractError(f"plug-in {plugin!r} booked {item!r}; a plug-in that takes {budget_name} books "
                                      f"{entry.__name__}(step, {budget_name}) entries only")
        amount = item.amount
        if isinstance(amount, bool) or not isinstance(amount, Real) or not (math.isfinite(amount) and amount >= 0):
            raise PluginContractError(f"plug-in {plugin!r} booked {item!r}; every share must be finite and >= 0")
    total = math.fsum(item.amount for item in ledger)
    if not math.isclose(total, budget, rel_tol=LEDGER_TOLERANCE):
        raise PluginContractError(f"plug-in {plugin!r}: its ledger sums to {total!r} {budget_name}, not the "
                                  f"{budget_name}={budget!r} it was called with (book unspent shares as "
                                  f"{entry.__name__}('unspent', ...))")
