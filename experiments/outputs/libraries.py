"""PLAN beside the DP libraries practitioners use (docs/design.md §6.1): the comparison table, the
seconds per call, and the answer in plain sentences that the report shows.

The config's ``libraries:`` section names the experiments of the family and, for each, the
mechanism every other is measured against (PLAN under exact accounting on Gaussian data, PLAN
for binary data on binary data), the error measure (``error``, or ``error_vs_empirical`` on a
real dataset whose truth is its own frequencies), and the mechanisms kept only to show what an
earlier choice gave (``superseded``: mechanism -> why). Every mechanism of such an experiment
gets a role from its algorithm and options:

- ``reference``: the mechanism named by the section;
- ``library``: an adapter of :mod:`mechanisms.libraries` with the universe as its bounds;
- ``library, its automatic bounds``: the recipe a library documents for unknown bounds
  (python-dp's BoundedMean without bounds);
- ``library, our two-pass``: our recipe for unknown bounds from a library's functions (its
  private quantiles, then its bounded mean), which no library documents;
- ``ours``: another private mechanism of the project (IOME, CoinPress, ...);
- ``superseded``: named by the section: shown with its reason, never ranked or counted;
- ``over budget``: a mechanism whose ledger says it spends more than the cell's rho (PLAN under
  the published code's accounting, about 3.76 rho): shown, labelled, never ranked with the rest;
- ``non-private``: the empirical mean.

Each mechanism is compared with the reference on the same data, trial by trial: the mean of the
per-trial differences of their errors with its standard error, and z their ratio. |z| < 2 is a
tie (:func:`tie_threshold`: more with few trials); otherwise the reference is more or less
accurate (``VERDICTS``). A run of another seed (or
of an unseeded library: OpenDP and python-dp draw from OpenSSL) may give another verdict: the
table gives that chance (:func:`verdict_change_chance`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm
from scipy.stats import t as student_t

from ..engine.config import ConfigError, ExperimentSpec
from .styles import format_rho

LIBRARY_ALGORITHMS = {"opendp_mean": "OpenDP", "diffprivlib_mean": "diffprivlib", "pydp_mean": "python-dp"}
LIBRARY_RECIPES = {"given": "library", "automatic": "library, its automatic bounds",
                   "quantiles": "library, our two-pass"}  # the adapters' bounds_from -> role
LIBRARY_ROLES = tuple(LIBRARY_RECIPES.values())
ROLES = ("reference", *LIBRARY_ROLES, "ours", "superseded", "over budget", "non-private")
MEASURES = ("error", "error_vs_empirical")
OVER_BUDGET_FACTOR = 1.0 + 1e-9  # a ledger above rho by more than rounding spends more than the cell's budget
TIE_Z = 2.0  # |paired z| below this is a tie, with many trials (tie_threshold)
VERDICTS = ("reference more accurate", "tie", "reference less accurate", "refused")
COLUMNS = ["experiment", "rho", "mechanism", "role", "trials", "refused", "mean_error", "se", "median_error",
           "ratio_to_reference", "mean_difference", "difference_se", "z", "tie_below", "verdict",
           "verdict_change_chance", "true_rho_ratio", "seconds_per_call", "note"]


def check_libraries(config: Mapping, experiments: Mapping[str, ExperimentSpec]) -> dict[str, dict]:
    """The ``libraries:`` section, checked: experiment -> {reference, measure, superseded}. Each
    experiment must be configured, spend rho, and run its reference; one ConfigError names the key."""
    section = config.get("libraries") or {}
    checked = {}
    for name, entry in section.items():
        where = f"libraries.{name}"
        if name not in experiments:
            raise ConfigError(f"{where}: no experiment {name!r} under experiments:")
        spec = experiments[name]
        entry = dict(entry or {})
        unknown = sorted(set(entry) - {"reference", "measure", "superseded"})
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}: unknown key (accepted: measure, reference, superseded)")
        if spec.budget != "rho":
            raise ConfigError(f"{where}: the comparison is at matched rho-zCDP; {name!r} spends {spec.budget}")
        reference = entry.get("reference")
        names = [m.name for m in spec.mechanisms]
        if reference not in names:
            raise ConfigError(f"{where}.reference: {reference!r} is not a mechanism of {name!r} ({', '.join(names)})")
        measure = entry.get("measure", "error")
        if measure not in MEASURES:
            raise ConfigError(f"{where}.measure: {measure!r} is not one of {', '.join(MEASURES)}")
        superseded = entry.get("superseded") or {}
        if not isinstance(superseded, Mapping):
            raise ConfigError(f"{where}.superseded: a mapping mechanism -> why it is kept, got {superseded!r}")
        variants = config.get("variants") or {}
        for mechanism, why in superseded.items():
            # a configured variant the experiment does not run (a smaller config's list) has no rows to note
            if mechanism == reference or (mechanism not in names and mechanism not in variants):
                raise ConfigError(f"{where}.superseded.{mechanism}: not a variant or a mechanism of {name!r} other "
                                  "than its reference")
            if not isinstance(why, str) or not why.strip():
                raise ConfigError(f"{where}.superseded.{mechanism}: say in words why it is kept, got {why!r}")
        checked[name] = {"reference": reference, "measure": measure, "superseded": dict(superseded)}
    return checked


def mechanism_role(spec: ExperimentSpec, mechanism: str, reference: str,
                   superseded: Mapping[str, str] | None = None) -> str:
    """The role of one mechanism of a library experiment (module docstring); over budget is
    decided from the trials (:func:`comparison_table`), not from the config."""
    if mechanism == reference:
        return "reference"
    if mechanism in (superseded or {}):
        return "superseded"
    entry = next(m for m in spec.mechanisms if m.name == mechanism)
    if entry.algorithm == "empirical_mean":
        return "non-private"
    if entry.algorithm in LIBRARY_ALGORITHMS:
        return LIBRARY_RECIPES[entry.options_dict().get("bounds_from", "given")]
    return "ours"


def tie_threshold(pairs: int) -> float:
    """The |z| below which a paired comparison over ``pairs`` trials is a tie: Student's t with
    pairs - 1 degrees of freedom at the two-sided level of |z| = TIE_Z under the normal (4.55 %),
    since the standard error of a few trials is itself uncertain: 2.05 at 50 trials, 4.5 at 3."""
    return float(student_t.ppf(norm.cdf(TIE_Z), pairs - 1))


def paired_verdict(z: float, pairs: int) -> str:
    """The verdict of a paired z (mechanism's error minus the reference's, over its standard
    error) over ``pairs`` trials."""
    if math.isnan(z):
        return "tie"  # identical errors in every trial
    if abs(z) < tie_threshold(pairs):
        return "tie"
    return "reference more accurate" if z > 0 else "reference less accurate"


def verdict_change_chance(z: float, pairs: int) -> float:
    """The chance that an independent rerun with as many trials gives another verdict, taking the
    measured difference as the truth: the rerun's z is normal around z with variance 2 (the noise
    of both runs, the rerun's data redrawn too; an upper bound for a rerun of an unseeded library
    on the same data)."""
    if math.isnan(z):
        return 0.0
    spread, threshold = math.sqrt(2.0), tie_threshold(pairs)
    below, above = norm.cdf((-threshold - z) / spread), norm.sf((threshold - z) / spread)
    verdict = paired_verdict(z, pairs)
    if verdict == "tie":
        return float(below + above)
    return float(1.0 - above) if verdict == "reference more accurate" else float(1.0 - below)


def comparison_table(trials: pd.DataFrame, spec: ExperimentSpec, *, reference: str, measure: str = "error",
                     superseded: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per rho and mechanism of one experiment's trial rows (its cell files): the trials
    that released an estimate and those refused, the mean error with its standard error, the
    median, the mean error as a multiple of the reference's at the same rho, the paired
    comparison with the reference (module docstring), the rho the ledger says was spent as a
    multiple of the cell's (``true_rho_ratio``; infinite for the empirical mean), the median
    seconds per call, and a note (why a mechanism is superseded, what a refusal said)."""
    if trials.empty:
        raise ValueError(f"{spec.id}: no trial rows")
    refused = trials["refused"].notna() if "refused" in trials.columns else pd.Series(False, index=trials.index)
    released = trials[~refused]
    base = released[released["mechanism"] == reference]
    if base.empty:
        raise ValueError(f"{spec.id}: the reference {reference!r} has no trials")
    rows = []
    for (rho, mechanism), group in trials.groupby(["rho", "mechanism"], sort=False):
        declined = group[refused.loc[group.index]]
        group = group[~refused.loc[group.index]]
        values = group[measure].astype(float)
        role = mechanism_role(spec, mechanism, reference, superseded)
        true_rho = float(np.median(group["true_rho"].astype(float))) / float(rho) if len(group) else math.nan
        if role not in ("non-private", "reference", "superseded") and true_rho > OVER_BUDGET_FACTOR:
            role = "over budget"
        note = (superseded or {}).get(mechanism, "")
        if len(declined):
            note = f"refused in {len(declined)} of {len(declined) + len(group)} trials: {declined['refused'].iloc[0]}"
        row = {"experiment": spec.id, "rho": float(rho), "mechanism": mechanism, "role": role,
               "trials": int(values.count()), "refused": len(declined), "mean_error": values.mean(),
               "se": values.std(ddof=1) / math.sqrt(values.count()) if values.count() > 1 else math.nan,
               "median_error": values.median(), "true_rho_ratio": true_rho,
               "seconds_per_call": float(trials.loc[declined.index.union(group.index), "runtime_s"].median()),
               "note": note}
        row |= _paired(group, base[base["rho"] == rho], measure, compared=role not in ("reference", "non-private"))
        if len(declined) and not len(group):
            row["verdict"] = "refused"
        rows.append(row)
    table = pd.DataFrame(rows)
    if (table.loc[table["mechanism"] == reference, "true_rho_ratio"] > OVER_BUDGET_FACTOR).any():
        raise ValueError(f"{spec.id}: the reference {reference!r} spends more than the cell's rho")
    means = table[table["mechanism"] == reference].set_index("rho")["mean_error"]
    table["ratio_to_reference"] = table["mean_error"] / table["rho"].map(means)
    return table[COLUMNS].sort_values(["rho"], kind="stable").reset_index(drop=True)


