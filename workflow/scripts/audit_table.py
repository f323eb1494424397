import sys

sys.stderr = open(snakemake.log[0], "a", buffering=1)  # first: a failing job's traceback lands in its log

from experiments.jobs.audit import audit_table_job

audit_table_job(rows=list(snakemake.input), output=snakemake.output[0], log=snakemake.log[0])
