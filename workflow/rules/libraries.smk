# PLAN beside the DP libraries practitioners use (experiments/outputs/libraries.py, docs/design.md §6.1):
# per experiment of the config's `libraries:`, its comparison table from its cells (the report
# gathers them, with the seconds per call).


rule library_comparison:
    input:
        lambda w: RUN.trials.cell_files(w.experiment),
    output:
        report(paths.LIBRARY_TABLE, caption="../report/libraries_comparison.rst", category="Libraries"),
    log:
        paths.LIBRARY_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        comparison=lambda w: RUN.libraries[w.experiment],
    script:
        "../scripts/libraries.py"
