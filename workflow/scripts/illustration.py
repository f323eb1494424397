import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.figures import illustration_job

illustration_job(
    name=snakemake.wildcards.illustration,
    spec=snakemake.params.spec,
    seed=snakemake.params.seed,
    pdf=snakemake.output.pdf,
    png=snakemake.output.png,
    csv=snakemake.output.csv,
    log=snakemake.log[0],
)
