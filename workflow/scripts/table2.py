import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import table2_job

table2_job(
    summary=snakemake.input.summary,
    reference=snakemake.input.reference,
    setup=snakemake.params.setup,
    output=snakemake.output.table,
    caption=snakemake.output.caption,
    log=snakemake.log[0],
)
