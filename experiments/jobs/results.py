"""What a run's results are compared and gathered into: the fidelity tables, the errata, Table 2
and its erratum, the scorecard and the report page."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..engine.atomic import write_csv_atomically, write_text_atomically
from ..engine.availability import read_status
from ..engine.cell_files import read_cell_file
from ..engine.config import format_value, load_experiments
from ..engine.joblog import open_log
from ..outputs.claims import claims_table, counts, headline
from ..outputs.errata import (
    FAIL_FACTOR,
    accounting_figure,
    accounting_table,
    figure7_note,
    noscale_figure,
    noscale_table,
    read_authors_code,
    save_png_and_pdf,
)
from ..outputs.fidelity import fidelity_table, verdict
from ..outputs.figures.paper import read_summaries
from ..outputs.libraries import comparison_table, experiment_findings
from ..outputs.report.contents import run_times
from ..outputs.report.page import render_report
from ..outputs.scorecard import build_scorecard, read_statuses
from ..outputs.tables import ERRATUM_CAPTION, FACTOR, table2_erratum_with_notes, table2_with_caption


def fidelity_job(*, summary, reference, names, output, log, agreement="band", required_share=1.0, measure="error",
                 reference_experiment=None):
    """results/fidelity/<experiment>.csv from a summary and a reference CSV."""
    ours = pd.read_csv(summary)
    table = fidelity_table(ours, pd.read_csv(reference), dict(names), agreement=agreement, measure=measure,
                           reference_experiment=reference_experiment)
    write_csv_atomically(table, output)
    experiment = ", ".join(dict.fromkeys(ours["experiment"].astype(str)))
    with open_log(log) as stream:
        print(verdict(table, experiment, agreement=agreement, required_share=required_share), file=stream)


def errata_job(*, summaries, pairs, table, accounting_png, accounting_pdf, log,
               noscale=None, noscale_summary=None, noscale_reference=None, noscale_table_path=None,
               noscale_png=None, noscale_pdf=None):
    """results/errata/accounting.csv and figures/errata_accounting.{png,pdf}; with ``noscale``
    (see experiments.outputs.errata.noscale_setup) also results/errata/noscale.csv and
    figures/errata_noscale.{png,pdf}."""
    frames = {}
    for path in summaries:
        summary = pd.read_csv(path)
        for experiment in dict.fromkeys(summary["experiment"].astype(str)):
            frames[experiment] = summary[summary["experiment"] == experiment].reset_index(drop=True)
    pairs = {experiment: tuple(pair) for experiment, pair in pairs.items()}
    accounting = accounting_table(frames, pairs)
    write_csv_atomically(accounting, table)
    save_png_and_pdf(accounting_figure(accounting), accounting_png, accounting_pdf)
    lines = [f"accounting: {len(accounting)} settings in {len(pairs)} experiments; "
             f"{int(accounting['exact_fails'].sum()) if len(accounting) else 0} fail under exact accounting "
             f"(exact median > {FAIL_FACTOR:g} x published)"]
    if noscale:
        summary, reference = pd.read_csv(noscale_summary), pd.read_csv(noscale_reference)
        if noscale_table_path is not None:
            write_csv_atomically(noscale_table(summary, reference, noscale), noscale_table_path)
        save_png_and_pdf(noscale_figure(summary, reference, noscale), noscale_png, noscale_pdf)
        lines.append(f"noscale: figure for {noscale['experiment']} written")
    else:
        lines.append("noscale: no fidelity experiment maps the published PLAN-noscale curve; figure skipped")
    with open_log(log) as stream:
        print("\n".join(lines), file=stream)


def table2_job(*, summary, reference, setup, output, caption, log):
    """``table2.csv`` and its caption sidecar from the protocol's summary (``setup``:
    :func:`experiments.engine.config.check_table2`)."""
    table, text = table2_with_caption(pd.read_csv(summary), pd.read_csv(reference), setup)
    write_csv_atomically(table, output)
    write_text_atomically(text + "\n", caption)
    with open_log(log) as stream:
        print(f"Table 2: {len(table)} cells, {int(table['within_factor_1_5'].sum())} within a factor of "
              f"{format_value(FACTOR)} of the paper", file=stream)


def table2_erratum_job(*, protocol_summary, corrected_summary, reference, setup, seed, output, caption, notes, log):
    """``table2_erratum.csv``, its caption sidecar and its notes sidecar (one sentence per line)."""
    erratum, sentences = table2_erratum_with_notes(pd.read_csv(protocol_summary), pd.read_csv(corrected_summary),
                                                   pd.read_csv(reference), setup, seed=seed)
    write_csv_atomically(erratum, output)
    write_text_atomically(ERRATUM_CAPTION + "\n", caption)
    write_text_atomically("".join(sentence + "\n" for sentence in sentences), notes)
    with open_log(log) as stream:
        print(f"Table 2 erratum: {len(erratum)} rows, {len(sentences)} notes", file=stream)


def scorecard_job(*, config: Mapping, summaries: Sequence, published: str, quoted: str, statuses: Sequence,
                  output: str, values_output: str, claims_output: str, log: str, published_values: Sequence = (),
                  table2: str | None = None,
                  illustrations: Mapping[str, str] | None = None, produced: Sequence[str] = (),
                  metrics: Mapping | None = None, extra_figures: Mapping[str, str] | None = None,
                  authors_code: str | None = None) -> None:
    """results/scorecard.csv, results/scorecard_values.csv, results/claims.csv; ``authors_code``: the
    authors' IOME on Figure 7(b)'s setting (scripts/authors_figure7.py), stated in Figure 7's row."""
    notes = {"PLAN Figure 7": figure7_note(read_authors_code(authors_code))} if authors_code else None
    read = {"summary": read_summaries(summaries), "published": pd.read_csv(published),
            "missing": read_statuses(statuses), "table2": pd.read_csv(table2) if table2 else None,
            "illustrations": {name: pd.read_csv(path) for name, path in (illustrations or {}).items()}}
    scorecard, values = build_scorecard(
        config=config, quoted=pd.read_csv(quoted), published_values=[pd.read_csv(path) for path in published_values],
        produced=produced, metrics=metrics, notes=notes, extra_figures=extra_figures, **read)
    claims = claims_table(config=config, **read)
    write_csv_atomically(scorecard, output)
    write_csv_atomically(values, values_output)
    write_csv_atomically(claims, claims_output)
    with open_log(log) as stream:
        print(headline(counts(scorecard, claims)), file=stream)
        for row in scorecard.itertuples(index=False):
            print(f"{row.item}: {row.status} ({row.agree}/{row.compared}) {row.note}", file=stream)


