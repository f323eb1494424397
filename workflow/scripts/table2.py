from experiments.tables import table2_job

table2_job(summary=snakemake.input[0], output=snakemake.output[0], log=snakemake.log[0])
