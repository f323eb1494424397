from experiments.jobs import audit_table_job

audit_table_job(rows=list(snakemake.input), output=snakemake.output[0], log=snakemake.log[0])
