import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.data import parse_dataset_job

parse_dataset_job(dataset=snakemake.wildcards.dataset, status=snakemake.input.status,
                  min_items=snakemake.params.min_items, expect=snakemake.params.expect, npz=snakemake.output.npz,
                  stats=snakemake.output.stats, log=snakemake.log[0])
