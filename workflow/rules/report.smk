# The errata of DESIGN.md 5.0 and 5.3 as data and figures, and one HTML page with every
# figure, table, run time and the provenance of the run.
from experiments.errata import accounting_pair, noscale_setup


# Snakemake's own report (`snakemake --report report.zip`, beside this page): this description,
# then every output wrapped in report(...), each with its caption from workflow/report/.
report: "../report/workflow.rst"


# Experiments that run PLAN under both published and exact accounting: experiment -> names.
ERRATA_PAIRS = {
    experiment: list(pair) for experiment, spec in EXPERIMENTS.items() if (pair := accounting_pair(spec.mechanisms))
}
# The PLAN-noscale figure needs a fidelity experiment that maps the published PLAN-noscale
# curve to one of our mechanisms (gaussian_A in the paper configs); without one it is skipped.
ERRATA_NOSCALE = noscale_setup(config, EXPERIMENTS)
ERRATA_NOSCALE_INPUTS = (
    {
        "noscale_summary": f"results/{ERRATA_NOSCALE['experiment']}/summary.csv",
        "noscale_reference": ERRATA_NOSCALE["reference"],
    }
    if ERRATA_NOSCALE
    else {}
)
ERRATA_NOSCALE_OUTPUTS = (
    {
        "noscale_table": report(
            "results/errata/noscale.csv", caption="../report/errata_noscale_table.rst", category="Errata figures"
        ),
        "noscale_png": report(
            "figures/errata_noscale.png", caption="../report/errata_noscale.rst", category="Errata figures"
        ),
        "noscale_pdf": "figures/errata_noscale.pdf",
    }
    if ERRATA_NOSCALE
    else {}
)
ERRATA_FIGURES = ["figures/errata_accounting.png"] + (["figures/errata_noscale.png"] if ERRATA_NOSCALE else [])
# Tables other stages produce, shown generically in the report (Table 2 of the paper and its erratum).
REPORT_TABLES = TABLE2_OUTPUTS


rule errata:
    input:
        **ERRATA_NOSCALE_INPUTS,
        summaries=[f"results/{experiment}/summary.csv" for experiment in ERRATA_PAIRS],
        cells=[path for experiment in ERRATA_PAIRS for path in cell_files(experiment)],
    output:
        **ERRATA_NOSCALE_OUTPUTS,
        table=report(
            "results/errata/accounting.csv", caption="../report/errata_accounting_table.rst", category="Errata figures"
        ),
        accounting_png=report(
            "figures/errata_accounting.png", caption="../report/errata_accounting.rst", category="Errata figures"
        ),
        accounting_pdf="figures/errata_accounting.pdf",
    log:
        "logs/errata.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        pairs=ERRATA_PAIRS,
        noscale=ERRATA_NOSCALE,
    script:
        "../scripts/errata.py"


rule report_page:
    input:
        unpack(report_inputs),
        errata_table="results/errata/accounting.csv",
        errata_noscale=ERRATA_NOSCALE_OUTPUTS.get("noscale_table", []),
        errata_figures=ERRATA_FIGURES,
        errata_pdfs=[path.removesuffix(".png") + ".pdf" for path in ERRATA_FIGURES],
        tables=REPORT_TABLES,
        dataset_statuses=dataset_status_files(),
        scorecard=(
            ["results/scorecard.csv", "results/scorecard_values.csv", "results/claims.csv"]
            if config.get("scorecard")
            else []
        ),
    output:
        report("results/report.html", caption="../report/report_page.rst", category="Report"),
    log:
        "logs/report.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        dataset_experiments=DATASET_EXPERIMENTS,
        dataset_figures=DATASET_FIGURES,
    script:
        "../scripts/report.py"


# The reproduction scorecard (experiments/scorecard.py): each figure and table of the papers
# against the published numbers, and the claims of their texts, from what this run built.
SCORECARD = config.get("scorecard") or {}
# what reproduces no paper figure: the config's own figures and the errata, audit and worst-case figures
EXTRA_FIGURES = {
    **{name: spec["title"] for name, spec in config.get("figures", {}).items() if not spec.get("reproduces")},
    **{os.path.basename(path).removesuffix(".png"): "Errata figure" for path in ERRATA_FIGURES},
    **({"audit": "Privacy audit: claimed eps and the lower bounds found"} if AUDIT_NAMES else {}),
    **({"userlevel_worst_case": "User-level clipping: analytic worst-case errors"} if worst_case_panels() else {}),
}


rule scorecard:
    input:
        unpack(scorecard_inputs),
    output:
        scorecard=report("results/scorecard.csv", caption="../report/scorecard.rst", category="Scorecard"),
        values=report("results/scorecard_values.csv", caption="../report/scorecard_values.rst", category="Scorecard"),
        claims=report("results/claims.csv", caption="../report/claims.rst", category="Scorecard"),
    log:
        "logs/scorecard.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        metrics={figure: figure_metrics(figure) for figure in config.get("figures", {})},
        extra_figures=EXTRA_FIGURES,
    script:
        "../scripts/scorecard.py"
