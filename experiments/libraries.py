"""PLAN beside the DP libraries practitioners use (docs/design.md §6.1): the comparison table, the
seconds per call, and the answer in plain sentences that the report shows.

The config's ``libraries:`` section names the experiments of the family and, for each, the
mechanism every other is measured against (PLAN under exact accounting on Gaussian data, PLAN
for binary data on binary data), and the error measure (``error``, or ``error_vs_empirical`` on
a real dataset whose truth is its own frequencies). Every mechanism of such an experiment gets a
role from its algorithm and options:

- ``reference``: the mechanism named by the section;
- ``library`` / ``library, two-pass``: an adapter of :mod:`mechanisms.libraries` with the universe
  as its bounds, or with the two-pass recipe the library documents for unknown bounds;
- ``ours``: another private mechanism of the project (IOME, CoinPress, ...);
- ``over budget``: a mechanism whose ledger says it spends more than the cell's rho (PLAN under
  the published code's accounting, about 3.76 rho): shown, labelled, never ranked with the rest;
- ``non-private``: the empirical mean.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .config import ConfigError, ExperimentSpec
from .styles import format_rho

LIBRARY_ALGORITHMS = {"opendp_mean": "OpenDP", "diffprivlib_mean": "diffprivlib", "pydp_mean": "python-dp"}
TWO_PASS_OPTION = ("bounds_from", "quantiles")  # the adapters' option selecting the two-pass recipe
ROLES = ("reference", "library", "library, two-pass", "ours", "over budget", "non-private")
MEASURES = ("error", "error_vs_empirical")
OVER_BUDGET_FACTOR = 1.0 + 1e-9  # a ledger above rho by more than rounding spends more than the cell's budget
COLUMNS = ["experiment", "rho", "mechanism", "role", "trials", "mean_error", "se", "median_error",
           "ratio_to_reference", "true_rho_ratio", "seconds_per_call"]


def check_libraries(config: Mapping, experiments: Mapping[str, ExperimentSpec]) -> dict[str, dict]:
    """The ``libraries:`` section, checked: experiment -> {reference, measure}. Each experiment
    must be configured, spend rho, and run its reference; one ConfigError names the key."""
    section = config.get("libraries") or {}
    checked = {}
    for name, entry in section.items():
        where = f"libraries.{name}"
        if name not in experiments:
            raise ConfigError(f"{where}: no experiment {name!r} under experiments:")
        spec = experiments[name]
        entry = dict(entry or {})
        unknown = sorted(set(entry) - {"reference", "measure"})
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}: unknown key (accepted: measure, reference)")
        if spec.budget != "rho":
            raise ConfigError(f"{where}: the comparison is at matched rho-zCDP; {name!r} spends {spec.budget}")
        reference = entry.get("reference")
        names = [m.name for m in spec.mechanisms]
        if reference not in names:
            raise ConfigError(f"{where}.reference: {reference!r} is not a mechanism of {name!r} ({', '.join(names)})")
        measure = entry.get("measure", "error")
        if measure not in MEASURES:
            raise ConfigError(f"{where}.measure: {measure!r} is not one of {', '.join(MEASURES)}")
        checked[name] = {"reference": reference, "measure": measure}
    return checked


def mechanism_role(spec: ExperimentSpec, mechanism: str, reference: str) -> str:
    """The role of one mechanism of a library experiment (module docstring); over budget is
    decided from the trials (:func:`comparison_table`), not from the config."""
    if mechanism == reference:
        return "reference"
    entry = next(m for m in spec.mechanisms if m.name == mechanism)
    if entry.algorithm == "empirical_mean":
        return "non-private"
    if entry.algorithm in LIBRARY_ALGORITHMS:
        option, value = TWO_PASS_OPTION
        return "library, two-pass" if entry.options_dict().get(option) == value else "library"
    return "ours"


def comparison_table(trials: pd.DataFrame, spec: ExperimentSpec, *, reference: str,
                     measure: str = "error") -> pd.DataFrame:
    """One row per rho and mechanism of one experiment's trial rows (its cell files): the mean
    error with its standard error, the median, the mean error as a multiple of the reference's
    at the same rho, the rho the ledger says was spent as a multiple of the cell's
    (``true_rho_ratio``; infinite for the empirical mean), and the median seconds per call."""
    if trials.empty:
        raise ValueError(f"{spec.id}: no trial rows")
    rows = []
    for (rho, mechanism), group in trials.groupby(["rho", "mechanism"], sort=False):
        values = group[measure].astype(float)
        role = mechanism_role(spec, mechanism, reference)
        true_rho = float(np.median(group["true_rho"].astype(float))) / float(rho)
        if role not in ("non-private", "reference") and true_rho > OVER_BUDGET_FACTOR:
            role = "over budget"
        rows.append({
            "experiment": spec.id, "rho": float(rho), "mechanism": mechanism, "role": role,
            "trials": int(values.count()), "mean_error": values.mean(),
            "se": values.std(ddof=1) / math.sqrt(values.count()) if values.count() > 1 else math.nan,
            "median_error": values.median(), "true_rho_ratio": true_rho,
            "seconds_per_call": float(group["runtime_s"].astype(float).median()),
        })
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "ratio_to_reference"])
    if reference not in set(table["mechanism"]):
        raise ValueError(f"{spec.id}: the reference {reference!r} has no trials")
    if (table.loc[table["mechanism"] == reference, "true_rho_ratio"] > OVER_BUDGET_FACTOR).any():
        raise ValueError(f"{spec.id}: the reference {reference!r} spends more than the cell's rho")
    base = table[table["mechanism"] == reference].set_index("rho")["mean_error"]
    table["ratio_to_reference"] = table["mean_error"] / table["rho"].map(base)
    return table[COLUMNS].sort_values(["rho"], kind="stable").reset_index(drop=True)


def seconds_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median seconds per call: one row per mechanism (in order of appearance), one column per
    experiment (the median over its rho values of each cell's median)."""
    pivot = comparison.pivot_table(index="mechanism", columns="experiment", values="seconds_per_call",
                                   aggfunc="median", sort=False)
    pivot = pivot.reindex(index=list(dict.fromkeys(comparison["mechanism"])),
                          columns=list(dict.fromkeys(comparison["experiment"])))
    return pivot.reset_index().rename_axis(columns=None)


