# One PDF and one PNG per paper figure (DESIGN.md 6, 11).


rule figure:
    input:
        lambda w: figure_summaries(w.figure),
    output:
        pdf="figures/{figure}.pdf",
        png=report("figures/{figure}.png", category="Figures"),
    params:
        spec=lambda w: config["figures"][w.figure],
        # the y label names each panel's metric
        metrics=lambda w: figure_metrics(w.figure),
    conda:
        "../../environment.yml"
    log:
        "logs/figures/{figure}.log",
    script:
        "../scripts/figure.py"
