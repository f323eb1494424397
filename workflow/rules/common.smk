# The config, checked, and the plan of the run, RUN, which the other .smk files read by concern:
# RUN.targets, RUN.trials, RUN.resources, RUN.real_data, RUN.report (experiments/planning/run_plan.py,
# docs/workflow.md#rules); paths come from experiments/planning/paths.py.
from snakemake.utils import validate

from experiments.planning import paths
from experiments.planning.cluster import report_resource_failures
from experiments.engine.config import ConfigError
from experiments.planning.validation import one_line_config_error
from experiments.planning.resources import (
    AUDIT_MEM_MB,
    DATASET_MEM_MB,
    FETCH_RUNTIME,
    SMALL_JOB_MEM_MB,
    SMALL_JOB_RUNTIME,
)
from experiments.planning.run_plan import RunPlan


def fetched_status_file(dataset):
    """The fetch checkpoint's status file (workflow/rules/datasets.smk): raises Snakemake's
    IncompleteCheckpointException until the checkpoint ran, so targets wait for the fetch."""
    return checkpoints.fetch_dataset.get(dataset=dataset).output[0]


def local_run_cores():
    """The cores of a local run, which set how far its cells split into trial shards; None for a
    cluster run and inside a cluster job, which must see the layout its run planned."""
    if workflow.remote_exec or not workflow.local_exec:
        return None
    return workflow.resource_settings.cores


try:
    validate(config, "../schemas/config.schema.yaml")
    RUN = RunPlan(config, status_file=fetched_status_file, stale_error=WorkflowError, cores=local_run_cores())
    if config.get("shrink"):  # the plan applied the smoke rule (config/README.md); every job reads it too
        config["experiments"] = RUN.config["experiments"]
        validate(config, "../schemas/config.schema.yaml")
except Exception as error:
    raise ConfigError(one_line_config_error(error)) from None


wildcard_constraints:
    **RUN.targets.wildcard_patterns(),
