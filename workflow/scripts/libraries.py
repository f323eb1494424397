import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log

from experiments.jobs.results import libraries_job

libraries_job(config=snakemake.config, cells=list(snakemake.input.cells), libraries=dict(snakemake.params.libraries),
              comparison=snakemake.output.comparison, seconds=snakemake.output.seconds, log=snakemake.log[0])
