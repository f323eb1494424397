# Config validation and the helpers the other rule files use.
import math
import re

from snakemake.utils import validate

from experiments import resources as job_resources
from experiments.availability import fetch_settings, missing_summary, not_reproduced, read_status, stale_status
from experiments.cluster import report_resource_failures
from experiments.config import ConfigError, check_audits, check_table2, format_value, load_experiments
from experiments.sources import source_defaults
from experiments.validation import one_line_config_error

try:
    validate(config, "../schemas/config.schema.yaml")
    EXPERIMENTS = load_experiments(config)
    AUDIT_NAMES = check_audits(config)
    TABLE2 = check_table2(config, EXPERIMENTS)
    # per real dataset, what its fetch depends on (sources, min_items, expect), checked
    DATASET_SETTINGS = {name: fetch_settings(name, entry) for name, entry in (config.get("datasets") or {}).items()}
except Exception as error:
    raise ConfigError(one_line_config_error(error)) from None


DATASETS = config.get("datasets") or {}
# dataset -> the experiments and figures that need it
DATASET_EXPERIMENTS = {
    dataset: [experiment for experiment, spec in EXPERIMENTS.items() if spec.dataset == dataset] for dataset in DATASETS
}
DATASET_FIGURES = {
    dataset: [
        figure
        for figure, spec in config.get("figures", {}).items()
        if any(EXPERIMENTS[panel["experiment"]].dataset == dataset for panel in spec["panels"])
    ]
    + (["figure2"] if DATASETS else [])
    for dataset in DATASETS
}


# PLAN Table 2 (config `table2:`): beside the paper's numbers, and the erratum beside our
# corrected version (workflow/rules/aggregate.smk, experiments/tables.py).
TABLE2_TABLE = "results/variance_study/table2.csv"
TABLE2_ERRATUM = "results/variance_study/table2_erratum.csv"
TABLE2_OUTPUTS = ([TABLE2_TABLE] if TABLE2 else []) + ([TABLE2_ERRATUM] if TABLE2.get("corrected") else [])


# Experiments whose rho values run in one job per setting (share_rho), and the others.
SHARED_EXPERIMENTS = [experiment for experiment, spec in EXPERIMENTS.items() if spec.share_rho]
UNSHARED_EXPERIMENTS = "|".join(re.escape(e) for e in EXPERIMENTS if e not in SHARED_EXPERIMENTS) or "(?!)"


wildcard_constraints:
    experiment="[A-Za-z0-9_]+",
    cell="[^/]+",
    setting="[^/]+",
    # only configured paper figures: other outputs in figures/ (the errata) have rules of their own
    figure="|".join(map(re.escape, config.get("figures", {}))) or "(?!)",
    dataset="|".join(map(re.escape, DATASETS)) or "(?!)",


def cell_files(experiment):
    spec = EXPERIMENTS[experiment]
    return [f"results/{experiment}/cells/{cell.id}{spec.cell_suffix}" for cell in spec.cells()]


def cell_priority(wildcards):
    """Largest cells first, so a run ends on short jobs instead of one long one. The
    logarithm keeps the priorities small numbers; only their order matters."""
    spec = EXPERIMENTS[wildcards.experiment]
    return round(10 * math.log2(spec.work(spec.cell(wildcards.cell))))


def cell_benchmarks(experiment):
    """The Snakemake benchmark file of every job of the experiment (one per cell, or one per
    setting with share_rho)."""
    spec = EXPERIMENTS[experiment]
    if spec.share_rho:
        return [f"results/{experiment}/benchmarks/{setting or 'all'}.tsv" for setting in spec.settings()]
    return [f"results/{experiment}/benchmarks/{cell.id}.tsv" for cell in spec.cells()]


def setting_outputs(experiment):
    """The cell files of one setting job: a {setting} wildcard and every budget value of the
    grid (a grid of the budget alone has a single setting and no wildcard)."""
    spec = EXPERIMENTS[experiment]
    prefix = "{setting}_" if spec.setting_names else ""
    values = dict(spec.grid)[spec.budget]
    return [f"results/{experiment}/cells/{prefix}{spec.budget}={format_value(v)}{spec.cell_suffix}" for v in values]