def _paired(group: pd.DataFrame, base: pd.DataFrame, measure: str, *, compared: bool) -> dict:
    """The paired comparison of one mechanism's trials with the reference's at the same rho:
    the trials both released, matched by trial."""
    empty = {"mean_difference": math.nan, "difference_se": math.nan, "z": math.nan, "tie_below": math.nan,
             "verdict": "", "verdict_change_chance": math.nan}
    if not compared or group.empty:
        return empty
    matched = group.set_index("trial")[measure].astype(float).to_frame("mechanism").join(
        base.set_index("trial")[measure].astype(float).rename("reference"), how="inner")
    differences = (matched["mechanism"] - matched["reference"]).to_numpy()
    if differences.size < 2:
        return empty
    mean, se = float(differences.mean()), float(differences.std(ddof=1) / math.sqrt(differences.size))
    z = mean / se if se > 0 else (math.copysign(math.inf, mean) if mean else math.nan)
    pairs = differences.size
    return {"mean_difference": mean, "difference_se": se, "z": z, "tie_below": tie_threshold(pairs),
            "verdict": paired_verdict(z, pairs), "verdict_change_chance": verdict_change_chance(z, pairs)}


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
    values = [value for value in values if math.isfinite(value)]  # a refused cell has no ratio
    if not values:
        return "no estimate beside"
    low, high = _times(min(values)), _times(max(values))
    return low if low == high else f"{low} to {high}"


