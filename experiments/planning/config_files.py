"""The config a run reads: its files composed as Snakemake composes them (:func:`compose_configs`:
``--configfile`` files merged over the Snakefile's ``configfile:``, config/config.yaml; dicts key
by key, lists and scalars replaced), then the smoke config's rule applied (docs/configuration.md,
"The smoke config"): every experiment shrunk by one config key, so that an experiment added to the
paper config runs in the smoke config with no edit to it.

``shrink: {trials: 2, n: 600, d: 32, grid_values: 2, overrides: {...}}`` caps every experiment of
the config: its trials at ``trials`` (and a set ``batch_size`` with them); its data sizes (``n``
and any ``n_*`` parameter at ``n``, ``d`` at ``d``), fixed, in the grid or a data source's
default; and each grid to its first ``grid_values`` values (a ``logspace`` grid: its first
values, written out). A grid value that a figure panel filters on (its ``rho:`` or ``where:``) is
kept, one per filter and uncapped, so every figure still draws; the grid's first values fill it
up to ``grid_values``. ``overrides`` then merge over the shrunk entries (dicts key by key, lists
replace): they win over the rule.

The rule is idempotent (a shrunk config shrinks to itself). The workflow writes the shrunk
experiments back into its config (workflow/rules/common.smk), so every job receives them;
:func:`load_config` and the run's plan (:class:`experiments.planning.run_plan.RunPlan`) apply it
too. Without the key nothing changes.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

import yaml

from ..engine.config import ConfigError, grid_values
from ..engine.sources import source_defaults, source_parameters

DEFAULT_CONFIG = "config/config.yaml"  # the Snakefile's configfile:, relative to the working directory


# --- composing configs -------------------------------------------------------------------

def merge_config(target: dict, overlay: Mapping) -> dict:
    """snakemake.utils.update_config: ``overlay`` into ``target`` in place, dicts key by key,
    anything else (lists included) replaced; a non-dict in ``target`` under a dict is replaced."""
    for key, value in overlay.items():
        if isinstance(value, Mapping):
            current = target.get(key)
            target[key] = merge_config(current if isinstance(current, dict) else {}, value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def compose_configs(default: Mapping, *overlays: Mapping) -> dict:
    """The config Snakemake runs with ``configfile: default`` and ``--configfile overlays...``:
    the overlays merged in order, the default merged into them, then the overlays again (so
    their values win, and a dict's keys come in the overlays' order, then the default's others)."""
    given: dict = {}
    for overlay in overlays:
        merge_config(given, overlay)
    if not given:
        return copy.deepcopy(dict(default))
    return merge_config(merge_config(copy.deepcopy(given), default), given)


def load_config(*overlay_paths, default=DEFAULT_CONFIG) -> dict:
    """The config a run of YAML files reads: ``default`` (None: none) and the ``--configfile`` files
    composed, then shrunk by its ``shrink:`` rule if it has one (as workflow/rules/common.smk does)."""
    def read(path):
        return yaml.safe_load(Path(path).read_text()) or {}

    return shrink_config(compose_configs(read(default) if default is not None else {}, *map(read, overlay_paths)))


# --- the smoke config's rule -------------------------------------------------------------

CAPS = ("trials", "n", "d", "grid_values")
SHRINK_KEYS = CAPS + ("overrides",)


def shrink_config(config: dict) -> dict:
    """``config`` with its experiments shrunk by its ``shrink:`` section (a new dict); ``config``
    itself without one."""
    if not config.get("shrink"):
        return config
    return {**config, "experiments": shrink_experiments(config)}


def shrink_experiments(config: Mapping) -> dict:
    """The config's experiments shrunk by its ``shrink:`` section (module docstring); unchanged
    without one. Raises ConfigError naming the key of a bad value."""
    experiments = config.get("experiments") or {}
    rule = config.get("shrink")
    if not rule:
        return experiments
    overrides = _checked(rule, experiments)
    filters = panel_filters(config.get("figures") or {})
    shrunk = {}
    for experiment_id, entry in experiments.items():
        entry = _shrink_entry(f"experiments.{experiment_id}", entry, rule, filters.get(experiment_id, {}))
        shrunk[experiment_id] = merge_config(entry, overrides.get(experiment_id) or {})
    return shrunk


def _checked(rule, experiments) -> dict:
    if not isinstance(rule, Mapping):
        raise ConfigError(f"shrink: needs a mapping of {', '.join(SHRINK_KEYS)}, got {rule!r}")
    for key, value in rule.items():
        if key not in SHRINK_KEYS:
            raise ConfigError(f"shrink.{key}: unknown key; known: {', '.join(SHRINK_KEYS)}")
        if key in CAPS and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"shrink.{key}: needs an integer >= 1, got {value!r}")
    overrides = rule.get("overrides") or {}
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"shrink.overrides: needs a mapping of experiment ids to entries, got {overrides!r}")
    for experiment_id, override in overrides.items():
        if experiment_id not in experiments:
            raise ConfigError(f"shrink.overrides.{experiment_id}: no such experiment (experiments: "
                              f"{sorted(experiments)})")
        if not isinstance(override, Mapping):
            raise ConfigError(f"shrink.overrides.{experiment_id}: needs a mapping (keys of an experiment), "
                              f"got {override!r}")
    return dict(overrides)