def setting_file(root, experiment, extension):
    """The log (root "logs") or benchmark (root "results") file of a setting job."""
    folder = "settings" if root == "logs" else "benchmarks"
    name = "{setting}" if EXPERIMENTS[experiment].setting_names else "all"
    return f"{root}/{experiment}/{folder}/{name}.{extension}"


def _setting_cells(experiment, wildcards):
    return EXPERIMENTS[experiment].settings()[wildcards.get("setting", "")]


def setting_fingerprints(experiment, wildcards):
    spec = EXPERIMENTS[experiment]
    return [spec.fingerprint(cell) for cell in _setting_cells(experiment, wildcards)]


def setting_priority(experiment, wildcards):
    """As cell_priority, for all the cells of a setting job."""
    spec = EXPERIMENTS[experiment]
    return round(10 * math.log2(sum(spec.work(cell) for cell in _setting_cells(experiment, wildcards))))


# Resources of the cell and setting jobs (DESIGN.md 10), from what the job holds and does
# (experiments/resources.py: the estimates and the measurements behind them):
#   mem_mb  = ceil(1.25 x peak), peak = 500 MiB for the job's Python processes + one trial's
#             arrays (dense: 3.5-4.5 S for S = n x d x 8 bytes of data, the cache's transposed
#             copy and sorted rows included, 8 S below n = 3000; sparse: 150 bytes per nonzero
#             and IOME's counts; user-level: 1.6 x the batch of runs) + the result rows;
#   runtime = ceil(3 x seconds / 60) minutes, at least 5, seconds from the job's work at the
#             slowest rates measured (README "Performance": 30 s to start, then per mechanism
#             call 7.5e-8 s per entry of dense data, ...).
# Margins: 25 % on memory (allocations are deterministic: peaks differ little between runs; the
# margin covers the allocator and numpy temporaries the estimate leaves out) and 3x on time (this
# VM ran 2x slower on some days than others; cluster cores differ). The shared-sample cache gets
# the granted mem_mb less what the job holds outside it (run_cell.py, run_setting.py), so a
# smaller --set-resources mem_mb shrinks the cache instead of the results changing.
MEMORY_MARGIN = 1.25
RUNTIME_MARGIN = 3.0
MIN_RUNTIME = 5


# The other jobs read summaries or draw figures: measured at most 0.52 GB in a Slurm job on the
# smoke config (sacct MaxRSS: the plugin's job step 186 MB + the rule's Snakemake and script
# 330 MB), where the default config's summaries and figures are little larger; 1 GB and
# 10 minutes (they take seconds) leave the margin.
SMALL_JOB_MEM_MB = 1000
SMALL_JOB_RUNTIME = 10
SUMMARY_ROW_BYTES = 200


def summarise_mem_mb(experiment):
    """A summary reads every trial row of the experiment's cells (10^4 runs per cell and
    mechanism for the user-level ones): SUMMARY_ROW_BYTES per row at the peak, measured."""
    spec = EXPERIMENTS[experiment]
    rows = spec.trials * len(spec.mechanisms) * len(spec.cells())
    peak = job_resources.JOB_BASE_MB + SUMMARY_ROW_BYTES * rows / job_resources.MIB
    return max(SMALL_JOB_MEM_MB, math.ceil(MEMORY_MARGIN * peak / 100) * 100)


def _job_cells(experiment, wildcards):
    """The cells a cell job (a {cell} wildcard) or a setting job runs."""
    if "cell" in wildcards.keys():
        return [EXPERIMENTS[experiment].cell(wildcards.cell)]
    return _setting_cells(experiment, wildcards)


def job_mem_mb(experiment, wildcards):
    """Memory request of a cell or setting job, in MiB (Slurm's --mem unit)."""
    peak = job_resources.peak_mb(EXPERIMENTS[experiment], _job_cells(experiment, wildcards))
    return math.ceil(MEMORY_MARGIN * peak / 100) * 100


