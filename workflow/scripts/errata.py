import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log
from experiments.engine.joblog import console_errors

console_errors(snakemake.log[0])  # and a failure's last line on the console

from experiments.jobs.results import errata_job

errata_job(summaries=list(snakemake.input.summaries), pairs=snakemake.params.pairs,
           table=snakemake.output.table, accounting_png=snakemake.output.accounting_png,
           accounting_pdf=snakemake.output.accounting_pdf, log=snakemake.log[0],
           noscale=snakemake.params.noscale or None, noscale_summary=snakemake.input.get("noscale_summary"),
           noscale_reference=snakemake.input.get("noscale_reference"),
           noscale_table_path=snakemake.output.get("noscale_table"), noscale_png=snakemake.output.get("noscale_png"),
           noscale_pdf=snakemake.output.get("noscale_pdf"))
