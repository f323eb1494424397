from experiments.figures import worst_case_job

worst_case_job(panels=snakemake.params.panels, pdf=snakemake.output.pdf, png=snakemake.output.png, log=snakemake.log[0])
