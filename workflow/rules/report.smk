# One HTML page with every figure, table, run time and the provenance of the run.


rule report_page:
    input:
        summaries=expand("results/{experiment}/summary.csv", experiment=list(EXPERIMENTS)),
        fidelity=expand("results/fidelity/{experiment}.csv", experiment=list(config.get("fidelity", {}))),
        figures=expand("figures/{figure}.png", figure=list(config.get("figures", {}))),
        benchmarks=[path for experiment in EXPERIMENTS for path in cell_benchmarks(experiment)],
    output:
        report("results/report.html", category="Report"),
    conda:
        "../../environment.yml"
    log:
        "logs/report.log",
    script:
        "../scripts/report.py"