def report_job(*, config, summaries, fidelity, figures, output, log, run_times=None, errata_table=None,
               errata_figures=(), errata_noscale=None, tables=(), not_reproduced=None, audit=None, audit_power=None,
               libraries=None, scorecard=None, authors_code=None):
    """Snakemake job: results/report.html."""
    page = render_report(config=config, summaries=summaries, fidelity=fidelity, figures=figures,
                         run_times=run_times, errata_table=errata_table, errata_figures=errata_figures,
                         errata_noscale=errata_noscale, tables=tables, not_reproduced=not_reproduced, audit=audit,
                         audit_power=audit_power, libraries=libraries, scorecard=scorecard,
                         authors_code=authors_code, page_dir=Path(output).parent)
    write_text_atomically(page, output)
    with open_log(log) as stream:
        print(f"report: {len(figures)} figures, {len(fidelity)} fidelity tables, {len(tables)} extra tables, "
              f"{len(errata_figures)} errata figures, "
              f"{len(not_reproduced or ())} data sets not reproduced; {len(page)} characters", file=stream)


def run_times_job(*, benchmarks, output, log):
    """results/run_times.csv: per experiment, the run's measured wall and CPU seconds and peak
    memory from its jobs' benchmark files (the report's "Run times")."""
    table = run_times(list(benchmarks))
    write_csv_atomically(table, output)
    with open_log(log) as stream:
        print(f"run times: {len(benchmarks)} benchmark files, {max(len(table) - 1, 0)} experiments", file=stream)


def dataset_record_job(*, status, output, log):
    """results/datasets/<dataset>.status.json: the fetch's status, copied as it is (once parsed), kept
    with the results, where a rebuild from the committed results reads it."""
    found = read_status(status)
    write_text_atomically(Path(status).read_text(), output)
    with open_log(log) as stream:
        print(f"{found['dataset']}: {'available' if found['available'] else 'not obtained'} (recorded)", file=stream)


def library_comparison_job(*, config, experiment, cells, output, log, reference, measure="error", superseded=None):
    """results/libraries/<experiment>.csv from the experiment's cell files; the log gets the
    sentences the report shows."""
    spec = load_experiments(config)[experiment]
    names = [mechanism.name for mechanism in spec.mechanisms]
    frame = pd.concat([read_cell_file(path, trials=range(spec.trials), mechanisms=names) for path in cells],
                      ignore_index=True)
    table = comparison_table(frame, spec, reference=reference, measure=measure, superseded=superseded)
    write_csv_atomically(table, output)
    with open_log(log) as stream:
        print(f"{experiment}: " + " ".join(experiment_findings(table, reference=reference)), file=stream)
