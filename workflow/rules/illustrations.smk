# Illustrations drawn from the project's own mechanisms (experiments/outputs/illustrations.py): PLAN
# paper Figures 1 and 6 and the user-level paper's Figure 1, one job each, for the entries of
# the config's `illustrations:` section that the run draws (RUN.illustrations).


rule illustration:
    output:
        pdf=paths.fill(paths.FIGURE_PDF, figure="{illustration}"),
        png=report(
            paths.fill(paths.FIGURE_PNG, figure="{illustration}"),
            caption="../report/illustration.rst",
            category="Illustrations",
            subcategory="{illustration}",
        ),
        csv=report(
            paths.fill(paths.ILLUSTRATION_DATA, figure="{illustration}"),
            caption="../report/illustration_data.rst",
            category="Illustrations",
            subcategory="{illustration}",
        ),
    log:
        paths.fill(paths.ILLUSTRATION_LOG, figure="{illustration}"),
    wildcard_constraints:
        illustration=RUN.targets.illustration_pattern,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        spec=lambda w: RUN.illustrations[w.illustration],
        seed=config["seed"],
    script:
        "../scripts/illustration.py"
