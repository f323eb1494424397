# The empirical privacy audit (docs/design.md §5.8): every audit of the config's `audits:` section
# (names from experiments.audit.audits.AUDITS, or audits of configured variants on a named pair) with its
# positive control, one job each, then one table, one figure; the report states the outcome.


if not RUN.from_committed:

    rule audit:
        input:
            # the plug-in file of an audited variant: an edited estimator reruns its audit
            lambda w: RUN.targets.audit_inputs(w.audit),
        output:
            paths.AUDIT,
        log:
            paths.AUDIT_LOG,
        # measured like the cell jobs, for benchmarks/cost_table.py (docs/cluster.md#cost-of-a-full-reproduction)
        benchmark:
            paths.AUDIT_BENCHMARK
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=AUDIT_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            runs=lambda w: (config["audits"][w.audit] or {}).get("runs"),
            budget=lambda w: (config["audits"][w.audit] or {}).get("budget"),
            # an audited variant, its pair and plug-in digest (None for a registered audit): a change reruns it
            variant=lambda w: RUN.targets.audit_fingerprint(w.audit),
            seed=config["seed"],
        script:
            "../scripts/audit.py"

    rule audit_table:
        input:
            [paths.fill(paths.AUDIT, audit=name) for name in RUN.audits],
        output:
            report(paths.AUDIT_TABLE, caption="../report/audit_table.rst", category="Privacy audit"),
        log:
            paths.AUDIT_TABLE_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        script:
            "../scripts/audit_table.py"


rule audit_figure:
    input:
        paths.AUDIT_TABLE,
    output:
        pdf=paths.fill(paths.FIGURE_PDF, figure=RUN.targets.AUDIT_FIGURE),
        png=report(
            paths.fill(paths.FIGURE_PNG, figure=RUN.targets.AUDIT_FIGURE),
            caption="../report/audit_figure.rst",
            category="Privacy audit",
        ),
    log:
        paths.fill(paths.FIGURE_LOG, figure=RUN.targets.AUDIT_FIGURE),
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    script:
        "../scripts/audit_figure.py"
