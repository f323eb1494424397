import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.audit import audit_job

audit_job(name=snakemake.wildcards.audit, runs=snakemake.params.runs, budget=snakemake.params.budget,
          seed=snakemake.params.seed, output=snakemake.output[0], log=snakemake.log[0], config=snakemake.config)
