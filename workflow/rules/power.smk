# The privacy audit's power curves (docs/design.md §5.8, experiments/audit/power.py): for each mechanism of
# the config's `audit_power:` section one job repeats its audit against every break and number of
# runs (the longest jobs first, so two cores end together), then one table and one figure; the
# report shows both.


if not RUN.from_committed:

    rule audit_power:
        output:
            paths.POWER,
        log:
            paths.POWER_LOG,
        # measured like the audits, for benchmarks/cost_table.py (docs/cluster.md#cost-of-a-full-reproduction)
        benchmark:
            paths.POWER_BENCHMARK
        priority: lambda w: RUN.resources.power_priority(w.mechanism)
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=AUDIT_MEM_MB,
            runtime=lambda w: RUN.resources.power_runtime(w.mechanism),
        params:
            budget=lambda w: RUN.audit_power["mechanisms"][w.mechanism],
            runs=RUN.audit_power.get("runs"),
            breaks=RUN.audit_power.get("breaks"),
            repetitions=RUN.audit_power.get("repetitions"),
            seed=config["seed"],
        script:
            "../scripts/audit_power.py"

    rule audit_power_table:
        input:
            RUN.targets.power_files,
        output:
            report(paths.POWER_TABLE, caption="../report/audit_power_table.rst", category="Privacy audit"),
        log:
            paths.POWER_TABLE_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        script:
            "../scripts/audit_power_table.py"


rule audit_power_figure:
    input:
        paths.POWER_TABLE,
    output:
        pdf=paths.fill(paths.FIGURE_PDF, figure=RUN.targets.POWER_FIGURE),
        png=report(
            paths.fill(paths.FIGURE_PNG, figure=RUN.targets.POWER_FIGURE),
            caption="../report/audit_power_figure.rst",
            category="Privacy audit",
        ),
    log:
        paths.fill(paths.FIGURE_LOG, figure=RUN.targets.POWER_FIGURE),
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    script:
        "../scripts/audit_power_figure.py"
