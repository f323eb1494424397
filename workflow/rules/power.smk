# The privacy audit's power curves (docs/design.md §5.8, experiments/audit/power.py): for each mechanism of
# the config's `audit_power:` section one job repeats its audit against every break and number of
# runs (the longest jobs first, so two cores end together), then one table and one figure; the
# report shows both.


rule audit_power:
    output:
        "results/audit/power/{mechanism}.csv",
    log:
        "logs/audit/power_{mechanism}.log",
    # measured like the audits, for benchmarks/cost_table.py (docs/cluster.md#cost-of-a-full-reproduction)
    benchmark:
        "results/audit/benchmarks/power_{mechanism}.tsv"
    priority: lambda w: PLAN.power_priority(w.mechanism)
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=AUDIT_MEM_MB,
        runtime=lambda w: PLAN.power_runtime(w.mechanism),
    params:
        budget=lambda w: PLAN.audit_power["mechanisms"][w.mechanism],
        runs=PLAN.audit_power.get("runs"),
        breaks=PLAN.audit_power.get("breaks"),
        repetitions=PLAN.audit_power.get("repetitions"),
        seed=config["seed"],
    script:
        "../scripts/audit_power.py"


rule audit_power_table:
    input:
        PLAN.power_files,
    output:
        report("results/audit/power_curves.csv", caption="../report/audit_power_table.rst", category="Privacy audit"),
    log:
        "logs/audit/power_table.log",
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
        "results/audit/power_curves.csv",
    output:
        pdf="figures/audit_power.pdf",
        png=report("figures/audit_power.png", caption="../report/audit_power_figure.rst", category="Privacy audit"),
    log:
        "logs/figures/audit_power.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    script:
        "../scripts/audit_power_figure.py"