def _counts(rows: pd.DataFrame, reference: str) -> str:
    """'<reference> more accurate in W, tied in T, less accurate in L of N cells[, refused in R]'."""
    verdicts = rows["verdict"].value_counts()
    text = (f"{reference} more accurate in {verdicts.get(VERDICTS[0], 0)}, tied in {verdicts.get(VERDICTS[1], 0)}, "
            f"less accurate in {verdicts.get(VERDICTS[2], 0)} of {len(rows)}")
    return text + (f", the library refused in {verdicts[VERDICTS[3]]}" if verdicts.get(VERDICTS[3], 0) else "")


def experiment_findings(table: pd.DataFrame, *, reference: str, labels: Mapping[str, str] | None = None) -> list[str]:
    """Plain sentences on one experiment's comparison table: the reference's error over the rho
    grid, the best library estimator of each kind with the paired verdicts of its kind, the other
    mechanisms, the superseded ones with why, and who is over budget."""
    labels = labels or {}

    def name(mechanism):
        return labels.get(mechanism, mechanism)

    def cells(rows):
        return ", ".join(f"{name(m)} at \u03c1 = {format_rho(r)}" for m, r in zip(rows["mechanism"], rows["rho"]))

    rhos = sorted(table["rho"].unique())
    ref = table[table["mechanism"] == reference].set_index("rho")["mean_error"]
    sentences = [f"{name(reference)}: mean error {ref[rhos[0]]:.3g} at \u03c1 = {format_rho(rhos[0])}"
                 f" and {ref[rhos[-1]]:.3g} at \u03c1 = {format_rho(rhos[-1])}."]
    for role, words in (("library", "with the universe as its bounds"),
                        ("library, its automatic bounds", "with the automatic bounds it documents"),
                        ("library, our two-pass", "with our two-pass recipe (its private quantiles, then its mean)")):
        rows = table[table["role"] == role]
        if rows.empty:
            continue
        ran = rows[rows["trials"] > 0]
        sentence = (f"Paired per trial against the libraries {words}: {_counts(rows, name(reference))} "
                    "(library, \u03c1) cells")
        if not ran.empty:
            # the geometric mean of its ratios over the rho values it ran ranks the libraries of this kind
            spread = ran.groupby("mechanism", sort=False)["ratio_to_reference"]
            best = spread.apply(lambda ratios: float(np.exp(np.log(ratios).mean()))).idxmin()
            sentence += (f"; the most accurate is {name(best)}, "
                         f"{_range(ran[ran['mechanism'] == best]['ratio_to_reference'].tolist())} "
                         f"{name(reference)}'s error")
        for verdict, words_ in ((VERDICTS[2], "less accurate than"), (VERDICTS[1], "tied with")):
            found = rows[rows["verdict"] == verdict]
            if not found.empty:
                sentence += f"; {name(reference)} {words_} {cells(found)}"
        refused = rows[rows["verdict"] == "refused"]
        if not refused.empty:
            sentence += f"; refused: {cells(refused)} ({refused['note'].iloc[0].split(': ', 1)[-1]})"
        partly = rows[(rows["refused"] > 0) & (rows["trials"] > 0)]
        if not partly.empty:
            sentence += "; refused in some trials (the verdict from the others): " + ", ".join(
                f"{name(m)} at \u03c1 = {format_rho(r)} ({k} of {k + t})"
                for m, r, k, t in zip(partly["mechanism"], partly["rho"], partly["refused"], partly["trials"]))
        sentences.append(sentence + ".")
    for mechanism, rows in table[table["role"] == "ours"].groupby("mechanism", sort=False):
        sentences.append(f"{name(mechanism)}: {_range(rows['ratio_to_reference'].tolist())} {name(reference)}'s error "
                         f"({_counts(rows, name(reference))} \u03c1 values, paired per trial).")
    for mechanism, rows in table[table["role"] == "superseded"].groupby("mechanism", sort=False):
        sentences.append(f"Shown for comparison only: {name(mechanism)}, "
                         f"{_range(rows['ratio_to_reference'].tolist())} {name(reference)}'s error "
                         f"({rows['note'].iloc[0]}).")
    for mechanism, rows in table[table["role"] == "over budget"].groupby("mechanism", sort=False):
        sentences.append(f"{name(mechanism)} spends {rows['true_rho_ratio'].median():.3g} \u03c1, not \u03c1: "
                         f"{_range(rows['ratio_to_reference'].tolist())} {name(reference)}'s error, "
                         "not a comparison at the same privacy.")
    return sentences


