import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log

from experiments.jobs.runs import summarise_job

summarise_job(cells=list(snakemake.input), grid=list(snakemake.params.grid), output=snakemake.output[0],
              log=snakemake.log[0], empirical=snakemake.params.empirical)
