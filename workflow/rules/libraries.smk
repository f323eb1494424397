# PLAN beside the DP libraries practitioners use (experiments/libraries.py, docs/design.md §6.1):
# the comparison table and the seconds per call of the config's `libraries:` experiments.


rule libraries:
    input:
        cells=lambda w: PLAN.library_cell_files(),
    output:
        comparison=report(PLAN.LIBRARIES_OUTPUTS[0], caption="../report/libraries_comparison.rst", category="Libraries"),
        seconds=report(PLAN.LIBRARIES_OUTPUTS[1], caption="../report/libraries_seconds.rst", category="Libraries"),
    log:
        "logs/libraries.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        libraries=lambda w: PLAN.library_comparisons(),
    script:
        "../scripts/libraries.py"
