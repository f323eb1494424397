"""The privacy audit (docs/design.md §5.8): one audit, the table of all, and its figure; one
mechanism's power curve (experiments/audit/power.py), the table of all, and their figure."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..audit.audits import run_audit
from ..audit.power import COLUMNS as POWER_COLUMNS
from ..audit.power import false_alarms, power_curve
from ..engine.atomic import write_csv_atomically
from ..engine.config import configured_audit
from ..engine.joblog import open_log
from ..engine.trials import stable_id
from ..outputs.figures.audit import audit_figure, power_figure
from ..outputs.figures.common import save_figure, write_log


def audit_job(*, name, runs, budget, seed, output, log, config):
    """One privacy audit and its positive control (docs/design.md §5.8): one row of
    results/audit/audit.csv. ``name`` is an entry of the config's ``audits:``: a registered audit
    or an audit of a configured variant. The randomness is keyed by the audit's name under the
    config seed."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(stable_id("audit"), stable_id(name))))
    outcome = run_audit(configured_audit(config, name), rng=rng, runs=runs, budget=budget)
    row = outcome.as_dict()
    write_csv_atomically(pd.DataFrame([row]), output)
    with open_log(log) as stream:
        print(json.dumps(row, indent=2, default=str), file=stream)


def audit_table_job(*, rows, output, log):
    """All audits in one table, in config order."""
    frame = pd.concat([pd.read_csv(path) for path in rows], ignore_index=True)
    write_csv_atomically(frame, output)
    with open_log(log) as stream:
        flagged = frame[frame["violation"].astype(bool)]["name"].tolist()
        powerless = frame[~frame["control_violation"].astype(bool)]["name"].tolist()
        print(f"{len(frame)} audits; violations: {flagged or 'none'}; controls not flagged: {powerless or 'none'}",
              file=stream)


def audit_figure_job(*, table, pdf, png, log) -> None:
    """The audit figure from results/audit/audit.csv."""
    frame = pd.read_csv(table)
    save_figure(audit_figure(frame), pdf, png)
    write_log(log, [f"{len(frame)} audits", f"wrote {pdf} and {png}"])


def power_job(*, mechanism, budget, runs, breaks, repetitions, seed, output, log):
    """One mechanism's power curve: results/audit/power/<mechanism>.csv, one line per number of
    runs (the flagged counts, the seconds per audit) in the job's log."""
    with open_log(log) as stream:
        table = power_curve(mechanism, seed=seed, runs=runs, breaks=breaks, repetitions=repetitions, budget=budget,
                            progress=stream)
    write_csv_atomically(table, output)


def power_table_job(*, curves, output, log):
    """Every mechanism's power curve in one table, in config order."""
    frame = pd.concat([pd.read_csv(path) for path in curves], ignore_index=True)[POWER_COLUMNS]
    write_csv_atomically(frame, output)
    alarms = false_alarms(frame)
    with open_log(log) as stream:
        print(f"{frame['mechanism'].nunique()} mechanisms, {len(frame)} rows; break 1 (false alarms) flagged "
              f"{int(alarms['flagged'].sum())} of {int(alarms['repetitions'].sum())} audits", file=stream)


def power_figure_job(*, table, pdf, png, log) -> None:
    """The power curves' figure from results/audit/power_curves.csv."""
    frame = pd.read_csv(table)
    save_figure(power_figure(frame), pdf, png)
    write_log(log, [f"{frame['mechanism'].nunique()} power curves", f"wrote {pdf} and {png}"])