def overall_finding(tables: Sequence[pd.DataFrame], *, references: Mapping[str, str],
                    labels: Mapping[str, str] | None = None) -> str:
    """One sentence over every experiment: the paired verdicts of the reference against every
    library estimator that is not superseded, and how many of them a rerun is expected to change."""
    rows = pd.concat([table[table["role"].isin(LIBRARY_ROLES)] for table in tables], ignore_index=True)
    if rows.empty:
        return "No library estimator ran."
    names = " / ".join(dict.fromkeys(references.values()))
    decided = rows[rows["verdict_change_chance"].notna()]  # not refused, and at least two pairs
    worst = decided.loc[decided["verdict_change_chance"].idxmax()] if not decided.empty else None
    tail = "" if worst is None else (
        f" A rerun would change about {decided['verdict_change_chance'].sum():.1f} of these verdicts (the sum of "
        f"their chances; the largest {worst['verdict_change_chance']:.0%}, "
        f"{(labels or {}).get(worst['mechanism'], worst['mechanism'])} on "
        f"{worst['experiment']} at \u03c1 = {format_rho(worst['rho'])}).")
    return (f"Paired per trial at the same \u03c1-zCDP under replace-one neighbours: {_counts(rows, names)} "
            f"(experiment, \u03c1, library estimator) comparisons (a tie: |z| below {TIE_Z:g}, or Student's t's "
            f"equivalent with few trials).{tail}")
