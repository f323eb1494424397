from experiments.report import report_job

report_job(config=snakemake.config, summaries=list(snakemake.input.summaries),
           fidelity=list(snakemake.input.fidelity), figures=list(snakemake.input.figures),
           benchmarks=list(snakemake.input.benchmarks), errata_table=snakemake.input.errata_table,
           errata_noscale=snakemake.input.errata_noscale or None, errata_figures=list(snakemake.input.errata_figures),
           tables=list(snakemake.input.tables), output=snakemake.output[0], log=snakemake.log[0])
