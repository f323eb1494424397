# One job per cell; the trials of a cell loop inside the job (DESIGN.md 3). An experiment with
# `share_rho: true` runs instead one job per setting (every rho of it): each trial's data and
# IOME's rotation and histogram are computed once for all rho, and the cell files are the
# ones the per-cell jobs would write (the rho-independent randomness is keyed by the setting).


rule run_cell:
    input:
        lambda w: dataset_inputs(w.experiment),
    output:
        "results/{experiment}/cells/{cell}.csv",
    log:
        "logs/{experiment}/cells/{cell}.log",
    benchmark:
        "results/{experiment}/benchmarks/{cell}.tsv"
    wildcard_constraints:
        experiment=UNSHARED_EXPERIMENTS,
    priority: cell_priority
    conda:
        "../envs/plan.yaml"
    threads: 1
    resources:
        # from the cell's data and work, with margins (common.smk, job_mem_mb)
        mem_mb=lambda w: job_mem_mb(w.experiment, w),
        runtime=lambda w: job_runtime(w.experiment, w),
    params:
        # Everything the cell's results depend on: editing it reruns exactly this cell.
        spec=lambda w: EXPERIMENTS[w.experiment].fingerprint(EXPERIMENTS[w.experiment].cell(w.cell)),
        seed=config["seed"],
    script:
        "../scripts/run_cell.py"


for _experiment in SHARED_EXPERIMENTS:

    rule:
        name:
            f"run_setting_{_experiment}"
        input:
            dataset_inputs(_experiment),
        output:
            setting_outputs(_experiment),
        log:
            setting_file("logs", _experiment, "log"),
        benchmark:
            setting_file("results", _experiment, "tsv")
        priority: lambda w, experiment=_experiment: setting_priority(experiment, w)
        conda:
            "../envs/plan.yaml"
        threads: 1
        resources:
            mem_mb=lambda w, experiment=_experiment: job_mem_mb(experiment, w),
            runtime=lambda w, experiment=_experiment: job_runtime(experiment, w),
        params:
            experiment=_experiment,
            # Every cell's fingerprint: editing one reruns the setting.
            spec=lambda w, experiment=_experiment: setting_fingerprints(experiment, w),
            seed=config["seed"],
        script:
            "../scripts/run_setting.py"
