# Config validation and the helpers the other rule files use.
import math
import re

from snakemake.utils import validate

from experiments.config import ConfigError, load_experiments
from experiments.validation import one_line_config_error


try:
    validate(config, "../schemas/config.schema.yaml")
    EXPERIMENTS = load_experiments(config)
except Exception as error:
    raise ConfigError(one_line_config_error(error)) from None


wildcard_constraints:
    experiment="[A-Za-z0-9_]+",
    cell="[^/]+",
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
    return [f"results/{experiment}/benchmarks/{cell.id}.tsv" for cell in EXPERIMENTS[experiment].cells()]


def figure_summaries(figure):
    panels = config["figures"][figure]["panels"]
    return sorted({f"results/{panel['experiment']}/summary.csv" for panel in panels})


def all_targets():
    targets = [f"results/{experiment}/summary.csv" for experiment in EXPERIMENTS]
    targets += [f"results/fidelity/{experiment}.csv" for experiment in config.get("fidelity", {})]
    if "variance_study" in EXPERIMENTS:
        targets.append("results/variance_study/table2.csv")
    for figure in config.get("figures", {}):
        targets += [f"figures/{figure}.pdf", f"figures/{figure}.png"]
    targets.append("results/report.html")
    return targets
