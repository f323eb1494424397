import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.figures import figure2_job

figure2_job(datasets=snakemake.params.datasets, inputs=list(snakemake.input), pdf=snakemake.output.pdf,
            png=snakemake.output.png, log=snakemake.log[0])
