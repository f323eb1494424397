"""The plan of one run of the workflow (the Snakefile's ``RUN``; docs/workflow.md#rules): the
config's selection (:mod:`.selection`) and, by concern, the parts the rule files read:
``RUN.targets`` (what the run builds, :mod:`.targets`), ``RUN.trials`` (the trial jobs and their
shards, :mod:`.trial_jobs`), ``RUN.resources`` (every job's request, :mod:`.resources`),
``RUN.real_data`` (what the fetch found, :mod:`.real_data`) and ``RUN.report`` (what the errata,
scorecard and report read, :mod:`.report_inputs`). Paths come from :mod:`.paths`. It needs no
Snakemake: the only Snakemake object it uses, the fetch checkpoint, is handed to it as a function.
With the config's ``from_committed: true`` it plans a rebuild from the committed results
(docs/workflow.md#rebuilding-from-the-committed-results): the rule files then define no rule that
computes them, and the datasets' statuses are the committed run's.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from .config_files import shrink_config
from .real_data import RealData
from .report_inputs import ReportInputs
from .resources import JobResources
from .selection import RunSelection
from .targets import Targets
from .trial_jobs import TrialJobs


class RunPlan(RunSelection):
    """The run's selection (its experiments, audits, figures, ...; shrunk by the config's
    ``shrink:`` rule if it has one) and its parts. ``status_file``
    and ``stale_error``: see :class:`~.real_data.RealData`; ``cores``: see
    :class:`~.trial_jobs.TrialJobs`."""

    def __init__(self, config: Mapping, *, status_file: Callable[[str], str] | None = None,
                 stale_error: type[Exception] = ValueError, cores: int | None = None):
        super().__init__(shrink_config(config))  # the smoke config's rule, if it has one (.config_files)
        self.from_committed = bool(config.get("from_committed"))
        self.trials = TrialJobs(self, cores=cores)
        self.resources = JobResources(self, self.trials)
        self.real_data = RealData(self, status_file=status_file, stale_error=stale_error,
                                  from_committed=self.from_committed)
        self.targets = Targets(self, self.trials, self.real_data)
        self.report = ReportInputs(self, self.trials, self.real_data, self.targets)
