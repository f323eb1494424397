"""The real datasets of a run (workflow/rules/datasets.smk and the Snakefile read this part of the
run's plan as ``RUN.real_data``): what the fetch checkpoint found decides which experiments and
figures the run can reproduce; the end of the run names what it could not obtain
(docs/workflow.md, "Real datasets").
"""
from __future__ import annotations

import os
from collections.abc import Callable

from datasets.real import REAL_DATASETS

from ..engine.availability import missing_summary, not_reproduced, read_status, stale_status
from . import paths
from .selection import RunSelection


class RealData:
    """The datasets ``selection`` keeps. ``status_file(dataset)`` returns the fetch checkpoint's
    status file of a dataset (in the workflow, Snakemake's ``checkpoints.fetch_dataset``); a
    status written for other settings raises ``stale_error`` (Snakemake's WorkflowError there).
    ``from_committed``: a rebuild from the committed results, which reads the statuses the
    committed run recorded (paths.DATASET_RECORD) instead of fetching, and parses nothing."""

    def __init__(self, selection: RunSelection, *, status_file: Callable[[str], str] | None = None,
                 stale_error: type[Exception] = ValueError, from_committed: bool = False):
        self.selection = selection
        self.from_committed = from_committed
        if from_committed:
            status_file = self.dataset_record
        self._status_file = status_file
        self._stale_error = stale_error
        # dataset -> the status file this run read (dataset_status): the end of the run reports on them alone
        self.status_files_read: dict[str, str] = {}

    @property
    def figure2_datasets(self) -> list[str]:
        """The datasets PLAN Figure 2 draws (their item variances): the binary ones, not MNIST."""
        return [dataset for dataset in self.selection.datasets if REAL_DATASETS[dataset].kind == "binary"]

    def figure2_inputs(self) -> list[str]:
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset) for dataset in self.figure2_datasets]

    @staticmethod
    def dataset_record(dataset: str) -> str:
        return paths.fill(paths.DATASET_RECORD, dataset=dataset)

    def dataset_records(self) -> list[str]:
        """What the run's fetches found, as the report and the scorecard read it (a copy of each
        status, kept with the results: rule dataset_record)."""
        return [self.dataset_record(dataset) for dataset in self.selection.datasets]

    def processed_dataset(self, dataset: str) -> list[str]:
        """The processed file of ``dataset`` if the fetch found it, else nothing: every configured
        dataset the run could obtain is parsed and verified, whether or not an experiment or
        Figure 2 reads it (MNIST until the IOME experiments are configured). A rebuild from the
        committed results parses nothing."""
        if self.from_committed:
            return []
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset)] if self.dataset_available(dataset) else []

    def dataset_status(self, dataset: str) -> dict:
        """The fetch checkpoint's finding (Snakemake raises IncompleteCheckpointException before
        it ran). Snakemake's checkpoint returns only for a fetch job in this run's DAG, so the
        datasets read here are those this run's targets need."""
        if self._status_file is None:
            raise RuntimeError("this plan has no status_file: it cannot read real datasets' fetch statuses")
        path = self._status_file(dataset)
        if self.from_committed and not os.path.exists(path):
            raise self._stale_error(f"{path} is missing: a rebuild from the committed results reads what the "
                                    f"committed run's fetch of {dataset!r} found there (a full run writes it)")
        status = read_status(path)
        stale = stale_status(status, self.selection.dataset_settings[dataset], path)
        if stale:
            raise self._stale_error(stale)
        self.status_files_read[dataset] = path
        return status

    def dataset_available(self, dataset: str) -> bool:
        return self.dataset_status(dataset)["available"]

    def raw_dataset_file(self, dataset: str) -> str | list:
        """The raw file the fetch found; for a format of several files (MNIST's four IDX files)
        each of them, so that a changed one reparses (the status names their directory). Without
        one (a target that needs the dataset was asked for by name) nothing: the parse job then
        fails with the status's message, so that the run's hooks still run (an error raised here
        would skip them and leave the status behind)."""
        status = self.dataset_status(dataset)
        if not status["available"]:
            return []
        raw_format = REAL_DATASETS[dataset].raw_format(status["source"]["format"])
        return [str(path) for path in raw_format.files(status["raw"])] if raw_format.members else status["raw"]

    def reproducible(self, experiment: str) -> bool:
        """False for an experiment on a dataset this run could not obtain."""
        dataset = self.selection.experiments[experiment].dataset
        return dataset is None or self.dataset_available(dataset)

    def figure_reproducible(self, figure: str) -> bool:
        if figure == "figure2":
            return all(self.dataset_available(dataset) for dataset in self.figure2_datasets)
        return all(self.reproducible(panel["experiment"]) for panel in self.selection.figures[figure]["panels"])

    def reproducible_figures(self) -> list[str]:
        figures = list(self.selection.figures) + (["figure2"] if self.figure2_datasets else [])
        return [figure for figure in figures if self.figure_reproducible(figure)]

    @property
    def dataset_experiments(self) -> dict[str, list[str]]:
        """dataset -> the experiments that read it."""
        return {dataset: [name for name, spec in self.selection.experiments.items() if spec.dataset == dataset]
                for dataset in self.selection.datasets}

    @property
    def dataset_figures(self) -> dict[str, list[str]]:
        """dataset -> the figures that need it (Figure 2 draws every binary dataset)."""
        figure2 = self.figure2_datasets
        return {dataset: [figure for figure, spec in self.selection.figures.items()
                          if any(self.selection.experiments[panel["experiment"]].dataset == dataset
                                 for panel in spec["panels"])] + (["figure2"] if dataset in figure2 else [])
                for dataset in self.selection.datasets}

    def finish_datasets(self, stream, *, failed: bool = False) -> None:
        """End of a run: names the datasets this run needed but could not obtain (as the report
        does) on ``stream``, removes their status files so that the next run tries again, and
        exits non-zero (unless the run ``failed`` anyway). Datasets this run did not read are
        none of its business. A rebuild from the committed results leaves the committed records
        alone and only names what the committed run could not obtain."""
        if self.from_committed:
            missing = [dataset for dataset, path in self.status_files_read.items()
                       if not read_status(path)["available"]]
            if missing:
                print(f"rebuilt from the committed results, whose run could not obtain {', '.join(missing)} "
                      f"(the report names the sources tried)", file=stream)
            return
        statuses = []
        for dataset in self.selection.datasets:
            path = self.status_files_read.get(dataset)
            if path is not None and os.path.exists(path):
                status = read_status(path)
                if not status["available"]:
                    statuses.append(status)
                    os.remove(path)
        if statuses:
            print(missing_summary(not_reproduced(statuses, self.dataset_experiments, self.dataset_figures)),
                  file=stream)
            if not failed:
                raise SystemExit(1)