def job_runtime(experiment, wildcards):
    """Wall-time request of a cell or setting job, in minutes."""
    seconds = job_resources.seconds(EXPERIMENTS[experiment], _job_cells(experiment, wildcards))
    return max(MIN_RUNTIME, math.ceil(RUNTIME_MARGIN * seconds / 60))


def figure_summaries(figure):
    panels = config["figures"][figure]["panels"]
    return sorted({f"results/{panel['experiment']}/summary.csv" for panel in panels})


def figure_metrics(figure):
    panels = config["figures"][figure]["panels"]
    return {
        panel["experiment"]: EXPERIMENTS[panel["experiment"]].metric
        for panel in panels
        if panel["experiment"] in EXPERIMENTS
    }


def experiment_targets(experiments):
    """The summaries, fidelity tables and figures of ``experiments`` (figures whose panels are
    all among them)."""
    targets = [f"results/{experiment}/summary.csv" for experiment in experiments]
    targets += [
        f"results/fidelity/{experiment}.csv" for experiment in config.get("fidelity", {}) if experiment in experiments
    ]
    for figure, spec in config.get("figures", {}).items():
        if {panel["experiment"] for panel in spec["panels"]} <= set(experiments):
            targets += [f"figures/{figure}.pdf", f"figures/{figure}.png"]
    return targets


def worst_case_panels():
    """The analytic figure's panels: the collection, bound and eps grid of each user-level
    experiment, drawn for d = 1 and 2 (the paper's equations (7), (8)) or at its own d >= 2."""
    panels = []
    for experiment, spec in EXPERIMENTS.items():
        if spec.source != "userlevel":
            continue
        data = {**source_defaults(spec.source), **dict(spec.data)}
        collection = {key: data[key] for key in ("M", "L", "m_star", "exponent", "max_count")}
        d = int(data["d"])
        panels.append(
            {
                "title": experiment,
                "collection": {"collection": data["collection"], **collection},
                "bound": data["bound"],
                "eps": list(dict(spec.grid)[spec.budget]),
                "dimensions": [1, 2] if d == 1 else [d],
            }
        )
    return panels


def static_targets():
    """Everything that needs no real dataset (known before any fetch)."""
    targets = experiment_targets([e for e in EXPERIMENTS if EXPERIMENTS[e].dataset is None])
    targets += TABLE2_OUTPUTS
    if worst_case_panels():
        targets += ["figures/userlevel_worst_case.pdf", "figures/userlevel_worst_case.png"]
    if AUDIT_NAMES:
        targets += ["results/audit/audit.csv", "figures/audit.pdf", "figures/audit.png"]
    targets += ILLUSTRATION_TARGETS  # workflow/rules/illustrations.smk
    return targets + ["results/report.html"]


def dataset_targets(dataset):
    """What needs ``dataset``, if the fetch checkpoint found it, else nothing (the report and
    the end of the run name it): summaries, fidelity tables and figures whose real datasets
    were all found, and Figure 2."""
    if not dataset_available(dataset):
        return []
    experiments = [e for e in EXPERIMENTS if reproducible(e)]
    static = set(static_targets())  # once, not once per target
    targets = [t for t in experiment_targets(experiments) if t not in static]
    if figure_reproducible("figure2"):
        targets += ["figures/figure2.pdf", "figures/figure2.png"]
    return targets


def reproducible_figures():
    figures = list(config.get("figures", {})) + (["figure2"] if DATASETS else [])
    return [figure for figure in figures if figure_reproducible(figure)]


# Real datasets (workflow/rules/datasets.smk): what a run could obtain decides its targets.
# The datasets whose status this run read. Snakemake's checkpoint .get() returns only for a
# fetch job in this run's DAG, so these are the datasets this run's targets need: the end of
# the run reports on them alone, never on a status left by a run of other targets or configs.
DATASETS_READ = set()


def dataset_status(dataset):
    """The checkpoint's finding (raises Snakemake's IncompleteCheckpointException before it ran)."""
    path = checkpoints.fetch_dataset.get(dataset=dataset).output[0]
    status = read_status(path)
    stale = stale_status(status, DATASET_SETTINGS[dataset], path)
    if stale:
        raise WorkflowError(stale)
    DATASETS_READ.add(dataset)
    return status


