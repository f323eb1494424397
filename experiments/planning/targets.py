"""What a run builds (the Snakefile's ``rule all`` and the aggregate, figure, audit and power rule
files read this part of the run's plan as ``RUN.targets``): the summaries, fidelity tables,
library comparisons and figures of its experiments, Table 2, the audit and its power curves,
the illustrations and the report; those that need a real dataset only once the fetch found it.
"""
from __future__ import annotations

from collections.abc import Iterable

import mechanisms

from ..engine.config import audit_fingerprint, audit_variant
from ..engine.sources import source_defaults
from . import paths
from .selection import RunSelection


class Targets:
    """The targets of the run ``selection`` describes (``trials``: its trial jobs, ``real_data``:
    what the fetch found)."""

    # the figures no config entry draws (their paths: experiments/planning/paths.py)
    AUDIT_FIGURE = "audit"
    POWER_FIGURE = "audit_power"
    WORST_CASE = "userlevel_worst_case"

    def __init__(self, selection: RunSelection, trials, real_data):
        self.selection = selection
        self.trials = trials
        self.real_data = real_data

    def summary(self, experiment: str) -> str:
        return paths.fill(paths.SUMMARY, experiment=experiment)

    @staticmethod
    def figure_files(name: str) -> list[str]:
        """A figure's PDF and PNG (one job writes both)."""
        return paths.figure_files(name)

    @property
    def table2_outputs(self) -> list[str]:
        """PLAN Table 2 beside the paper's numbers, and the erratum beside our corrected version
        (experiments/outputs/tables.py)."""
        if not self.selection.table2:
            return []
        return [paths.TABLE2] + ([paths.TABLE2_ERRATUM] if self.selection.table2.get("corrected") else [])

    @property
    def illustration_targets(self) -> list[str]:
        return [path for name in self.selection.illustrations
                for path in (*self.figure_files(name), paths.fill(paths.ILLUSTRATION_DATA, figure=name))]

    def power_file(self, mechanism: str) -> str:
        """One mechanism's power curve (a job of its own)."""
        return paths.fill(paths.POWER, mechanism=mechanism)

    @property
    def power_files(self) -> list[str]:
        return [self.power_file(mechanism) for mechanism in self.selection.audit_power.get("mechanisms", {})]

    @property
    def power_outputs(self) -> list[str]:
        """The power curves' table and figure (PDF, PNG), if the run draws them."""
        return [paths.POWER_TABLE, *self.figure_files(self.POWER_FIGURE)] if self.selection.audit_power else []

    def wildcard_patterns(self) -> dict[str, str]:
        """The global wildcard constraints: only the run's figures match {figure} (other outputs
        in figures/, the errata, have rules of their own)."""
        return {"experiment": "[A-Za-z0-9_]+", "cell": "[^/]+", "setting": "[^/]+",
                "figure": paths.constraint(self.selection.figures),
                "dataset": paths.constraint(self.selection.datasets),
                "audit": paths.constraint(self.selection.audits),
                "mechanism": paths.constraint(self.selection.audit_power.get("mechanisms", {}))}

    @property
    def illustration_pattern(self) -> str:
        return paths.constraint(self.selection.illustrations)

    def audit_fingerprint(self, audit: str) -> str | None:
        """What an audit of a variant depends on beyond runs and budget (its variant, pair and a
        plug-in's digest); None for a registered audit (config.audit_fingerprint)."""
        return audit_fingerprint(self.selection.config, audit)

    def audit_inputs(self, audit: str) -> list[str]:
        """The plug-in file an audit of a configured variant runs, if any."""
        spec = audit_variant(self.selection.config, audit)
        path = mechanisms.plugin_file(spec.algorithm) if spec is not None else None
        return [path] if path is not None else []

    def figure_summaries(self, figure: str) -> list[str]:
        return sorted({self.summary(panel["experiment"]) for panel in self.selection.figures[figure]["panels"]})

    def figure_metrics(self, figure: str) -> dict[str, str]:
        """Each panel's experiment -> its metric (the y label names it)."""
        return {panel["experiment"]: self.selection.experiments[panel["experiment"]].metric
                for panel in self.selection.figures[figure]["panels"]
                if panel["experiment"] in self.selection.experiments}

    def worst_case_panels(self) -> list[dict]:
        """The analytic figure's panels: the collection, bound and eps grid of each user-level
        experiment, drawn for d = 1 and 2 (the user-level paper's equations (7), (8)) or at its
        own d >= 2."""
        panels = []
        for experiment, spec in self.selection.experiments.items():
            if spec.source != "userlevel":
                continue
            data = {**source_defaults(spec.source), **dict(spec.data)}
            d = int(data["d"])
            panels.append({
                "title": experiment,
                "collection": {"collection": data["collection"],
                               **{key: data[key] for key in ("M", "L", "m_star", "exponent", "max_count")}},
                "bound": data["bound"],
                "eps": list(dict(spec.grid)[spec.budget]),
                "dimensions": [1, 2] if d == 1 else [d],
            })
        return panels

    def experiment_targets(self, experiments: Iterable[str]) -> list[str]:
        """The summaries, fidelity tables, library comparisons and figures of ``experiments``
        (figures whose panels are all among them)."""
        experiments = list(experiments)
        targets = [self.summary(experiment) for experiment in experiments]
        targets += [paths.fill(paths.FIDELITY, experiment=name)
                    for name in self.selection.fidelity if name in experiments]
        targets += [paths.fill(paths.LIBRARY_TABLE, experiment=name)
                    for name in self.selection.libraries if name in experiments]
        for figure, spec in self.selection.figures.items():
            if {panel["experiment"] for panel in spec["panels"]} <= set(experiments):
                targets += self.figure_files(figure)
        return targets

    def static_targets(self) -> list[str]:
        """Everything that needs no real dataset (known before any fetch)."""
        targets = self.experiment_targets(name for name, spec in self.selection.experiments.items()
                                          if spec.dataset is None)
        targets += self.table2_outputs
        if self.worst_case_panels():
            targets += self.figure_files(self.WORST_CASE)
        if self.selection.audits:
            targets += [paths.AUDIT_TABLE, *self.figure_files(self.AUDIT_FIGURE)]
        targets += self.power_outputs
        targets += self.illustration_targets
        return targets + [paths.REPORT]

    def dataset_targets(self, dataset: str) -> list[str]:
        """What needs ``dataset``, if the fetch checkpoint found it, else nothing (the report and
        the end of the run name it): summaries, fidelity tables and figures whose real datasets
        were all found, and Figure 2."""
        if not self.real_data.dataset_available(dataset):
            return []
        static = set(self.static_targets())
        reproducible = filter(self.real_data.reproducible, self.selection.experiments)
        targets = [target for target in self.experiment_targets(reproducible)
                   if target not in static]
        if dataset in self.real_data.figure2_datasets and self.real_data.figure_reproducible("figure2"):
            targets += self.figure_files("figure2")
        return targets
