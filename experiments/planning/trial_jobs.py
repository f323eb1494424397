"""The jobs that run an experiment's trials (workflow/rules/trials.smk reads this part of the
run's plan as ``RUN.trials``): one job per cell, or with ``share_rho`` one per setting (every
budget value of it), their outputs, the cells each one writes, the fingerprints that rerun them,
and how a long job splits into trial shards (experiments/planning/shards.py;
docs/configuration.md#trial-shards).
"""
from __future__ import annotations

from collections.abc import Mapping

import mechanisms

from ..engine.config import format_value
from . import paths
from . import resources as job_resources
from . import shards as trial_shards
from .selection import RunSelection

# Trial shards (experiments/planning/shards.py): the default target job length, and how far below a fair
# share of the run per core a local run's jobs need not go (docs/configuration.md#trial-shards).
# List scheduling ends within one job of work / cores; jobs under a quarter of that share cost a
# run at most 25 % over it, and splitting them further only adds start-ups (1.4 s each in a
# local job, 10-17 s in a Slurm job; docs/cluster.md).
DEFAULT_SHARD_SECONDS = 120.0
FAIR_SHARE_FRACTION = 0.25


class TrialJobs:
    """The trial jobs of the experiments ``selection`` keeps; ``cores``: the cores of a local run
    (None: a cluster, or a job of one), which set its shards' fair-share floor."""

    def __init__(self, selection: RunSelection, *, cores: int | None = None):
        self.selection = selection
        self.cores = cores

    @property
    def shared_experiments(self) -> list[str]:
        """Experiments whose budget values run in one job per setting (share_rho)."""
        return [name for name, spec in self.selection.experiments.items() if spec.share_rho]

    @property
    def unshared_pattern(self) -> str:
        shared = self.shared_experiments
        return paths.constraint(name for name in self.selection.experiments if name not in shared)

    def cell_files(self, experiment: str) -> list[str]:
        spec = self.selection.experiments[experiment]
        return [paths.fill(paths.CELL, experiment=experiment, cell=cell.id, suffix=spec.cell_suffix)
                for cell in spec.cells()]

    def cell_benchmarks(self, experiment: str) -> list[str]:
        """The Snakemake benchmark file of every job of the experiment (one per cell, or one per
        setting with share_rho)."""
        return [paths.fill(paths.JOB_BENCHMARK, experiment=experiment, job=job) for job in self.job_names(experiment)]

    def setting_outputs(self, experiment: str) -> list[str]:
        """The cell files of one setting job: a {setting} wildcard and every budget value of the
        grid (a grid of the budget alone has a single setting and no wildcard)."""
        suffix = self.selection.experiments[experiment].cell_suffix
        return [paths.fill(paths.CELL, experiment=experiment, cell=cell, suffix=suffix)
                for cell in self.setting_cell_patterns(experiment)]

    def setting_cell_patterns(self, experiment: str) -> list[str]:
        """The ids of a setting job's cells, in its outputs' order: ``{setting}_<budget>=<value>``
        for every budget value (a grid of the budget alone: ``<budget>=<value>``)."""
        spec = self.selection.experiments[experiment]
        prefix = "{setting}_" if spec.setting_names else ""
        return [f"{prefix}{spec.budget}={format_value(v)}" for v in dict(spec.grid)[spec.budget]]

    def setting_job(self, experiment: str) -> str:
        """The job name in a setting job's log and benchmark paths: the {setting} wildcard, or
        "all" for a grid of the budget alone."""
        return "{setting}" if self.selection.experiments[experiment].setting_names else "all"

    def job_cells(self, experiment: str, wildcards: Mapping) -> list:
        """The cells a cell job (a {cell} wildcard) or a setting job ({setting}, or none) runs."""
        spec = self.selection.experiments[experiment]
        if wildcards.get("cell") is not None:
            return [spec.cell(wildcards.get("cell"))]
        return spec.settings()[wildcards.get("setting") or ""]

    def job_cell_ids(self, experiment: str, wildcards: Mapping) -> list[str]:
        """The ids of the cells a cell, setting or shard job writes, in the order of its outputs."""
        return [cell.id for cell in self.job_cells(experiment, wildcards)]

    def cell_fingerprint(self, experiment: str, cell: str) -> str:
        spec = self.selection.experiments[experiment]
        return spec.fingerprint(spec.cell(cell))

    def setting_fingerprints(self, experiment: str, wildcards: Mapping) -> list[str]:
        spec = self.selection.experiments[experiment]
        return [spec.fingerprint(cell) for cell in self.job_cells(experiment, wildcards)]

    def plugin_inputs(self, experiment: str) -> list[str]:
        """The plug-in files an experiment's mechanisms name (docs/configuration.md): an edited
        file reruns its jobs (their fingerprints hold its digest too, for module plug-ins)."""
        files = (mechanisms.plugin_file(m.algorithm) for m in self.selection.experiments[experiment].mechanisms)
        return sorted({path for path in files if path is not None})

    def dataset_inputs(self, experiment: str) -> list[str]:
        """The processed dataset a real-data experiment's jobs read: a re-parsed dataset reruns them."""
        dataset = self.selection.experiments[experiment].dataset
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset)] if dataset else []

    def job_names(self, experiment: str) -> list[str]:
        """The name of every cell or setting job of the experiment (its cell id, its setting id, or
        "all" for a grid of the budget alone): the stem of its log, benchmark and shard layout."""
        spec = self.selection.experiments[experiment]
        if spec.share_rho:
            return [setting or "all" for setting in spec.settings()]
        return [cell.id for cell in spec.cells()]

    def named_job_cells(self, experiment: str, job: str) -> list:
        spec = self.selection.experiments[experiment]
        if spec.share_rho:
            return spec.settings()["" if job == "all" and not spec.setting_names else job]
        return [spec.cell(job)]

    def cells_work_seconds(self, experiment: str, cells: list) -> float:
        """The estimated seconds of a job's trials, without its start-up (experiments/planning/resources.py)."""
        return job_resources.seconds(self.selection.experiments[experiment], cells) - job_resources.START_SECONDS

    def job_work_seconds(self, experiment: str, job: str) -> float:
        """The estimated seconds of a named job's trials (see :meth:`job_names`), start-up left out."""
        return self.cells_work_seconds(experiment, self.named_job_cells(experiment, job))

    @property
    def run_work_seconds(self) -> float:
        """The estimated seconds of every cell and setting job of the run, start-ups left out."""
        if not hasattr(self, "_run_work_seconds"):
            self._run_work_seconds = sum(self.job_work_seconds(name, job)
                                         for name in self.selection.experiments for job in self.job_names(name))
        return self._run_work_seconds

    def shard_target_seconds(self, experiment: str) -> float:
        """The target length of the experiment's jobs: its shard_seconds, else the config's (default
        120 s), but in a local run on ``cores`` never below a quarter of the run's work per core:
        there, shorter jobs would not end the run sooner (on 2 cores nothing is split)."""
        spec = self.selection.experiments[experiment]
        target = spec.shard_seconds or float(self.selection.config.get("shard_seconds", DEFAULT_SHARD_SECONDS))
        if self.cores is None or spec.shard_seconds is not None:
            return target
        return max(target, FAIR_SHARE_FRACTION * self.run_work_seconds / self.cores)

    def shard_layout_file(self, experiment: str, job: str) -> str:
        """Where a job's merge records the shard ranges it was merged from."""
        return paths.fill(paths.SHARD_LAYOUT, experiment=experiment, job=job)

    def shard_layout(self, experiment: str, job: str) -> list[range]:
        """The trial ranges of a job's shards (one range: not split). The layout a finished job
        recorded for the same cell fingerprints is kept, so that a new shard count or a run on
        other cores recomputes nothing; else it follows the config."""
        spec = self.selection.experiments[experiment]
        recorded = trial_shards.read_layout(self.shard_layout_file(experiment, job),
                                            [spec.fingerprint(cell) for cell in self.named_job_cells(experiment, job)])
        return recorded if recorded is not None else self.configured_shard_layout(experiment, job)

    def configured_shard_layout(self, experiment: str, job: str) -> list[range]:
        """The trial ranges the config asks for (its shards, or its target length on this run's
        cores), whatever a finished job recorded."""
        spec = self.selection.experiments[experiment]
        count = trial_shards.shard_count(spec, self.job_work_seconds(experiment, job),
                                         self.shard_target_seconds(experiment))
        return trial_shards.trial_ranges(spec, count)

    def job_name(self, experiment: str, wildcards: Mapping) -> str:
        return wildcards.get("cell") or wildcards.get("setting") or "all"

    def merges_shards(self, experiment: str, wildcards: Mapping) -> bool:
        return len(self.shard_layout(experiment, self.job_name(experiment, wildcards))) > 1

    def shard_inputs(self, experiment: str, wildcards: Mapping) -> list[str]:
        """The shard files a cell or setting job merges, every cell's in trial order (none when
        the job is not split: it then runs its trials itself)."""
        ranges = self.shard_layout(experiment, self.job_name(experiment, wildcards))
        if len(ranges) == 1:
            return []
        return [self.shard_file(experiment, cell.id, trials)
                for cell in self.job_cells(experiment, wildcards) for trials in ranges]

    def shard_trials(self, experiment: str, wildcards: Mapping) -> list[list]:
        """[cell id, first trial, last trial] of every file of :meth:`shard_inputs`, in its order:
        what the merging job is told about its shards (it parses no path)."""
        ranges = self.shard_layout(experiment, self.job_name(experiment, wildcards))
        if len(ranges) == 1:
            return []
        return [[cell.id, trials.start, trials.stop - 1]
                for cell in self.job_cells(experiment, wildcards) for trials in ranges]

    def shard_file(self, experiment: str, cell: str, trials: range) -> str:
        return paths.fill(paths.SHARD, experiment=experiment, cell=cell, first=trials.start, last=trials.stop - 1,
                          suffix=self.selection.experiments[experiment].cell_suffix)

    def shard_outputs(self, experiment: str) -> list[str]:
        """A shard job's files, one per cell of its job ({cell}, or a shared experiment's
        {setting} and every budget value), for trials {first}-{last}."""
        spec = self.selection.experiments[experiment]
        cells = self.setting_cell_patterns(experiment) if spec.share_rho else ["{cell}"]
        return [paths.fill(paths.SHARD, experiment=experiment, cell=cell, suffix=spec.cell_suffix) for cell in cells]

    def job_shard_benchmarks(self, experiment: str) -> list[str]:
        """Every job's benchmark files: its own (the merge, or the whole job) and its shards'."""
        files = []
        for job, benchmark in zip(self.job_names(experiment), self.cell_benchmarks(experiment)):
            files.append(benchmark)
            ranges = self.shard_layout(experiment, job)
            if len(ranges) > 1:
                files += [paths.fill(paths.SHARD_BENCHMARK, experiment=experiment, job=job, first=r.start,
                                     last=r.stop - 1) for r in ranges]
        return files
