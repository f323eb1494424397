from experiments.report import report_job

report_job(config=snakemake.config, summaries=list(snakemake.input.summaries),
           fidelity=list(snakemake.input.fidelity), figures=list(snakemake.input.figures),
           benchmarks=list(snakemake.input.benchmarks), output=snakemake.output[0], log=snakemake.log[0])
