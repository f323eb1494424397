# Real datasets (docs/design.md §7): fetch -> parse -> the cells that read them, one DAG.
# The fetch is a checkpoint that tries the dataset's sources in order and always records
# whether a raw file with the expected statistics could be obtained, from which source, or why
# each source failed (datasets/raw/<dataset>.status.json), so that without it every other
# target is still built, the report included, which names what is missing; the run then ends
# with the same summary and a non-zero exit status (finish_datasets, called by the Snakefile's
# hooks). What the run could obtain is bookkept by the plan (experiments/planning/real_data.py:
# dataset_status, reproducible, finish_datasets, ...). A copy of each status is kept with the
# results (results/datasets/), which the report, the scorecard and a rebuild from the committed
# results read.


if not RUN.from_committed:

    checkpoint fetch_dataset:
        output:
            paths.DATASET_STATUS,
        log:
            paths.DATASET_FETCH_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            # each source's file is parsed to check it against expect: as parse_dataset below
            mem_mb=DATASET_MEM_MB,
            runtime=FETCH_RUNTIME,
        params:
            # changed sources, min_items or expect (which decide the source accepted) fetch again
            # (and reparse, and rerun the cells)
            settings=lambda w: RUN.dataset_settings[w.dataset],
        script:
            "../scripts/fetch_dataset.py"

    rule parse_dataset:
        input:
            # the status names the raw file (MNIST's idx: the four files) and its format; a changed raw file reparses
            status=paths.DATASET_STATUS,
            raw=lambda w: RUN.real_data.raw_dataset_file(w.dataset),
        output:
            npz=paths.PROCESSED_DATASET,
            stats=paths.PROCESSED_DATASET_STATS,
        log:
            paths.DATASET_PARSE_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=DATASET_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        params:
            min_items=lambda w: RUN.dataset_settings[w.dataset]["min_items"],
            expect=lambda w: RUN.dataset_settings[w.dataset]["expect"],
        script:
            "../scripts/parse_dataset.py"

    rule dataset_record:
        input:
            paths.DATASET_STATUS,
        output:
            paths.DATASET_RECORD,
        log:
            paths.DATASET_RECORD_LOG,
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=SMALL_JOB_MEM_MB,
            runtime=SMALL_JOB_RUNTIME,
        script:
            "../scripts/dataset_record.py"


rule figure2:
    input:
        RUN.real_data.figure2_inputs(),
    output:
        pdf=paths.fill(paths.FIGURE_PDF, figure="figure2"),
        png=report(
            paths.fill(paths.FIGURE_PNG, figure="figure2"),
            caption="../report/figure2.rst",
            category="Paper figures",
            subcategory="PLAN Figure 2",
        ),
    log:
        paths.fill(paths.FIGURE_LOG, figure="figure2"),
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        datasets=RUN.real_data.figure2_datasets,
    script:
        "../scripts/figure2.py"
