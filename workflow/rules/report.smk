# The errata of docs/design.md §5.0, §5.3 as data and figures, and one HTML page with every
# figure, table, run time and the provenance of the run. Their inputs and outputs are the
# plan's (experiments/planning/report_inputs.py).


# Snakemake's own report (`snakemake --report report.zip`, beside this page): this description,
# then every output wrapped in report(...), each with its caption from workflow/report/.
report: "../report/workflow.rst"


rule errata:
    input:
        **RUN.report.errata_inputs(),
    output:
        **RUN.report.errata_noscale_outputs(
            lambda path, key: report(
                path,
                caption={
                    "noscale_table": "../report/errata_noscale_table.rst",
                    "noscale_png": "../report/errata_noscale.rst",
                }[key],
                category="Errata figures",
            )
        ),
        table=report(
            paths.ERRATA_ACCOUNTING, caption="../report/errata_accounting_table.rst", category="Errata figures"
        ),
        accounting_png=report(
            RUN.report.ACCOUNTING_FIGURE, caption="../report/errata_accounting.rst", category="Errata figures"
        ),
        accounting_pdf=paths.fill(paths.FIGURE_PDF, figure="errata_accounting"),
    log:
        paths.ERRATA_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        pairs=RUN.report.errata_pairs,
        noscale=RUN.report.errata_noscale,
    script:
        "../scripts/errata.py"


if not RUN.from_committed:

    # the run's measured run times, which the report shows (a rebuild shows the committed ones)
    rule run_times:
        input:
            lambda w: RUN.report.run_time_benchmarks(),
        output:
            paths.RUN_TIMES,
        log:
            paths.RUN_TIMES_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        script:
            "../scripts/run_times.py"


rule report_page:
    input:
        unpack(lambda w: RUN.report.report_inputs()),
        **RUN.report.report_extra_inputs(),
    output:
        report(paths.REPORT, caption="../report/report_page.rst", category="Report"),
    log:
        paths.REPORT_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        dataset_experiments=RUN.real_data.dataset_experiments,
        dataset_figures=RUN.real_data.dataset_figures,
    script:
        "../scripts/report.py"


# The reproduction scorecard (experiments/outputs/scorecard.py): each figure and table of the papers
# against the published numbers, and the claims of their texts, from what this run built.


rule scorecard:
    input:
        unpack(lambda w: RUN.report.scorecard_inputs()),
    output:
        scorecard=report(paths.SCORECARD, caption="../report/scorecard.rst", category="Scorecard"),
        values=report(paths.SCORECARD_VALUES, caption="../report/scorecard_values.rst", category="Scorecard"),
        claims=report(paths.CLAIMS, caption="../report/claims.rst", category="Scorecard"),
    log:
        paths.SCORECARD_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        metrics=RUN.report.scorecard_metrics(),
        extra_figures=RUN.report.extra_figures(),
    script:
        "../scripts/scorecard.py"
