import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import table2_erratum_job

table2_erratum_job(
    protocol_summary=snakemake.input.protocol_summary,
    corrected_summary=snakemake.input.corrected_summary,
    reference=snakemake.input.reference,
    setup=snakemake.params.setup,
    seed=snakemake.params.seed,
    output=snakemake.output.table,
    caption=snakemake.output.caption,
    notes=snakemake.output.notes,
    log=snakemake.log[0],
)
