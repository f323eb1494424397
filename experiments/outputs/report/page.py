"""The page itself: the jinja2 template ``experiments/outputs/report/templates/report.html.j2`` filled with the
sections' data (:mod:`.contents`, :mod:`.findings`, :mod:`.provenance`)."""
from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from ..fidelity import HIGH, LOW, STANDARD_ERRORS
from .contents import experiments_table, extra_tables, figure_entries, not_reproduced_entries, run_times_table
from .findings import (
    audit_entries,
    audit_power_entries,
    dataset_anchor,
    errata,
    fidelity_entries,
    figure7_erratum,
    libraries_entries,
    scorecard_entries,
    userlevel_entries,
)
from .html import card_table
from .provenance import provenance

# Beside the package, so the page renders from any working directory (package data, pyproject.toml).
TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html.j2"
# Figures are shown at their print size, shrunk to fit the page; ticking a figure's "readable size"
# keeps it at least MIN_FIGURE_SCALE of it (10 pt at 10 px), scrolling inside its box on a narrower page.
MIN_FIGURE_SCALE = 0.75
# Below this page width the scorecard, the claims and the experiments table show their rows as cards
# (the scorecard's item, status, agreeing share and largest deviation need about 900 px as a table).
CARDS_BELOW_PX = 1000


@functools.cache
def template() -> jinja2.Template:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(("html", "html.j2")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return environment.get_template(TEMPLATE)


def render_report(*, config, summaries=(), fidelity=(), figures=(), run_times=None, errata_table=None,
                  errata_figures=(), errata_noscale=None, tables=(), not_reproduced=None, audit=None,
                  audit_power=None, libraries=None, scorecard=None, authors_code=None, page_dir="results") -> str:
    """The page. ``not_reproduced``: one dict per data set the run could not use, with keys
    ``dataset``, ``reason``, ``how_to_supply`` and optionally ``experiments`` and ``figures``
    (the names of those left out); shown near the top of the page. ``scorecard``: the paths of
    results/scorecard.csv, scorecard_values.csv and claims.csv (the first section). ``libraries``:
    the library comparison's tables, results/libraries/<experiment>.csv (or None). ``authors_code``:
    the authors' IOME on Figure 7(b)'s setting (scripts/authors_figure7.py), or None. ``run_times``:
    results/run_times.csv (or None: no table). ``audit`` and
    ``audit_power``: the audit's table and figure, and its power curves' (each a pair of paths, or
    None: no such section). ``page_dir``: the directory
    the page is written to, from which its links to the full-size figures are relative (each
    figure PNG needs its PDF beside it)."""
    missing = [{**entry, "anchor": dataset_anchor(entry["dataset"])}
               for entry in not_reproduced_entries(config, not_reproduced)]
    experiments = experiments_table(config, list(summaries))
    extras = extra_tables(list(tables))
    figure_list = figure_entries(config, list(figures), page_dir=page_dir)
    card = scorecard_entries(config, scorecard, figure_anchors={f["anchor"] for f in figure_list},
                             has_tables=bool(extras),
                             dataset_anchors={entry["dataset"]: entry["anchor"] for entry in missing})
    nav = [("scorecard", "Scorecard")] if card else []
    nav += [("not-reproduced", "Not reproduced")] if missing else []
    userlevel = userlevel_entries(config, list(summaries))
    power = audit_power_entries(audit_power, page_dir=page_dir)
    compared = libraries_entries(config, libraries)
    nav += [("rerun", "Rerun"), *([("experiments", "Experiments")] if not experiments.empty else []),
            ("figures", "Figures"), *([("userlevel", "User-level")] if userlevel else []),
            *([("libraries", "Libraries")] if compared else []),
            ("fidelity", "Fidelity"), *([("tables", "Tables")] if extras else []),
            ("runtimes", "Run times"), ("errata", "Errata"), *([("audit", "Audit")] if audit else []),
            *([("audit-power", "Audit power")] if power else []), ("provenance", "Provenance")]
    return template().render(
        min_figure_scale=MIN_FIGURE_SCALE,
        cards_below=CARDS_BELOW_PX,
        nav=nav,
        not_reproduced=missing,
        experiments=None if experiments.empty else card_table(experiments, name="experiments", narrow_only=True),
        scorecard=card,
        figures=figure_list,
        userlevel=userlevel,
        band=f"{LOW:g}\u2013{HIGH:g}",
        standard_errors=f"{STANDARD_ERRORS:g}",
        fidelity=fidelity_entries(config, list(fidelity)),
        tables=extras,
        run_times=run_times_table(run_times),
        errata={**errata(config, errata_table, list(errata_figures), errata_noscale, page_dir=page_dir),
                "figure7": figure7_erratum(list(summaries), authors_code)},
        audit=audit_entries(audit, page_dir=page_dir),
        audit_power=power,
        libraries=compared,
        provenance=provenance(config),
    )
