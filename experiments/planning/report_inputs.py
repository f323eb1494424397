"""What the errata, the scorecard and the report page read (workflow/rules/report.smk reads this
part of the run's plan as ``RUN.report``): everything the run made but what needs a dataset it
could not obtain.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from ..outputs.errata import accounting_pair, noscale_setup
from . import paths
from .selection import RunSelection


class ReportInputs:
    """The report's and the scorecard's inputs of the run ``selection`` describes."""

    # the errata figures' PNGs (the tables: paths.ERRATA_ACCOUNTING, paths.ERRATA_NOSCALE)
    ACCOUNTING_FIGURE = paths.fill(paths.FIGURE_PNG, figure="errata_accounting")
    NOSCALE_FIGURE = paths.fill(paths.FIGURE_PNG, figure="errata_noscale")

    def __init__(self, selection: RunSelection, trials, real_data, targets):
        self.selection = selection
        self.trials = trials
        self.real_data = real_data
        self.targets = targets

    @property
    def errata_pairs(self) -> dict[str, list[str]]:
        """Experiments that run PLAN under both published and exact accounting: experiment -> names."""
        return {name: list(pair) for name, spec in self.selection.experiments.items()
                if (pair := accounting_pair(spec.mechanisms))}

    @property
    def errata_noscale(self) -> dict:
        """The PLAN-noscale erratum needs a fidelity experiment that maps the published
        PLAN-noscale curve to one of our mechanisms (gaussian_A in the paper configs); without
        one it is skipped."""
        return noscale_setup(self.selection.config, self.selection.experiments)

    def errata_inputs(self) -> dict:
        noscale = self.errata_noscale
        return {
            **({"noscale_summary": self.targets.summary(noscale["experiment"]),
                "noscale_reference": noscale["reference"]}
               if noscale else {}),
            "summaries": [self.targets.summary(name) for name in self.errata_pairs],
        }

    def errata_noscale_outputs(self, mark_report: Callable = lambda path, key: path) -> dict:
        """The PLAN-noscale erratum's table and PNG (each passed with its key through ``mark_report``:
        Snakemake's report()) and PDF."""
        if not self.errata_noscale:
            return {}
        return {"noscale_table": mark_report(paths.ERRATA_NOSCALE, "noscale_table"),
                "noscale_png": mark_report(self.NOSCALE_FIGURE, "noscale_png"),
                "noscale_pdf": paths.fill(paths.FIGURE_PDF, figure="errata_noscale")}

    @property
    def errata_figures(self) -> list[str]:
        return [self.ACCOUNTING_FIGURE] + ([self.NOSCALE_FIGURE] if self.errata_noscale else [])

    def report_inputs(self) -> dict[str, list[str]]:
        """What the report shows: everything but what needs a dataset this run could not obtain."""
        experiments = [name for name in self.selection.experiments if self.real_data.reproducible(name)]
        fidelity = self.selection.fidelity
        figures = [figure for figure in self.real_data.reproducible_figures() if figure in self.selection.figures]
        inputs = {
            "summaries": [self.targets.summary(name) for name in experiments],
            "fidelity": [paths.fill(paths.FIDELITY, experiment=name) for name in fidelity if name in experiments],
            # read for the published runs' n, beside the fidelity tables
            "references": [entry["reference"] for name, entry in fidelity.items() if name in experiments],
            "figures": [paths.fill(paths.FIGURE_PNG, figure=figure) for figure in figures]
            + ([paths.fill(paths.FIGURE_PNG, figure=self.targets.WORST_CASE)]
               if self.targets.worst_case_panels() else [])
            + [paths.fill(paths.FIGURE_PNG, figure=name) for name in self.selection.illustrations],
            "dataset_figures": [paths.fill(paths.FIGURE_PNG, figure="figure2")]
            if "figure2" in self.real_data.reproducible_figures() else [],
            "run_times": [paths.RUN_TIMES],
            "audit": [paths.AUDIT_TABLE, paths.fill(paths.FIGURE_PNG, figure=self.targets.AUDIT_FIGURE)]
            if self.selection.audits else [],
            "audit_power": [paths.POWER_TABLE, paths.fill(paths.FIGURE_PNG, figure=self.targets.POWER_FIGURE)]
            if self.selection.audit_power else [],
            "libraries": [paths.fill(paths.LIBRARY_TABLE, experiment=name) for name in self.selection.libraries
                          if name in experiments],
        }
        # the page links every figure's full-size PNG and its PDF (written by the same job)
        pngs = inputs["figures"] + inputs["dataset_figures"] + inputs["audit"][1:] + inputs["audit_power"][1:]
        return {**inputs, "figure_pdfs": [path.removesuffix(".png") + ".pdf" for path in pngs]}

    def report_extra_inputs(self) -> dict:
        """The report's inputs that no dataset decides: the errata, Table 2, the statuses, the scorecard."""
        return {
            "errata_table": paths.ERRATA_ACCOUNTING,
            "errata_noscale": self.errata_noscale_outputs().get("noscale_table", []),
            "errata_figures": self.errata_figures,
            "errata_pdfs": [path.removesuffix(".png") + ".pdf" for path in self.errata_figures],
            # tables other stages produce, shown generically (Table 2 of the paper and its erratum)
            "tables": self.targets.table2_outputs,
            "dataset_statuses": self.real_data.dataset_records(),
            "scorecard": [paths.SCORECARD, paths.SCORECARD_VALUES, paths.CLAIMS] if self.selection.scorecard else [],
            "authors_code": self.authors_code,
        }

    @property
    def authors_code(self) -> list[str]:
        """The authors' IOME on Figure 7(b)'s setting (config ``scorecard.authors_code``), if set."""
        path = (self.selection.scorecard or {}).get("authors_code")
        return [path] if path else []

    def run_time_benchmarks(self) -> list[str]:
        """The benchmark files of every job of the experiments the report shows (rule run_times)."""
        return [path for name in self.selection.experiments if self.real_data.reproducible(name)
                for path in self.trials.job_shard_benchmarks(name)]

    def scorecard_inputs(self) -> dict:
        """What the scorecard reads (rule scorecard, workflow/rules/report.smk)."""
        inputs = self.report_inputs()
        return {
            "summaries": inputs["summaries"],
            "figures": inputs["figures"] + inputs["dataset_figures"],
            "published": self.selection.scorecard["published"],
            "quoted": self.selection.scorecard["quoted"],
            "published_values": list(self.selection.scorecard.get("published_values") or []),
            "authors_code": self.authors_code,
            "statuses": self.real_data.dataset_records(),
            "illustrations": [paths.fill(paths.ILLUSTRATION_DATA, figure=name)
                              for name in self.selection.illustrations],
            # Table 2 under the authors' protocol beside the paper's (experiments/outputs/tables.py)
            "table2": self.targets.table2_outputs,
        }

    def scorecard_metrics(self) -> dict[str, dict[str, str]]:
        return {figure: self.targets.figure_metrics(figure) for figure in self.selection.figures}

    def extra_figures(self) -> dict[str, str]:
        """What reproduces no paper figure: the config's own figures and the errata, audit and
        worst-case figures (name -> title, for the scorecard)."""
        return {
            **{name: spec["title"] for name, spec in self.selection.figures.items() if not spec.get("reproduces")},
            **{os.path.basename(path).removesuffix(".png"): "Errata figure" for path in self.errata_figures},
            **({"audit": "Privacy audit: claimed eps and the lower bounds found"} if self.selection.audits else {}),
            **({self.targets.POWER_FIGURE: "Privacy audit: power against broken mechanisms"}
               if self.selection.audit_power else {}),
            **({self.targets.WORST_CASE: "User-level clipping: analytic worst-case errors"}
               if self.targets.worst_case_panels() else {}),
        }
