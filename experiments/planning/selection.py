"""What of the run's config (read by :mod:`.config_files`) the run keeps: the experiments, audits,
figures, illustrations, datasets, Table 2, scorecard, power curves and library comparisons its
``run:`` switch selects, each checked (docs/configuration.md). Every part of the run's plan
(:mod:`.run_plan`) reads this selection.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..engine.availability import fetch_settings
from ..engine.config import (
    ConfigError,
    check_audit_power,
    check_audits,
    check_illustrations,
    check_table2,
    load_experiments,
)
from ..outputs.libraries import check_libraries


class RunSelection:
    """What the run's config selects, checked against workflow/schemas/config.schema.yaml and
    beyond it: raises ConfigError, one line naming the key, for what the schema cannot check.
    Everything configured is checked, what the run switches off included."""

    def __init__(self, config: Mapping):
        self.config = config
        # Everything configured is checked, what the run switches off included.
        configured = load_experiments(config)
        audits = check_audits(config)
        power = check_audit_power(config)
        illustrations = check_illustrations(config)
        table2 = check_table2(config, configured)
        datasets = config.get("datasets") or {}
        settings = {name: fetch_settings(name, entry) for name, entry in datasets.items()}

        run = config.get("run") or {}
        self.experiments = {name: configured[name] for name in _chosen(run, "experiments", configured)}
        self.audits = _chosen(run, "audits", audits)
        self.illustrations = {name: illustrations[name] for name in _chosen(run, "illustrations", illustrations)}
        self.datasets = {name: datasets[name] for name in _chosen(run, "datasets", datasets)}
        self.dataset_settings = {name: settings[name] for name in self.datasets}
        for name, spec in self.experiments.items():
            if spec.dataset is not None and spec.dataset not in self.datasets:
                raise ConfigError(f"run.datasets: leaves out {spec.dataset!r}, which experiment {name!r} reads "
                                  "(switch the experiment off under run.experiments, or keep the dataset)")
        self.figures = self._chosen_figures(run)
        self.fidelity = {name: entry for name, entry in (config.get("fidelity") or {}).items()
                         if name in self.experiments}
        self.table2 = self._chosen_table2(run, table2)
        self.scorecard = self._chosen_scorecard(run)
        self.audit_power = self._chosen_audit_power(run, power)
        # the comparison with the DP libraries (experiments/outputs/libraries.py): its experiments that run
        self.libraries = {name: entry for name, entry in check_libraries(config, configured).items()
                          if name in self.experiments}

    # --- the run switch ------------------------------------------------------------------

    def _chosen_figures(self, run: Mapping) -> dict:
        """The figures of the run: those named under run.figures (each must have every
        experiment it draws running), else every figure whose experiments all run."""
        figures = self.config.get("figures") or {}
        names = _chosen(run, "figures", figures)
        chosen = {}
        for name in names:
            missing = [panel["experiment"] for panel in figures[name]["panels"]
                       if panel["experiment"] not in self.experiments]
            if not missing:
                chosen[name] = figures[name]
            elif "figures" in run:
                raise ConfigError(f"run.figures: figure {name!r} draws experiment {missing[0]!r}, which this run "
                                  "does not run (see run.experiments)")
        return chosen

    def _chosen_table2(self, run: Mapping, table2: dict) -> dict:
        """Table 2 (check_table2's setup) if the run builds it: run.table2 (default true) with
        its protocol experiment running; without the corrected experiment, no erratum."""
        wanted = run.get("table2")
        if not table2:
            if wanted:
                raise ConfigError("run.table2: true, but the config has no table2: section")
            return {}
        if wanted is False:
            return {}
        if table2["protocol"] not in self.experiments:
            if "table2" in run:
                raise ConfigError(f"run.table2: its protocol experiment {table2['protocol']!r} does not run "
                                  "(see run.experiments)")
            return {}
        if table2["corrected"] is not None and table2["corrected"] not in self.experiments:
            entry = {key: value for key, value in self.config["table2"].items() if key != "corrected"}
            return check_table2({**self.config, "table2": entry}, self.experiments)
        return table2

    def _chosen_scorecard(self, run: Mapping) -> dict:
        section = self.config.get("scorecard") or {}
        if run.get("scorecard") and not section:
            raise ConfigError("run.scorecard: true, but the config has no scorecard: section")
        return section if run.get("scorecard", True) else {}

    def _chosen_audit_power(self, run: Mapping, power: dict) -> dict:
        """The power curves (check_audit_power's setup) unless run.audit_power is false."""
        if run.get("audit_power") and not power:
            raise ConfigError("run.audit_power: true, but the config has no audit_power: section")
        return power if run.get("audit_power", True) else {}


def _chosen(run: Mapping, key: str, configured: Iterable[str]) -> list[str]:
    """The names of a config section that the run keeps, in the section's order: those listed
    under run.<key>, or all of them without that list. A listed name the section does not have
    is a ConfigError naming every such name."""
    configured = list(configured)
    if run.get(key) is None:
        return configured
    unknown = [name for name in run[key] if name not in configured]
    if unknown:
        raise ConfigError(f"run.{key}: no {', '.join(map(repr, unknown))} under {key}: "
                          f"(configured: {', '.join(configured) or 'none'})")
    return [name for name in configured if name in run[key]]