def dataset_available(dataset):
    return dataset_status(dataset)["available"]


def raw_dataset_file(wildcards):
    """The raw file the fetch found. Without one (a target that needs the dataset was asked for
    by name) nothing: the parse job then fails with the status's message, so that the run's
    hooks still run (an error raised here would skip them and leave the failed status behind)."""
    status = dataset_status(wildcards.dataset)
    return status["raw"] if status["available"] else []


def dataset_inputs(experiment):
    """The processed dataset a real-data experiment's jobs read: a re-parsed dataset reruns them."""
    dataset = EXPERIMENTS[experiment].dataset
    return [f"datasets/processed/{dataset}.npz"] if dataset else []


def reproducible(experiment):
    """False for an experiment on a dataset this run could not obtain."""
    dataset = EXPERIMENTS[experiment].dataset
    return dataset is None or dataset_available(dataset)


def figure_reproducible(figure):
    if figure == "figure2":
        return all(dataset_available(dataset) for dataset in DATASETS)
    return all(reproducible(panel["experiment"]) for panel in config["figures"][figure]["panels"])


def dataset_status_files():
    return [f"datasets/raw/{dataset}.status.json" for dataset in DATASETS]


def finish_datasets(*, failed=False):
    """End of a run: names the datasets this run needed but could not obtain (as the report
    does), removes their status files so that the next run tries again, and makes the exit
    status non-zero. Datasets this run did not read (DATASETS_READ) are none of its business."""
    statuses = []
    for dataset, path in zip(DATASETS, dataset_status_files()):
        if dataset in DATASETS_READ and os.path.exists(path):
            status = read_status(path)
            if not status["available"]:
                statuses.append(status)
                os.remove(path)
    if statuses:
        print(missing_summary(not_reproduced(statuses, DATASET_EXPERIMENTS, DATASET_FIGURES)), file=sys.stderr)
        if not failed:
            raise SystemExit(1)


def report_inputs(wildcards):
    """What the report shows: everything but what needs a dataset this run could not obtain."""
    experiments = [experiment for experiment in EXPERIMENTS if reproducible(experiment)]
    figures = [figure for figure in reproducible_figures() if figure in config.get("figures", {})]
    inputs = {
        "summaries": [f"results/{experiment}/summary.csv" for experiment in experiments],
        "fidelity": [f"results/fidelity/{e}.csv" for e in config.get("fidelity", {}) if e in experiments],
        # read for the published runs' n, beside the fidelity tables
        "references": [config["fidelity"][e]["reference"] for e in config.get("fidelity", {}) if e in experiments],
        "figures": [f"figures/{figure}.png" for figure in figures]
        + (["figures/userlevel_worst_case.png"] if worst_case_panels() else [])
        # the illustrations (workflow/rules/illustrations.smk)
        + [f"figures/{name}.png" for name in ILLUSTRATIONS],
        "dataset_figures": ["figures/figure2.png"] if "figure2" in reproducible_figures() else [],
        "benchmarks": [path for experiment in experiments for path in cell_benchmarks(experiment)],
        "audit": ["results/audit/audit.csv", "figures/audit.png"] if AUDIT_NAMES else [],
    }
    # the page links every figure's full-size PNG and its PDF (written by the same job)
    pngs = inputs["figures"] + inputs["dataset_figures"] + inputs["audit"][1:]
    return {**inputs, "figure_pdfs": [path.removesuffix(".png") + ".pdf" for path in pngs]}


def scorecard_inputs(wildcards):
    """What the scorecard reads (rule scorecard, workflow/rules/report.smk)."""
    inputs = report_inputs(wildcards)
    return {
        "summaries": inputs["summaries"],
        "figures": inputs["figures"] + inputs["dataset_figures"],
        "published": SCORECARD["published"],
        "quoted": SCORECARD["quoted"],
        "statuses": dataset_status_files(),
        "illustrations": [f"results/illustrations/{name}.csv" for name in ILLUSTRATIONS],
        # Table 2 under the authors' protocol beside the paper's (experiments/tables.py)
        "table2": TABLE2_OUTPUTS,
    }
