# Config validation and the helpers the other rule files use.
import math
import re

from snakemake.utils import validate

from experiments.config import ConfigError, format_value, load_experiments
from experiments.validation import one_line_config_error


try:
    validate(config, "../schemas/config.schema.yaml")
    EXPERIMENTS = load_experiments(config)
except Exception as error:
    raise ConfigError(one_line_config_error(error)) from None


# Experiments whose rho values run in one job per setting (share_rho), and the others.
SHARED_EXPERIMENTS = [experiment for experiment, spec in EXPERIMENTS.items() if spec.share_rho]
UNSHARED_EXPERIMENTS = "|".join(re.escape(e) for e in EXPERIMENTS if e not in SHARED_EXPERIMENTS) or "(?!)"


wildcard_constraints:
    experiment="[A-Za-z0-9_]+",
    cell="[^/]+",
    setting="[^/]+",
    # only configured paper figures: other outputs in figures/ (the errata) have rules of their own
    figure="|".join(map(re.escape, config.get("figures", {}))) or "(?!)",


def cell_files(experiment):
    return [f"results/{experiment}/cells/{cell.id}.csv" for cell in EXPERIMENTS[experiment].cells()]


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
    """The cell files of one setting job: a {setting} wildcard and every rho of the grid (a
    grid of rho alone has a single setting and no wildcard)."""
    spec = EXPERIMENTS[experiment]
    prefix = "{setting}_" if spec.setting_names else ""
    rhos = dict(spec.grid)["rho"]
    return [f"results/{experiment}/cells/{prefix}rho={format_value(rho)}.csv" for rho in rhos]


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


def figure_summaries(figure):
    panels = config["figures"][figure]["panels"]
    return sorted({f"results/{panel['experiment']}/summary.csv" for panel in panels})


def figure_metrics(figure):
    panels = config["figures"][figure]["panels"]
    return {panel["experiment"]: EXPERIMENTS[panel["experiment"]].metric for panel in panels if panel["experiment"] in EXPERIMENTS}


def all_targets():
    targets = [f"results/{experiment}/summary.csv" for experiment in EXPERIMENTS]
    targets += [f"results/fidelity/{experiment}.csv" for experiment in config.get("fidelity", {})]
    if "variance_study" in EXPERIMENTS:
        targets.append("results/variance_study/table2.csv")
    for figure in config.get("figures", {}):
        targets += [f"figures/{figure}.pdf", f"figures/{figure}.png"]
    targets.append("results/report.html")
    return targets
