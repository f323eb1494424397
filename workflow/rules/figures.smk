# One PDF and one PNG per paper figure (docs/design.md §6, §11).


rule figure:
    input:
        lambda w: RUN.targets.figure_summaries(w.figure),
    output:
        pdf=paths.FIGURE_PDF,
        png=report(
            paths.FIGURE_PNG,
            caption="../report/figure.rst",
            # a figure that reproduces one of the papers' (config `reproduces:`), or one of ours
            category=lambda w: (
                "Paper figures" if config["figures"][w.figure].get("reproduces") else "Extended figures"
            ),
            subcategory=lambda w: config["figures"][w.figure].get("reproduces") or w.figure,
        ),
    log:
        paths.FIGURE_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        spec=lambda w: config["figures"][w.figure],
        # the y label names each panel's metric
        metrics=lambda w: RUN.targets.figure_metrics(w.figure),
    script:
        "../scripts/figure.py"


# The analytic worst-case errors of the user-level paper (equations (7), (8)) for the d = 1
# user-level experiments' collections and eps grids.
rule worst_case_figure:
    output:
        pdf=paths.fill(paths.FIGURE_PDF, figure=RUN.targets.WORST_CASE),
        png=report(
            paths.fill(paths.FIGURE_PNG, figure=RUN.targets.WORST_CASE),
            caption="../report/worst_case.rst",
            category="Extended figures",
            subcategory="userlevel_worst_case",
        ),
    log:
        paths.fill(paths.FIGURE_LOG, figure=RUN.targets.WORST_CASE),
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        panels=RUN.targets.worst_case_panels(),
    script:
        "../scripts/worst_case_figure.py"
