import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.audit import audit_figure_job

audit_figure_job(table=snakemake.input[0], pdf=snakemake.output.pdf, png=snakemake.output.png, log=snakemake.log[0])