def panel_filters(figures: Mapping) -> dict[str, dict[str, list[list]]]:
    """Experiment -> grid parameter -> the value lists that figure panels keep (``rho:`` and
    ``where:``): a panel needs one value of each list in the grid."""
    filters: dict[str, dict[str, list[list]]] = {}
    for figure in figures.values():
        for panel in (figure or {}).get("panels") or [] if isinstance(figure, Mapping) else []:
            if not isinstance(panel, Mapping) or "experiment" not in panel:
                continue
            wanted = {**({"rho": panel["rho"]} if panel.get("rho") is not None else {}),
                      **(panel.get("where") if isinstance(panel.get("where"), Mapping) else {})}
            for parameter, values in wanted.items():
                values = list(values) if isinstance(values, (list, tuple)) else [values]
                filters.setdefault(panel["experiment"], {}).setdefault(parameter, []).append(values)
    return filters


def _size_cap(rule, parameter):
    """The cap of a data parameter: n and n_* at ``n``, d at ``d``, else None."""
    if parameter == "n" or parameter.startswith("n_"):
        return rule.get("n")
    return rule.get("d") if parameter == "d" else None


def _capped(value, cap):
    if cap is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return min(value, cap)


def _same(a, b) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return a == b


def _shrink_entry(where, entry, rule, filters) -> dict:
    entry = copy.deepcopy(dict(entry))
    if "trials" in rule and "trials" in entry:
        entry["trials"] = min(int(entry["trials"]), rule["trials"])
        if "batch_size" in entry:
            entry["batch_size"] = min(int(entry["batch_size"]), entry["trials"])
    data, grid = dict(entry.get("data") or {}), dict(entry.get("grid") or {})
    source = data.get("source")
    try:
        parameters, defaults = source_parameters(source), source_defaults(source)
    except (KeyError, TypeError):  # an unknown source: load_experiments names it
        parameters, defaults = set(data) - {"source"}, {}
    for parameter in sorted(parameters):
        cap = _size_cap(rule, parameter)
        if cap is None or parameter in grid:
            continue
        if parameter in data:
            data[parameter] = _capped(data[parameter], cap)
        elif _capped(defaults.get(parameter), cap) != defaults.get(parameter):
            data[parameter] = cap
    for parameter, values in grid.items():
        grid[parameter] = _shrink_grid(f"{where}.grid.{parameter}", values, _size_cap(rule, parameter),
                                       rule.get("grid_values"), filters.get(parameter, []))
    if "data" in entry:
        entry["data"] = data
    if "grid" in entry:
        entry["grid"] = grid
    return entry


def _shrink_grid(where, values, cap, count, filters) -> list:
    """A grid's values (a logspace written out): one of each panel filter's values, then its first
    values, capped and without repeats, up to ``count`` (None: all), in the grid's order."""
    full = grid_values(where, values)
    positions: list[tuple[int, object]] = []  # (position in the grid, value) of the values kept
    for wanted in filters:
        present = [(i, value) for i, value in enumerate(full) if any(_same(value, w) for w in wanted)]
        if present and not any(_same(value, kept) for _, value in present for _, kept in positions):
            positions.append(present[0])
    for i, value in enumerate(full):
        if count is not None and len(positions) >= count:
            break
        value = _capped(value, cap)
        if not any(_same(value, kept) for _, kept in positions):
            positions.append((i, value))
    return [value for _, value in sorted(positions, key=lambda pair: pair[0])]
