# Summaries per experiment and the fidelity comparison with published numbers.


if not RUN.from_committed:

    rule summarise:
        input:
            lambda w: RUN.trials.cell_files(w.experiment),
        output:
            report(
                paths.SUMMARY,
                caption="../report/summary.rst",
                category="Summaries",
                subcategory="{experiment}",
            ),
        log:
            paths.SUMMARY_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=lambda w: RUN.resources.summarise_mem_mb(w.experiment),
            runtime=SMALL_JOB_RUNTIME,
        params:
            grid=lambda w: RUN.experiments[w.experiment].grid_names,
            # the reference of the error relative to the empirical mean (PLAN Figure 3(c))
            empirical=lambda w: RUN.experiments[w.experiment].empirical_mechanism,
            # what every cell file must hold (experiments/engine/cell_files.py)
            trials=lambda w: RUN.experiments[w.experiment].trials,
            mechanisms=lambda w: [m.name for m in RUN.experiments[w.experiment].mechanisms],
        script:
            "../scripts/summarise.py"


rule fidelity:
    input:
        summary=paths.SUMMARY,
        reference=lambda w: config["fidelity"][w.experiment]["reference"],
    output:
        report(
            paths.FIDELITY,
            caption="../report/fidelity.rst",
            category="Fidelity tables",
            subcategory="{experiment}",
        ),
    log:
        paths.FIDELITY_LOG,
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        names=lambda w: config["fidelity"][w.experiment]["names"],
        agreement=lambda w: config["fidelity"][w.experiment].get("agreement", "band"),
        required_share=lambda w: config["fidelity"][w.experiment].get("required_share", 1.0),
        measure=lambda w: config["fidelity"][w.experiment].get("measure", "error"),
        reference_experiment=lambda w: config["fidelity"][w.experiment].get("reference_experiment"),
    script:
        "../scripts/fidelity.py"


if RUN.table2:

    rule table2:
        input:
            summary=RUN.targets.summary(RUN.table2["protocol"]),
            reference=RUN.table2["reference"],
        output:
            table=report(paths.TABLE2, caption="../report/table2.rst", category="Table 2", subcategory="Table 2"),
            caption=paths.TABLE2.replace(".csv", ".caption.txt"),
        log:
            paths.TABLE2_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            setup=RUN.table2,
        script:
            "../scripts/table2.py"


if RUN.table2.get("corrected"):

    rule table2_erratum:
        input:
            protocol_summary=RUN.targets.summary(RUN.table2["protocol"]),
            corrected_summary=RUN.targets.summary(RUN.table2["corrected"]),
            reference=RUN.table2["reference"],
        output:
            table=report(
                paths.TABLE2_ERRATUM, caption="../report/table2_erratum.rst", category="Table 2", subcategory="Erratum"
            ),
            caption=paths.TABLE2_ERRATUM.replace(".csv", ".caption.txt"),
            notes=paths.TABLE2_ERRATUM.replace(".csv", ".notes.txt"),
        log:
            paths.TABLE2_ERRATUM_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            setup=RUN.table2,
            seed=config["seed"],
        script:
            "../scripts/table2_erratum.py"
