# Real datasets (DESIGN.md 7): fetch -> parse -> the cells that read them, one DAG.
# The fetch is a checkpoint that always records whether the raw file could be obtained
# (datasets/raw/<dataset>.status.json), so that without it every other target is still built,
# the report included, which names what is missing; the run then ends with the same summary
# and a non-zero exit status (finish_datasets, called by the Snakefile's hooks).
# The helpers (dataset_status, reproducible, finish_datasets, ...) are in common.smk.


checkpoint fetch_dataset:
    output:
        "datasets/raw/{dataset}.status.json",
    log:
        "logs/datasets/fetch_{dataset}.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        # 5 s to connect, 60 s per read, 3 retries with backoff, then a 33 MB download at worst
        runtime=15,
    params:
        # a changed source fetches again (and reparses, and reruns the cells)
        url=lambda w: DATASETS[w.dataset].get("url"),
        path=lambda w: DATASETS[w.dataset].get("path"),
    script:
        "../scripts/fetch_dataset.py"


rule parse_dataset:
    input:
        status="datasets/raw/{dataset}.status.json",
        raw=raw_dataset_file,
    output:
        npz="datasets/processed/{dataset}.npz",
        stats="datasets/processed/{dataset}.json",
    log:
        "logs/datasets/parse_{dataset}.log",
    threads: 1
    resources:
        # parsing the full Kosarak file peaks at about 0.7 GB in 2 s (benchmarks/bench_parsing.py),
        # plus the job's Python processes (0.5 GB), with the cell jobs' 25 % margin
        mem_mb=1600,
        runtime=SMALL_JOB_RUNTIME,
    params:
        min_items=lambda w: DATASETS[w.dataset].get("min_items"),
        expect=lambda w: DATASETS[w.dataset].get("expect"),
    script:
        "../scripts/parse_dataset.py"


rule figure2:
    input:
        [f"datasets/processed/{dataset}.npz" for dataset in DATASETS],
    output:
        pdf="figures/figure2.pdf",
        png=report("figures/figure2.png", category="Figures"),
    log:
        "logs/figures/figure2.log",
    threads: 1
    resources:
        mem_mb=SMALL_JOB_MEM_MB,
        runtime=SMALL_JOB_RUNTIME,
    params:
        datasets=list(DATASETS),
    script:
        "../scripts/figure2.py"