def _times(ratio: float) -> str:
    return f"{ratio:.2g}\u00d7" if ratio < 10 else f"{ratio:.0f}\u00d7"


def _range(values: Sequence[float]) -> str:
    low, high = _times(min(values)), _times(max(values))
    return low if low == high else f"{low} to {high}"


def experiment_findings(table: pd.DataFrame, *, reference: str, labels: Mapping[str, str] | None = None) -> list[str]:
    """Plain sentences on one experiment's comparison table: the reference's error over the rho
    grid, the best library estimator of each kind and how far it is from the reference, the
    other mechanisms, and who is over budget."""
    labels = labels or {}

    def name(mechanism):
        return labels.get(mechanism, mechanism)

    rhos = sorted(table["rho"].unique())
    ref = table[table["mechanism"] == reference].set_index("rho")["mean_error"]
    sentences = [f"{name(reference)}: mean error {ref[rhos[0]]:.3g} at \u03c1 = {format_rho(rhos[0])}"
                 f" and {ref[rhos[-1]]:.3g} at \u03c1 = {format_rho(rhos[-1])}."]
    for role, words in (("library", "with the universe as its bounds"),
                        ("library, two-pass", "with its two-pass recipe for unknown bounds")):
        rows = table[table["role"] == role]
        if rows.empty:
            continue
        # the geometric mean of its ratios over the rho grid ranks the libraries of this kind
        spread = rows.groupby("mechanism", sort=False)["ratio_to_reference"]
        best = spread.apply(lambda ratios: float(np.exp(np.log(ratios).mean()))).idxmin()
        ratios = rows[rows["mechanism"] == best]["ratio_to_reference"].tolist()
        beaten = rows[rows["ratio_to_reference"] < 1.0]
        where = ", ".join(f"{name(m)} at \u03c1 = {format_rho(r)}" for m, r in zip(beaten["mechanism"], beaten["rho"]))
        tail = "" if beaten.empty else (
            f"; of the libraries of this kind, more accurate than {name(reference)} in {len(beaten)} of "
            f"{len(rows)} (library, \u03c1) cells: {where}")
        sentences.append(f"The most accurate library {words} is {name(best)}: {_range(ratios)} "
                         f"{name(reference)}'s error over the \u03c1 grid{tail}.")
    for mechanism, rows in table[table["role"] == "ours"].groupby("mechanism", sort=False):
        sentences.append(f"{name(mechanism)}: {_range(rows['ratio_to_reference'].tolist())} {name(reference)}'s error.")
    for mechanism, rows in table[table["role"] == "over budget"].groupby("mechanism", sort=False):
        sentences.append(f"{name(mechanism)} spends {rows['true_rho_ratio'].median():.3g} \u03c1, not \u03c1: "
                         f"{_range(rows['ratio_to_reference'].tolist())} {name(reference)}'s error, "
                         "not a comparison at the same privacy.")
    return sentences


def overall_finding(tables: Sequence[pd.DataFrame], *, references: Mapping[str, str]) -> str:
    """One sentence over every experiment: in how many (experiment, rho) cells the reference is
    more accurate than every library estimator."""
    wins, cells = 0, 0
    for table in tables:
        libraries = table[table["role"].isin(("library", "library, two-pass"))]
        for _, rows in libraries.groupby(["experiment", "rho"], sort=False):
            cells += 1
            wins += bool((rows["ratio_to_reference"] > 1.0).all())
    if not cells:
        return "No library estimator ran."
    names = " / ".join(dict.fromkeys(references.values()))
    return (f"{names} is more accurate than every library estimator in {wins} of {cells} "
            "(experiment, \u03c1) cells, at the same \u03c1-zCDP under replace-one neighbours.")
