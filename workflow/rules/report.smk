# The errata of DESIGN.md 5.0 and 5.3 as data and figures, and one HTML page with every
# figure, table, run time and the provenance of the run.
from experiments.errata import accounting_pair, noscale_setup

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
        "noscale_table": "results/errata/noscale.csv",
        "noscale_png": report("figures/errata_noscale.png", category="Errata"),
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
        tables=REPORT_TABLES,
        dataset_statuses=dataset_status_files(),
    output:
        report("results/report.html", category="Report"),
    log:
        "logs/report.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        dataset_experiments=DATASET_EXPERIMENTS,
        dataset_figures=DATASET_FIGURES,
    script:
        "../scripts/report.py"
