# Runs every trial of one cell, or merges the files of its trial shards. BLAS threads follow the
# rule's threads: set before numpy loads.
import os
import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(snakemake.threads))
os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))

from experiments.jobs.runs import run_cells_job

run_cells_job(
    config=snakemake.config,
    experiment=snakemake.params.experiment,
    cells=snakemake.params.cells,
    outputs=list(snakemake.output),
    log=snakemake.log[0],
    mem_mb=snakemake.resources.mem_mb,  # the granted request (a local run's limit may lower it)
    cache_bytes=snakemake.params.cache_bytes,  # what that request leaves (RUN.resources.job_cache_bytes)
    shards=snakemake.input.get("shards", []),
    shard_trials=snakemake.params.shard_trials,
    layout=snakemake.params.layout,
)
