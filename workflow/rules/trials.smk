# One job per cell; the trials of a cell loop inside the job (docs/design.md §3). An experiment with
# `share_rho: true` runs instead one job per setting (every rho of it): each trial's data and
# IOME's rotation and histogram are computed once for all rho, and the cell files are the
# ones the per-cell jobs would write (the rho-independent randomness is keyed by the setting).
# A long job runs as trial shards (experiments/planning/shards.py): jobs of consecutive trials whose
# files the cell or setting job merges into the same cell files (same bytes).


rule run_cell:
    input:
        lambda w: RUN.trials.dataset_inputs(w.experiment),
        # the plug-in files of its mechanisms: an edited estimator reruns its cells
        lambda w: RUN.trials.plugin_inputs(w.experiment),
        shards=lambda w: RUN.trials.shard_inputs(w.experiment, w),
    output:
        paths.fill(paths.CELL, suffix=".csv"),
    log:
        paths.CELL_LOG,
    benchmark:
        paths.fill(paths.JOB_BENCHMARK, job="{cell}")
    wildcard_constraints:
        experiment=RUN.trials.unshared_pattern,
    priority: lambda w: RUN.resources.job_priority(w.experiment, w)
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        # from the cell's data and work, with margins (experiments/planning/resources.py)
        mem_mb=lambda w: RUN.resources.job_mem_mb(w.experiment, w),
        runtime=lambda w: RUN.resources.job_runtime(w.experiment, w),
    params:
        # Everything the cell's results depend on: editing it reruns exactly this cell.
        spec=lambda w: RUN.trials.cell_fingerprint(w.experiment, w.cell),
        seed=config["seed"],
        experiment=lambda w: w.experiment,
        cells=lambda w: [w.cell],
        layout=lambda w: RUN.trials.shard_layout_file(w.experiment, w.cell),
        # each file of input.shards: its cell, first and last trial (the job parses no path)
        shard_trials=lambda w: RUN.trials.shard_trials(w.experiment, w),
        # the shared-sample cache fills what the job's mem_mb leaves (never changes results)
        cache_bytes=lambda w, resources: RUN.resources.job_cache_bytes(w.experiment, w, resources.mem_mb),
    script:
        "../scripts/run_cells.py"


rule run_shard:
    input:
        lambda w: RUN.trials.dataset_inputs(w.experiment),
        lambda w: RUN.trials.plugin_inputs(w.experiment),
    output:
        temp(paths.fill(paths.SHARD, suffix=".csv")),
    log:
        paths.fill(paths.SHARD_LOG, job="{cell}"),
    benchmark:
        paths.fill(paths.SHARD_BENCHMARK, job="{cell}")
    wildcard_constraints:
        experiment=RUN.trials.unshared_pattern,
        first=r"\d+",
        last=r"\d+",
    priority: lambda w: RUN.resources.shard_priority(w.experiment, w)
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: RUN.resources.shard_mem_mb(w.experiment, w),
        runtime=lambda w: RUN.resources.shard_runtime(w.experiment, w),
    params:
        experiment=lambda w: w.experiment,
        cells=lambda w: [w.cell],
        spec=lambda w: RUN.trials.cell_fingerprint(w.experiment, w.cell),
        seed=config["seed"],
        cache_bytes=lambda w, resources: RUN.resources.job_cache_bytes(w.experiment, w, resources.mem_mb),
    script:
        "../scripts/run_shard.py"


for _experiment in RUN.trials.shared_experiments:

    rule:
        name:
            f"run_setting_{_experiment}"
        input:
            RUN.trials.dataset_inputs(_experiment),
            RUN.trials.plugin_inputs(_experiment),
            shards=lambda w, experiment=_experiment: RUN.trials.shard_inputs(experiment, w),
        output:
            RUN.trials.setting_outputs(_experiment),
        log:
            paths.fill(paths.SETTING_LOG, experiment=_experiment, job=RUN.trials.setting_job(_experiment)),
        benchmark:
            paths.fill(paths.JOB_BENCHMARK, experiment=_experiment, job=RUN.trials.setting_job(_experiment))
        priority: lambda w, experiment=_experiment: RUN.resources.job_priority(experiment, w)
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=lambda w, experiment=_experiment: RUN.resources.job_mem_mb(experiment, w),
            runtime=lambda w, experiment=_experiment: RUN.resources.job_runtime(experiment, w),
        params:
            experiment=_experiment,
            # Every cell's fingerprint: editing one reruns the setting.
            spec=lambda w, experiment=_experiment: RUN.trials.setting_fingerprints(experiment, w),
            seed=config["seed"],
            layout=lambda w, experiment=_experiment: RUN.trials.shard_layout_file(experiment, w.get("setting") or "all"),
            # the cells of its outputs, in order, and of each file of input.shards
            cells=lambda w, experiment=_experiment: RUN.trials.job_cell_ids(experiment, w),
            shard_trials=lambda w, experiment=_experiment: RUN.trials.shard_trials(experiment, w),
            cache_bytes=lambda w, resources, experiment=_experiment: RUN.resources.job_cache_bytes(
                experiment, w, resources.mem_mb
            ),
        script:
            "../scripts/run_cells.py"

    rule:
        name:
            f"run_setting_shard_{_experiment}"
        input:
            RUN.trials.dataset_inputs(_experiment),
            RUN.trials.plugin_inputs(_experiment),
        output:
            temp(RUN.trials.shard_outputs(_experiment)),
        log:
            paths.fill(paths.SHARD_LOG, experiment=_experiment, job=RUN.trials.setting_job(_experiment)),
        benchmark:
            paths.fill(paths.SHARD_BENCHMARK, experiment=_experiment, job=RUN.trials.setting_job(_experiment))
        wildcard_constraints:
            first=r"\d+",
            last=r"\d+",
        priority: lambda w, experiment=_experiment: RUN.resources.shard_priority(experiment, w)
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=lambda w, experiment=_experiment: RUN.resources.shard_mem_mb(experiment, w),
            runtime=lambda w, experiment=_experiment: RUN.resources.shard_runtime(experiment, w),
        params:
            experiment=_experiment,
            # the cells of its outputs, in order
            cells=lambda w, experiment=_experiment: RUN.trials.job_cell_ids(experiment, w),
            spec=lambda w, experiment=_experiment: RUN.trials.setting_fingerprints(experiment, w),
            seed=config["seed"],
            cache_bytes=lambda w, resources, experiment=_experiment: RUN.resources.job_cache_bytes(
                experiment, w, resources.mem_mb
            ),
        script:
            "../scripts/run_shard.py"
