# The errata of DESIGN.md 5.0 and 5.3 as data and figures, and one HTML page with every
# figure, table, run time and the provenance of the run. Their inputs and outputs are the
# plan's (experiments/workflow_plan.py).


rule errata:
    input:
        **PLAN.errata_inputs(),
    output:
        **PLAN.errata_noscale_outputs(lambda path: report(path, category="Errata")),
        table="results/errata/accounting.csv",
        accounting_png=report("figures/errata_accounting.png", category="Errata"),
        accounting_pdf="figures/errata_accounting.pdf",
    log:
        "logs/errata.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        pairs=PLAN.errata_pairs,
        noscale=PLAN.errata_noscale,
    script:
        "../scripts/errata.py"


rule report_page:
    input:
        unpack(lambda w: PLAN.report_inputs()),
        **PLAN.report_extra_inputs(),
    output:
        report("results/report.html", category="Report"),
    log:
        "logs/report.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        dataset_experiments=PLAN.dataset_experiments,
        dataset_figures=PLAN.dataset_figures,
    script:
        "../scripts/report.py"


# The reproduction scorecard (experiments/scorecard.py): each figure and table of the papers
# against the published numbers, and the claims of their texts, from what this run built.


rule scorecard:
    input:
        unpack(lambda w: PLAN.scorecard_inputs()),
    output:
        scorecard="results/scorecard.csv",
        values="results/scorecard_values.csv",
        claims="results/claims.csv",
    log:
        "logs/scorecard.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        metrics=PLAN.scorecard_metrics(),
        extra_figures=PLAN.extra_figures(),
    script:
        "../scripts/scorecard.py"
