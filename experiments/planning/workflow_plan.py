"""What one run of the workflow builds, and where (docs/configuration.md).

The Snakemake rules (workflow/rules/*.smk) read everything they compute from one
:class:`WorkflowPlan`, built from the run's config: the experiments, audits, figures,
illustrations, datasets, Table 2 and scorecard the config's ``run:`` switch keeps, the paths of
their files, the targets of ``rule all``, the resources of each job, which real datasets the
run could obtain, and what the report and the scorecard read. It needs no Snakemake: the only
Snakemake object it uses, the fetch checkpoint, is handed to it as a function.

:func:`compose_configs` merges config files as Snakemake merges ``--configfile`` files over the
Snakefile's ``configfile:`` (config/config.yaml): dicts key by key, lists and scalars replaced.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import yaml

import mechanisms
from datasets.real import REAL_DATASETS

from ..audit.power import POWER_MECHANISMS
from ..engine.availability import fetch_settings, missing_summary, not_reproduced, read_status, stale_status
from ..engine.config import (
    ConfigError,
    audit_fingerprint,
    audit_variant,
    check_audit_power,
    check_audits,
    check_illustrations,
    check_table2,
    format_value,
    load_experiments,
)
from ..engine.sources import source_defaults
from ..outputs.errata import accounting_pair, noscale_setup
from ..outputs.libraries import check_libraries
from . import paths
from . import resources as job_resources
from . import shards as trial_shards

DEFAULT_CONFIG = "config/config.yaml"  # the Snakefile's configfile:, relative to the working directory


# --- composing configs -------------------------------------------------------------------

def _update(target: dict, overlay: Mapping) -> dict:
    """snakemake.utils.update_config: ``overlay`` into ``target`` in place, dicts key by key,
    anything else (lists included) replaced; a non-dict in ``target`` under a dict is replaced."""
    for key, value in overlay.items():
        if isinstance(value, Mapping):
            current = target.get(key)
            target[key] = _update(current if isinstance(current, dict) else {}, value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def compose_configs(default: Mapping, *overlays: Mapping) -> dict:
    """The config Snakemake runs with ``configfile: default`` and ``--configfile overlays...``:
    the overlays merged in order, the default merged into them, then the overlays again (so
    their values win, and a dict's keys come in the overlays' order, then the default's others)."""
    given: dict = {}
    for overlay in overlays:
        _update(given, overlay)
    if not given:
        return copy.deepcopy(dict(default))
    return _update(_update(copy.deepcopy(given), default), given)


def load_config(*overlay_paths, default=DEFAULT_CONFIG) -> dict:
    """The composed config of YAML files: ``default`` (None: none) and the ``--configfile`` files."""
    def read(path):
        return yaml.safe_load(Path(path).read_text()) or {}

    return compose_configs(read(default) if default is not None else {}, *map(read, overlay_paths))


# --- resources ----------------------------------------------------------------------------

# Resources of the cell and setting jobs (docs/design.md §10), from what the job holds and does
# (experiments/planning/resources.py: the estimates and the measurements behind them):
#   mem_mb  = ceil(1.25 x peak), peak = 500 MiB for the job's Python processes + one trial's
#             arrays (dense: 3.5-4.5 S for S = n x d x 8 bytes of data, the cache's transposed
#             copy and sorted rows included, 8 S below n = 3000; sparse: 150 bytes per nonzero
#             and IOME's counts; user-level: 1.6 x the batch of runs) + the result rows;
#   runtime = ceil(3 x seconds / 60) minutes, at least 5, seconds from the job's work at the
#             slowest rates measured (docs/performance.md: 30 s to start, then per mechanism
#             call 7.5e-8 s per entry of dense data, ...).
# Margins: 25 % on memory (allocations are deterministic: peaks differ little between runs; the
# margin covers the allocator and numpy temporaries the estimate leaves out) and 3x on time (this
# VM ran 2x slower on some days than others; cluster cores differ). The shared-sample cache gets
# the granted mem_mb less what the job holds outside it (run_cell.py, run_setting.py), so a
# smaller --set-resources mem_mb shrinks the cache instead of the results changing.
MEMORY_MARGIN = 1.25
RUNTIME_MARGIN = 3.0
MIN_RUNTIME = 5

# The other jobs read summaries or draw figures: measured at most 0.52 GB in a Slurm job on the
# smoke config (sacct MaxRSS: the plugin's job step 186 MB + the rule's Snakemake and script
# 330 MB), where the default config's summaries and figures are little larger; 1 GB and
# 10 minutes (they take seconds) leave the margin.
SMALL_JOB_MEM_MB = 1000
SMALL_JOB_RUNTIME = 10
SUMMARY_ROW_BYTES = 200
# The longest audit (plan_binary, 10^4 runs) took 120 s and 0.5 GB on a loaded machine.
AUDIT_MEM_MB = 2000
# A power-curve job (experiments/audit/power.py) repeats one mechanism's batched audits: 30 s to start,
# then each audit's measured seconds (PowerMechanism.audit_seconds), with the cell jobs' 3x margin.
POWER_START_SECONDS = 30
# Trial shards (experiments/planning/shards.py): the default target job length, and how far below a fair
# share of the run per core a local run's jobs need not go (docs/configuration.md, "Trial shards").
# List scheduling ends within one job of work / cores; jobs under a quarter of that share cost a
# run at most 25 % over it, and splitting them further only adds start-ups (1.4 s each in a
# local job, 10-17 s in a Slurm job; docs/cluster.md).
DEFAULT_SHARD_SECONDS = 120.0
FAIR_SHARE_FRACTION = 0.25
# Parsing the full Kosarak file peaks at about 0.7 GB in 2 s (benchmarks/bench_parsing.py), plus
# the job's Python processes (0.5 GB), with the cell jobs' 25 % margin; the fetch parses each
# source's file to check it against expect.
DATASET_MEM_MB = 1600
# per source 5 s to connect, 60 s per read, 3 retries with backoff, then a download of about
# 35 MB at worst (Kosarak's FIMI file 33 MB) and its parse (2 s)
FETCH_RUNTIME = 15


def _rounded_mb(peak_mb: float) -> int:
    return math.ceil(MEMORY_MARGIN * peak_mb / 100) * 100


def _pattern(names: Iterable[str]) -> str:
    """A wildcard constraint matching exactly ``names`` (none: nothing)."""
    return "|".join(map(re.escape, names)) or "(?!)"


# --- the plan ------------------------------------------------------------------------------

class WorkflowPlan:
    """The targets, paths, resources and inputs of one run, from its config (validated against
    workflow/schemas/config.schema.yaml). Raises ConfigError, one line naming the key, for what
    the schema cannot check.

    ``status_file(dataset)`` returns the fetch checkpoint's status file of a real dataset (in
    the workflow, Snakemake's ``checkpoints.fetch_dataset``); a status written for other
    settings raises ``stale_error`` (Snakemake's WorkflowError there)."""

    # the names of the figures no config entry draws (their paths: experiments/planning/paths.py)
    AUDIT_FIGURE = "audit"
    POWER_FIGURE = "audit_power"
    WORST_CASE = "userlevel_worst_case"
    ERRATA_ACCOUNTING = paths.fill(paths.FIGURE_PNG, figure="errata_accounting")
    ERRATA_NOSCALE = paths.fill(paths.FIGURE_PNG, figure="errata_noscale")

    def __init__(self, config: Mapping, *, status_file: Callable[[str], str] | None = None,
                 stale_error: type[Exception] = ValueError, cores: int | None = None):
        self.config = config
        # the cores of a local run (None: a cluster, or a job of one): its shards' fair-share floor
        self.cores = cores
        self._status_file = status_file
        self._stale_error = stale_error
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
        # dataset -> the status file this run read (dataset_status): the end of the run reports on them alone
        self.status_files_read: dict[str, str] = {}

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

    # --- paths ---------------------------------------------------------------------------

    def summary(self, experiment: str) -> str:
        return paths.fill(paths.SUMMARY, experiment=experiment)

    @staticmethod
    def figure_files(name: str) -> list[str]:
        """A figure's PDF and PNG (one job writes both)."""
        return paths.figure_files(name)

    def cell_files(self, experiment: str) -> list[str]:
        spec = self.experiments[experiment]
        return [paths.fill(paths.CELL, experiment=experiment, cell=cell.id, suffix=spec.cell_suffix)
                for cell in spec.cells()]

    def cell_benchmarks(self, experiment: str) -> list[str]:
        """The Snakemake benchmark file of every job of the experiment (one per cell, or one per
        setting with share_rho)."""
        return [paths.fill(paths.JOB_BENCHMARK, experiment=experiment, job=job) for job in self.job_names(experiment)]

    def setting_outputs(self, experiment: str) -> list[str]:
        """The cell files of one setting job: a {setting} wildcard and every budget value of the
        grid (a grid of the budget alone has a single setting and no wildcard)."""
        suffix = self.experiments[experiment].cell_suffix
        return [paths.fill(paths.CELL, experiment=experiment, cell=cell, suffix=suffix)
                for cell in self.setting_cell_patterns(experiment)]

    def setting_cell_patterns(self, experiment: str) -> list[str]:
        """The ids of a setting job's cells, in its outputs' order: ``{setting}_<budget>=<value>``
        for every budget value (a grid of the budget alone: ``<budget>=<value>``)."""
        spec = self.experiments[experiment]
        prefix = "{setting}_" if spec.setting_names else ""
        return [f"{prefix}{spec.budget}={format_value(v)}" for v in dict(spec.grid)[spec.budget]]

    # --- trial shards (experiments/planning/shards.py) ------------------------------------------------

    def job_names(self, experiment: str) -> list[str]:
        """The name of every cell or setting job of the experiment (its cell id, its setting id, or
        "all" for a grid of the budget alone): the stem of its log, benchmark and shard layout."""
        spec = self.experiments[experiment]
        if spec.share_rho:
            return [setting or "all" for setting in spec.settings()]
        return [cell.id for cell in spec.cells()]

    def _named_job_cells(self, experiment: str, job: str) -> list:
        spec = self.experiments[experiment]
        if spec.share_rho:
            return spec.settings()["" if job == "all" and not spec.setting_names else job]
        return [spec.cell(job)]

    def _cells_work_seconds(self, experiment: str, cells: list) -> float:
        """The estimated seconds of a job's trials, without its start-up (experiments/planning/resources.py)."""
        return job_resources.seconds(self.experiments[experiment], cells) - job_resources.START_SECONDS

    def job_work_seconds(self, experiment: str, job: str) -> float:
        """The estimated seconds of a named job's trials (see :meth:`job_names`), start-up left out."""
        return self._cells_work_seconds(experiment, self._named_job_cells(experiment, job))

    @property
    def run_work_seconds(self) -> float:
        """The estimated seconds of every cell and setting job of the run, start-ups left out."""
        if not hasattr(self, "_run_work_seconds"):
            self._run_work_seconds = sum(self.job_work_seconds(name, job)
                                         for name in self.experiments for job in self.job_names(name))
        return self._run_work_seconds

    def shard_target_seconds(self, experiment: str) -> float:
        """The target length of the experiment's jobs: its shard_seconds, else the config's (default
        120 s), but in a local run on ``cores`` never below a quarter of the run's work per core:
        there, shorter jobs would not end the run sooner (on 2 cores nothing is split)."""
        spec = self.experiments[experiment]
        target = spec.shard_seconds or float(self.config.get("shard_seconds", DEFAULT_SHARD_SECONDS))
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
        spec = self.experiments[experiment]
        recorded = trial_shards.read_layout(self.shard_layout_file(experiment, job),
                                            [spec.fingerprint(cell) for cell in self._named_job_cells(experiment, job)])
        return recorded if recorded is not None else self.configured_shard_layout(experiment, job)

    def configured_shard_layout(self, experiment: str, job: str) -> list[range]:
        """The trial ranges the config asks for (its shards, or its target length on this run's
        cores), whatever a finished job recorded."""
        spec = self.experiments[experiment]
        count = trial_shards.shard_count(spec, self.job_work_seconds(experiment, job),
                                         self.shard_target_seconds(experiment))
        return trial_shards.trial_ranges(spec, count)

    def _job_name(self, experiment: str, wildcards: Mapping) -> str:
        return wildcards.get("cell") or wildcards.get("setting") or "all"

    def shard_inputs(self, experiment: str, wildcards: Mapping) -> list[str]:
        """The shard files a cell or setting job merges, every cell's in trial order (none when
        the job is not split: it then runs its trials itself)."""
        ranges = self.shard_layout(experiment, self._job_name(experiment, wildcards))
        if len(ranges) == 1:
            return []
        return [self.shard_file(experiment, cell.id, trials)
                for cell in self.job_cells(experiment, wildcards) for trials in ranges]

    def shard_trials(self, experiment: str, wildcards: Mapping) -> list[list]:
        """[cell id, first trial, last trial] of every file of :meth:`shard_inputs`, in its order:
        what the merging job is told about its shards (it parses no path)."""
        ranges = self.shard_layout(experiment, self._job_name(experiment, wildcards))
        if len(ranges) == 1:
            return []
        return [[cell.id, trials.start, trials.stop - 1]
                for cell in self.job_cells(experiment, wildcards) for trials in ranges]

    def shard_file(self, experiment: str, cell: str, trials: range) -> str:
        return paths.fill(paths.SHARD, experiment=experiment, cell=cell, first=trials.start, last=trials.stop - 1,
                          suffix=self.experiments[experiment].cell_suffix)

    def shard_outputs(self, experiment: str) -> list[str]:
        """A shard job's files, one per cell of its job ({cell}, or a shared experiment's
        {setting} and every budget value), for trials {first}-{last}."""
        spec = self.experiments[experiment]
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

    def shard_priority(self, experiment: str, wildcards: Mapping) -> int:
        """A shard's share of its job's priority (largest work first)."""
        spec = self.experiments[experiment]
        trials = _shard_trials(wildcards)
        work = sum(spec.work(cell) for cell in self.job_cells(experiment, wildcards)) * trials / spec.trials
        return round(10 * math.log2(work))

    def shard_mem_mb(self, experiment: str, wildcards: Mapping) -> int:
        """Memory request of a shard: one trial's data as its whole job, but only its trials' rows."""
        trials = _shard_trials(wildcards)
        spec = dataclasses.replace(self.experiments[experiment], trials=trials)
        return _rounded_mb(job_resources.peak_mb(spec, self.job_cells(experiment, wildcards)))

    def shard_runtime(self, experiment: str, wildcards: Mapping) -> int:
        """Wall-time request of a shard, in minutes: its share of the job's trials."""
        spec = self.experiments[experiment]
        cells = self.job_cells(experiment, wildcards)
        trials = _shard_trials(wildcards)
        seconds = job_resources.START_SECONDS + self._cells_work_seconds(experiment, cells) * trials / spec.trials
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * seconds / 60))

    def setting_job(self, experiment: str) -> str:
        """The job name in a setting job's log and benchmark paths: the {setting} wildcard, or
        "all" for a grid of the budget alone."""
        return "{setting}" if self.experiments[experiment].setting_names else "all"

    def dataset_inputs(self, experiment: str) -> list[str]:
        """The processed dataset a real-data experiment's jobs read: a re-parsed dataset reruns them."""
        dataset = self.experiments[experiment].dataset
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset)] if dataset else []

    def plugin_inputs(self, experiment: str) -> list[str]:
        """The plug-in files an experiment's mechanisms name (docs/configuration.md): an edited
        file reruns its jobs (their fingerprints hold its digest too, for module plug-ins)."""
        files = (mechanisms.plugin_file(m.algorithm) for m in self.experiments[experiment].mechanisms)
        return sorted({path for path in files if path is not None})

    def audit_inputs(self, audit: str) -> list[str]:
        """The plug-in file an audit of a configured variant runs, if any."""
        spec = audit_variant(self.config, audit)
        path = mechanisms.plugin_file(spec.algorithm) if spec is not None else None
        return [path] if path is not None else []

    @property
    def figure2_datasets(self) -> list[str]:
        """The datasets PLAN Figure 2 draws (their item variances): the binary ones, not MNIST."""
        return [dataset for dataset in self.datasets if REAL_DATASETS[dataset].kind == "binary"]

    def figure2_inputs(self) -> list[str]:
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset) for dataset in self.figure2_datasets]

    def dataset_status_files(self) -> list[str]:
        return [paths.fill(paths.DATASET_STATUS, dataset=dataset) for dataset in self.datasets]

    @property
    def table2_outputs(self) -> list[str]:
        """PLAN Table 2 beside the paper's numbers, and the erratum beside our corrected version
        (experiments/outputs/tables.py)."""
        if not self.table2:
            return []
        return [paths.TABLE2] + ([paths.TABLE2_ERRATUM] if self.table2.get("corrected") else [])

    @property
    def illustration_targets(self) -> list[str]:
        return [path for name in self.illustrations
                for path in (*self.figure_files(name), paths.fill(paths.ILLUSTRATION_DATA, figure=name))]

    def power_file(self, mechanism: str) -> str:
        """One mechanism's power curve (a job of its own)."""
        return paths.fill(paths.POWER, mechanism=mechanism)

    @property
    def power_files(self) -> list[str]:
        return [self.power_file(mechanism) for mechanism in self.audit_power.get("mechanisms", {})]

    @property
    def power_outputs(self) -> list[str]:
        """The power curves' table and figure (PDF, PNG), if the run draws them."""
        return [paths.POWER_TABLE, *self.figure_files(self.POWER_FIGURE)] if self.audit_power else []

    @property
    def shared_experiments(self) -> list[str]:
        """Experiments whose budget values run in one job per setting (share_rho)."""
        return [name for name, spec in self.experiments.items() if spec.share_rho]

    def wildcard_patterns(self) -> dict[str, str]:
        """The global wildcard constraints: only the run's figures match {figure} (other outputs
        in figures/, the errata, have rules of their own)."""
        return {"experiment": "[A-Za-z0-9_]+", "cell": "[^/]+", "setting": "[^/]+",
                "figure": _pattern(self.figures), "dataset": _pattern(self.datasets),
                "audit": _pattern(self.audits), "mechanism": _pattern(self.audit_power.get("mechanisms", {}))}

    @property
    def unshared_pattern(self) -> str:
        return _pattern(name for name in self.experiments if name not in self.shared_experiments)

    @property
    def illustration_pattern(self) -> str:
        return _pattern(self.illustrations)

    # --- jobs: fingerprints, priorities, resources -----------------------------------------

    def audit_fingerprint(self, audit: str) -> str | None:
        """What an audit of a variant depends on beyond runs and budget (its variant, pair and a
        plug-in's digest); None for a registered audit (config.audit_fingerprint)."""
        return audit_fingerprint(self.config, audit)

    def cell_fingerprint(self, experiment: str, cell: str) -> str:
        spec = self.experiments[experiment]
        return spec.fingerprint(spec.cell(cell))

    def job_cells(self, experiment: str, wildcards: Mapping) -> list:
        """The cells a cell job (a {cell} wildcard) or a setting job ({setting}, or none) runs."""
        spec = self.experiments[experiment]
        if wildcards.get("cell") is not None:
            return [spec.cell(wildcards.get("cell"))]
        return spec.settings()[wildcards.get("setting") or ""]

    def job_cell_ids(self, experiment: str, wildcards: Mapping) -> list[str]:
        """The ids of the cells a cell, setting or shard job writes, in the order of its outputs."""
        return [cell.id for cell in self.job_cells(experiment, wildcards)]

    def setting_fingerprints(self, experiment: str, wildcards: Mapping) -> list[str]:
        spec = self.experiments[experiment]
        return [spec.fingerprint(cell) for cell in self.job_cells(experiment, wildcards)]

    def job_priority(self, experiment: str, wildcards: Mapping) -> int:
        """Largest jobs first, so a run ends on short jobs instead of one long one. The
        logarithm keeps the priorities small numbers; only their order matters."""
        spec = self.experiments[experiment]
        return round(10 * math.log2(sum(spec.work(cell) for cell in self.job_cells(experiment, wildcards))))

    def _merges_shards(self, experiment: str, wildcards: Mapping) -> bool:
        return len(self.shard_layout(experiment, self._job_name(experiment, wildcards))) > 1

    def job_mem_mb(self, experiment: str, wildcards: Mapping, *, whole: bool = False) -> int:
        """Memory request of a cell or setting job, in MiB (Slurm's --mem unit); a job that only
        merges its shards is a small job (``whole``: the job running every trial)."""
        if not whole and self._merges_shards(experiment, wildcards):
            return SMALL_JOB_MEM_MB
        return _rounded_mb(job_resources.peak_mb(self.experiments[experiment], self.job_cells(experiment, wildcards)))

    def job_runtime(self, experiment: str, wildcards: Mapping) -> int:
        """Wall-time request of a cell or setting job, in minutes (a merge of shards: a small job)."""
        if self._merges_shards(experiment, wildcards):
            return SMALL_JOB_RUNTIME
        seconds = job_resources.seconds(self.experiments[experiment], self.job_cells(experiment, wildcards))
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * seconds / 60))

    def power_seconds(self, mechanism: str) -> float:
        """The estimated seconds of a power-curve job: its audits at their measured rates."""
        power = self.audit_power
        spec = POWER_MECHANISMS[mechanism]
        audits = len(power["breaks"]) * power["repetitions"]
        return POWER_START_SECONDS + audits * sum(spec.audit_seconds(runs) for runs in power["runs"])

    def power_runtime(self, mechanism: str) -> int:
        """Wall-time request of a power-curve job, in minutes."""
        return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * self.power_seconds(mechanism) / 60))

    def power_priority(self, mechanism: str) -> int:
        """The power-curve jobs' rank by their estimated seconds (0: the shortest): the longest
        start first, so that on two cores the shortest follows one of them and both end near
        together."""
        ranked = sorted(self.audit_power["mechanisms"], key=self.power_seconds)
        return ranked.index(mechanism)

    def summarise_mem_mb(self, experiment: str) -> int:
        """A summary reads every trial row of the experiment's cells (10^4 runs per cell and
        mechanism for the user-level ones): SUMMARY_ROW_BYTES per row at the peak, measured."""
        spec = self.experiments[experiment]
        rows = spec.trials * len(spec.mechanisms) * len(spec.cells())
        peak = job_resources.JOB_BASE_MB + SUMMARY_ROW_BYTES * rows / job_resources.MIB
        return max(SMALL_JOB_MEM_MB, _rounded_mb(peak))

    # --- figures -------------------------------------------------------------------------

    def figure_summaries(self, figure: str) -> list[str]:
        return sorted({self.summary(panel["experiment"]) for panel in self.figures[figure]["panels"]})

    def figure_metrics(self, figure: str) -> dict[str, str]:
        """Each panel's experiment -> its metric (the y label names it)."""
        return {panel["experiment"]: self.experiments[panel["experiment"]].metric
                for panel in self.figures[figure]["panels"] if panel["experiment"] in self.experiments}

    def worst_case_panels(self) -> list[dict]:
        """The analytic figure's panels: the collection, bound and eps grid of each user-level
        experiment, drawn for d = 1 and 2 (the user-level paper's equations (7), (8)) or at its
        own d >= 2."""
        panels = []
        for experiment, spec in self.experiments.items():
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

    # --- targets -------------------------------------------------------------------------

    def experiment_targets(self, experiments: Iterable[str]) -> list[str]:
        """The summaries, fidelity tables, library comparisons and figures of ``experiments``
        (figures whose panels are all among them)."""
        experiments = list(experiments)
        targets = [self.summary(experiment) for experiment in experiments]
        targets += [paths.fill(paths.FIDELITY, experiment=name) for name in self.fidelity if name in experiments]
        targets += [paths.fill(paths.LIBRARY_TABLE, experiment=name) for name in self.libraries if name in experiments]
        for figure, spec in self.figures.items():
            if {panel["experiment"] for panel in spec["panels"]} <= set(experiments):
                targets += self.figure_files(figure)
        return targets

    def static_targets(self) -> list[str]:
        """Everything that needs no real dataset (known before any fetch)."""
        targets = self.experiment_targets(name for name, spec in self.experiments.items() if spec.dataset is None)
        targets += self.table2_outputs
        if self.worst_case_panels():
            targets += self.figure_files(self.WORST_CASE)
        if self.audits:
            targets += [paths.AUDIT_TABLE, *self.figure_files(self.AUDIT_FIGURE)]
        targets += self.power_outputs
        targets += self.illustration_targets
        return targets + [paths.REPORT]

    def dataset_targets(self, dataset: str) -> list[str]:
        """What needs ``dataset``, if the fetch checkpoint found it, else nothing (the report and
        the end of the run name it): summaries, fidelity tables and figures whose real datasets
        were all found, and Figure 2."""
        if not self.dataset_available(dataset):
            return []
        static = set(self.static_targets())
        targets = [target for target in self.experiment_targets(filter(self.reproducible, self.experiments))
                   if target not in static]
        if dataset in self.figure2_datasets and self.figure_reproducible("figure2"):
            targets += self.figure_files("figure2")
        return targets

    # --- real datasets: what this run could obtain decides its targets ----------------------

    def processed_dataset(self, dataset: str) -> list[str]:
        """The processed file of ``dataset`` if the fetch found it, else nothing: every configured
        dataset the run could obtain is parsed and verified, whether or not an experiment or
        Figure 2 reads it (MNIST until the IOME experiments are configured)."""
        return [paths.fill(paths.PROCESSED_DATASET, dataset=dataset)] if self.dataset_available(dataset) else []

    def dataset_status(self, dataset: str) -> dict:
        """The fetch checkpoint's finding (Snakemake raises IncompleteCheckpointException before
        it ran). Snakemake's checkpoint returns only for a fetch job in this run's DAG, so the
        datasets read here are those this run's targets need."""
        if self._status_file is None:
            raise RuntimeError("this plan has no status_file: it cannot read real datasets' fetch statuses")
        path = self._status_file(dataset)
        status = read_status(path)
        stale = stale_status(status, self.dataset_settings[dataset], path)
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
        dataset = self.experiments[experiment].dataset
        return dataset is None or self.dataset_available(dataset)

    def figure_reproducible(self, figure: str) -> bool:
        if figure == "figure2":
            return all(self.dataset_available(dataset) for dataset in self.figure2_datasets)
        return all(self.reproducible(panel["experiment"]) for panel in self.figures[figure]["panels"])

    def reproducible_figures(self) -> list[str]:
        figures = list(self.figures) + (["figure2"] if self.figure2_datasets else [])
        return [figure for figure in figures if self.figure_reproducible(figure)]

    @property
    def dataset_experiments(self) -> dict[str, list[str]]:
        """dataset -> the experiments that read it."""
        return {dataset: [name for name, spec in self.experiments.items() if spec.dataset == dataset]
                for dataset in self.datasets}

    @property
    def dataset_figures(self) -> dict[str, list[str]]:
        """dataset -> the figures that need it (Figure 2 draws every binary dataset)."""
        figure2 = self.figure2_datasets
        return {dataset: [figure for figure, spec in self.figures.items()
                          if any(self.experiments[panel["experiment"]].dataset == dataset
                                 for panel in spec["panels"])] + (["figure2"] if dataset in figure2 else [])
                for dataset in self.datasets}

    def finish_datasets(self, stream, *, failed: bool = False) -> None:
        """End of a run: names the datasets this run needed but could not obtain (as the report
        does) on ``stream``, removes their status files so that the next run tries again, and
        exits non-zero (unless the run ``failed`` anyway). Datasets this run did not read are
        none of its business."""
        statuses = []
        for dataset in self.datasets:
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

    # --- the errata, the report and the scorecard --------------------------------------------

    @property
    def errata_pairs(self) -> dict[str, list[str]]:
        """Experiments that run PLAN under both published and exact accounting: experiment -> names."""
        return {name: list(pair) for name, spec in self.experiments.items()
                if (pair := accounting_pair(spec.mechanisms))}

    @property
    def errata_noscale(self) -> dict:
        """The PLAN-noscale erratum needs a fidelity experiment that maps the published
        PLAN-noscale curve to one of our mechanisms (gaussian_A in the paper configs); without
        one it is skipped."""
        return noscale_setup(self.config, self.experiments)

    def errata_inputs(self) -> dict:
        noscale = self.errata_noscale
        return {
            **({"noscale_summary": self.summary(noscale["experiment"]), "noscale_reference": noscale["reference"]}
               if noscale else {}),
            "summaries": [self.summary(name) for name in self.errata_pairs],
            "cells": [path for name in self.errata_pairs for path in self.cell_files(name)],
        }

    def errata_noscale_outputs(self, mark_report: Callable = lambda path, key: path) -> dict:
        """The PLAN-noscale erratum's table and PNG (each passed with its key through ``mark_report``:
        Snakemake's report()) and PDF."""
        if not self.errata_noscale:
            return {}
        return {"noscale_table": mark_report(paths.ERRATA_NOSCALE, "noscale_table"),
                "noscale_png": mark_report(self.ERRATA_NOSCALE, "noscale_png"),
                "noscale_pdf": self.ERRATA_NOSCALE.removesuffix(".png") + ".pdf"}

    @property
    def errata_figures(self) -> list[str]:
        return [self.ERRATA_ACCOUNTING] + ([self.ERRATA_NOSCALE] if self.errata_noscale else [])

    def report_inputs(self) -> dict[str, list[str]]:
        """What the report shows: everything but what needs a dataset this run could not obtain."""
        experiments = [name for name in self.experiments if self.reproducible(name)]
        figures = [figure for figure in self.reproducible_figures() if figure in self.figures]
        inputs = {
            "summaries": [self.summary(name) for name in experiments],
            "fidelity": [paths.fill(paths.FIDELITY, experiment=name) for name in self.fidelity if name in experiments],
            # read for the published runs' n, beside the fidelity tables
            "references": [entry["reference"] for name, entry in self.fidelity.items() if name in experiments],
            "figures": [paths.fill(paths.FIGURE_PNG, figure=figure) for figure in figures]
            + ([paths.fill(paths.FIGURE_PNG, figure=self.WORST_CASE)] if self.worst_case_panels() else [])
            + [paths.fill(paths.FIGURE_PNG, figure=name) for name in self.illustrations],
            "dataset_figures": [paths.fill(paths.FIGURE_PNG, figure="figure2")]
            if "figure2" in self.reproducible_figures() else [],
            "benchmarks": [path for name in experiments for path in self.job_shard_benchmarks(name)],
            "audit": [paths.AUDIT_TABLE, paths.fill(paths.FIGURE_PNG, figure=self.AUDIT_FIGURE)] if self.audits else [],
            "audit_power": [paths.POWER_TABLE, paths.fill(paths.FIGURE_PNG, figure=self.POWER_FIGURE)]
            if self.audit_power else [],
            "libraries": [paths.fill(paths.LIBRARY_TABLE, experiment=name) for name in self.libraries
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
            "tables": self.table2_outputs,
            "dataset_statuses": self.dataset_status_files(),
            "scorecard": [paths.SCORECARD, paths.SCORECARD_VALUES, paths.CLAIMS] if self.scorecard else [],
            "authors_code": self.authors_code,
        }

    @property
    def authors_code(self) -> list[str]:
        """The authors' IOME on Figure 7(b)'s setting (config ``scorecard.authors_code``), if set."""
        path = (self.scorecard or {}).get("authors_code")
        return [path] if path else []

    def scorecard_inputs(self) -> dict:
        """What the scorecard reads (rule scorecard, workflow/rules/report.smk)."""
        inputs = self.report_inputs()
        return {
            "summaries": inputs["summaries"],
            "figures": inputs["figures"] + inputs["dataset_figures"],
            "published": self.scorecard["published"],
            "quoted": self.scorecard["quoted"],
            "published_values": list(self.scorecard.get("published_values") or []),
            "authors_code": self.authors_code,
            "statuses": self.dataset_status_files(),
            "illustrations": [paths.fill(paths.ILLUSTRATION_DATA, figure=name) for name in self.illustrations],
            # Table 2 under the authors' protocol beside the paper's (experiments/outputs/tables.py)
            "table2": self.table2_outputs,
        }

    def scorecard_metrics(self) -> dict[str, dict[str, str]]:
        return {figure: self.figure_metrics(figure) for figure in self.figures}

    def extra_figures(self) -> dict[str, str]:
        """What reproduces no paper figure: the config's own figures and the errata, audit and
        worst-case figures (name -> title, for the scorecard)."""
        return {
            **{name: spec["title"] for name, spec in self.figures.items() if not spec.get("reproduces")},
            **{os.path.basename(path).removesuffix(".png"): "Errata figure" for path in self.errata_figures},
            **({"audit": "Privacy audit: claimed eps and the lower bounds found"} if self.audits else {}),
            **({self.POWER_FIGURE: "Privacy audit: power against broken mechanisms"} if self.audit_power else {}),
            **({self.WORST_CASE: "User-level clipping: analytic worst-case errors"}
               if self.worst_case_panels() else {}),
        }


def _shard_trials(wildcards: Mapping) -> int:
    """How many trials a shard job runs: {first} to {last}, inclusive."""
    return int(wildcards.get("last")) - int(wildcards.get("first")) + 1


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
