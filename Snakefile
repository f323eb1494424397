# Reproduces the PLAN paper's figures and tables from config/*.yaml (docs/design.md §3).
# `snakemake --cores all` builds everything below; `--configfile config/smoke.yaml` is the
# tiny CI-sized run (paths are relative to the working directory).
# The full paper config; files given with --configfile are merged over it (docs/configuration.md).


configfile: "config/config.yaml"


include: "workflow/rules/paths.smk"
include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/power.smk"
include: "workflow/rules/illustrations.smk"
include: "workflow/rules/report.smk"


# A rebuild from the committed results (config `from_committed: true`, `make report`) defines no
# rule that computes them: the trials and the library comparisons here, the fetch, summaries, audits,
# power curves and run times in their files (docs/workflow.md#rebuilding-from-the-committed-results).
if not RUN.from_committed:

    include: "workflow/rules/trials.smk"
    include: "workflow/rules/libraries.smk"


rule all:
    default_target: True
    input:
        RUN.targets.static_targets(),
        # one function per dataset: each waits only for its own fetch
        [lambda w, dataset=dataset: RUN.targets.dataset_targets(dataset) for dataset in RUN.datasets],
        [lambda w, dataset=dataset: RUN.real_data.processed_dataset(dataset) for dataset in RUN.datasets],


# A run without some real dataset ends by naming it, and with a non-zero exit status.
onsuccess:
    RUN.real_data.finish_datasets(sys.stderr)


# A Slurm job killed for its memory or time request: one line naming the rule and the resource.
onerror:
    report_resource_failures(log, sys.stderr)
    RUN.real_data.finish_datasets(sys.stderr, failed=True)
