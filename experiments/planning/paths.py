"""Every path the workflow writes or reads, in one place: the rule files (workflow/rules/*.smk),
the workflow plan and the jobs read these templates, so a path is spelled once. A template's
``{fields}`` are Snakemake wildcards in a rule; :func:`fill` fills some of them and leaves the
others as wildcards. Jobs never parse a path back into parameters: the rules hand them the cell
ids and trial ranges as params (docs/configuration.md#trial-shards).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# --- an experiment's trials: one file per cell ({suffix}: .csv, or .csv.gz for batched experiments)
CELL = "results/{experiment}/cells/{cell}{suffix}"
CELL_LOG = "logs/{experiment}/cells/{cell}.log"
# a cell or setting job's benchmark ({job}: a cell id, a setting id, or "all")
JOB_BENCHMARK = "results/{experiment}/benchmarks/{job}.tsv"
SETTING_LOG = "logs/{experiment}/settings/{job}.log"
# trial shards (experiments/planning/shards.py): trials {first}..{last} of a cell, and where the
# merge records the layout it merged
SHARD = "results/{experiment}/shards/{cell}/trials={first}-{last}{suffix}"
SHARD_LOG = "logs/{experiment}/shards/{job}/trials={first}-{last}.log"
SHARD_BENCHMARK = "results/{experiment}/benchmarks/shards/{job}/trials={first}-{last}.tsv"
SHARD_LAYOUT = "results/{experiment}/shards/{job}.layout.json"

# --- an experiment's summary and what is drawn from it
SUMMARY = "results/{experiment}/summary.csv"
SUMMARY_LOG = "logs/{experiment}/summary.log"
FIDELITY = "results/fidelity/{experiment}.csv"
FIDELITY_LOG = "logs/fidelity/{experiment}.log"
LIBRARY_TABLE = "results/libraries/{experiment}.csv"
LIBRARY_LOG = "logs/libraries/{experiment}.log"
TABLE2 = "results/variance_study/table2.csv"
TABLE2_LOG = "logs/variance_study/table2.log"
TABLE2_ERRATUM = "results/variance_study/table2_erratum.csv"
TABLE2_ERRATUM_LOG = "logs/variance_study/table2_erratum.log"

# --- figures: one job writes both files
FIGURE_PDF = "figures/{figure}.pdf"
FIGURE_PNG = "figures/{figure}.png"
FIGURE_LOG = "logs/figures/{figure}.log"
ILLUSTRATION_DATA = "results/illustrations/{figure}.csv"
ILLUSTRATION_LOG = "logs/illustrations/{figure}.log"

# --- the privacy audit and its power curves
AUDIT = "results/audit/{audit}.csv"
AUDIT_LOG = "logs/audit/{audit}.log"
AUDIT_BENCHMARK = "results/audit/benchmarks/{audit}.tsv"
AUDIT_TABLE = "results/audit/audit.csv"
AUDIT_TABLE_LOG = "logs/audit/table.log"
POWER = "results/audit/power/{mechanism}.csv"
POWER_LOG = "logs/audit/power_{mechanism}.log"
POWER_BENCHMARK = "results/audit/benchmarks/power_{mechanism}.tsv"
POWER_TABLE = "results/audit/power_curves.csv"
POWER_TABLE_LOG = "logs/audit/power_table.log"

# --- the real datasets
DATASET_STATUS = "datasets/raw/{dataset}.status.json"
# what the run's fetch found, kept with the results (the report and scorecard read it; a rebuild from
# the committed results too, docs/workflow.md#rebuilding-from-the-committed-results)
DATASET_RECORD = "results/datasets/{dataset}.status.json"
DATASET_RECORD_LOG = "logs/datasets/record_{dataset}.log"
DATASET_FETCH_LOG = "logs/datasets/fetch_{dataset}.log"
PROCESSED_DATASET = "datasets/processed/{dataset}.npz"
PROCESSED_DATASET_STATS = "datasets/processed/{dataset}.json"
DATASET_PARSE_LOG = "logs/datasets/parse_{dataset}.log"

# --- errata, scorecard, report
ERRATA_ACCOUNTING = "results/errata/accounting.csv"
ERRATA_NOSCALE = "results/errata/noscale.csv"
ERRATA_LOG = "logs/errata.log"
SCORECARD = "results/scorecard.csv"
SCORECARD_VALUES = "results/scorecard_values.csv"
CLAIMS = "results/claims.csv"
SCORECARD_LOG = "logs/scorecard.log"
REPORT = "results/report.html"
# the run's measured run times per experiment (from the jobs' benchmark files), which the report shows
RUN_TIMES = "results/run_times.csv"
RUN_TIMES_LOG = "logs/run_times.log"
REPORT_LOG = "logs/report.log"


class _KeepWildcards(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(template: str, **fields) -> str:
    """``template`` with ``fields`` filled in; every other field stays a Snakemake wildcard
    (``fill(CELL, suffix=".csv")`` is ``results/{experiment}/cells/{cell}.csv``)."""
    return template.format_map(_KeepWildcards(fields))


def figure_files(figure: str) -> list[str]:
    """A figure's PDF and PNG (one job writes both)."""
    return [fill(FIGURE_PDF, figure=figure), fill(FIGURE_PNG, figure=figure)]


def constraint(names: Iterable[str]) -> str:
    """A wildcard constraint matching exactly ``names`` (none: nothing)."""
    return "|".join(map(re.escape, names)) or "(?!)"
