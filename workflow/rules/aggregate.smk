# Summaries per experiment and the fidelity comparison with published numbers.


rule summarise:
    input:
        lambda w: PLAN.cell_files(w.experiment),
    output:
        report(
            "results/{experiment}/summary.csv",
            caption="../report/summary.rst",
            category="Summaries",
            subcategory="{experiment}",
        ),
    log:
        "logs/{experiment}/summary.log",
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.summarise_mem_mb(w.experiment),
        runtime=SMALL_JOB_RUNTIME,
    params:
        grid=lambda w: PLAN.experiments[w.experiment].grid_names,
        # the reference of the error relative to the empirical mean (PLAN Figure 3(c))
        empirical=lambda w: PLAN.experiments[w.experiment].empirical_mechanism,
        # what every cell file must hold (experiments/engine/cell_files.py)
        trials=lambda w: PLAN.experiments[w.experiment].trials,
        mechanisms=lambda w: [m.name for m in PLAN.experiments[w.experiment].mechanisms],
    script:
        "../scripts/summarise.py"


rule fidelity:
    input:
        summary="results/{experiment}/summary.csv",
        reference=lambda w: config["fidelity"][w.experiment]["reference"],
    output:
        report(
            "results/fidelity/{experiment}.csv",
            caption="../report/fidelity.rst",
            category="Fidelity tables",
            subcategory="{experiment}",
        ),
    log:
        "logs/fidelity/{experiment}.log",
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


if PLAN.table2:

    rule table2:
        input:
            summary=PLAN.summary(PLAN.table2["protocol"]),
            reference=PLAN.table2["reference"],
        output:
            table=report(PLAN.TABLE2_TABLE, caption="../report/table2.rst", category="Table 2", subcategory="Table 2"),
            caption=PLAN.TABLE2_TABLE.replace(".csv", ".caption.txt"),
        log:
            "logs/variance_study/table2.log",
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            setup=PLAN.table2,
        script:
            "../scripts/table2.py"


if PLAN.table2.get("corrected"):

    rule table2_erratum:
        input:
            protocol_summary=PLAN.summary(PLAN.table2["protocol"]),
            corrected_summary=PLAN.summary(PLAN.table2["corrected"]),
            reference=PLAN.table2["reference"],
        output:
            table=report(
                PLAN.TABLE2_ERRATUM, caption="../report/table2_erratum.rst", category="Table 2", subcategory="Erratum"
            ),
            caption=PLAN.TABLE2_ERRATUM.replace(".csv", ".caption.txt"),
            notes=PLAN.TABLE2_ERRATUM.replace(".csv", ".notes.txt"),
        log:
            "logs/variance_study/table2_erratum.log",
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            setup=PLAN.table2,
            seed=config["seed"],
        script:
            "../scripts/table2_erratum.py"
