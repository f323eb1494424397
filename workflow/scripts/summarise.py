import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.runs import summarise_job

summarise_job(cells=list(snakemake.input), grid=list(snakemake.params.grid), output=snakemake.output[0],
              log=snakemake.log[0], empirical=snakemake.params.empirical, trials=snakemake.params.trials,
              mechanisms=list(snakemake.params.mechanisms))
