"""One self-contained HTML page for a run (DESIGN.md 3): every figure, the fidelity table,
optional tables (Table 2), run times, the errata (DESIGN.md 5.0, 5.3) and provenance.

Images are embedded as base64 PNG and the CSS is inline, so the page can be mailed.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import html
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from .config import format_value
from .errata import FAIL_FACTOR, readable_number
from .fidelity import HIGH, LOW, STANDARD_ERRORS, target_met, verdict

PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "snakemake", "pyyaml")
REPOSITORY = Path(__file__).resolve().parents[1]
TABLE_CAPTIONS = {
    "table2": "Table 2: average relative error |\u03c3\u0302\u00b2 \u2212 \u03c3\u00b2| / \u03c3\u00b2 of the variance "
              "estimates (DESIGN.md 5.6)",
}
# The settings the design's prototype reported for the accounting finding (DESIGN.md 5.0).
DESIGN_EXAMPLES = (("gaussian_A", "d=1024_rho=0.125", "1.5", "more than 100"),
                   ("gaussian_C", "d=512_rho=0.125", "6.7", "about 24"))

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1150px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; padding-bottom: .15em; margin-top: 2em; }
pre, code { background: #f4f4f4; border-radius: 3px; }
pre { padding: .6em .8em; overflow-x: auto; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 13px; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: .3em; }
th, td { border: 1px solid #ccc; padding: .2em .55em; text-align: right; }
th { background: #eee; }
td.text, th.text { text-align: left; }
tr.outside td { background: #fde2e1; }
tr.fails td { background: #fde2e1; }
tr.total td { font-weight: 600; background: #f6f6f6; }
figure { margin: 1em 0 2em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-weight: 600; margin-bottom: .3em; }
.verdict { font-weight: 600; padding: .4em .7em; border-left: 4px solid #888; background: #f7f7f7; }
.verdict.met { border-color: #2a8a2a; }
.verdict.not-met { border-color: #c0392b; }
.note { color: #555; font-size: 14px; }
nav a { margin-right: .8em; }
"""


# --- small HTML helpers -------------------------------------------------------------------

def _e(value) -> str:
    return html.escape(str(value))


def _cell(value) -> tuple[str, str]:
    """(text, css class) of a table cell: numbers with 4 significant digits, right-aligned."""
    if isinstance(value, (bool,)) or str(value) in {"True", "False"}:
        return str(value), "text"
    if isinstance(value, (int,)) or (isinstance(value, float) and not math.isnan(value) and float(value).is_integer()
                                     and abs(value) < 1e15):
        return format_value(value), ""
    if isinstance(value, float):
        return ("" if math.isnan(value) else f"{value:.4g}"), ""
    return str(value), "text"


def html_table(frame: pd.DataFrame, *, caption: str | None = None, row_classes=None) -> str:
    """A plain HTML table; ``row_classes`` gives a CSS class per row (or "")."""
    def numeric(column):
        return pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])

    head = "".join(f'<th class="{"" if numeric(c) else "text"}">{_e(c)}</th>' for c in frame.columns)
    rows = []
    for index, (_, row) in enumerate(frame.iterrows()):
        cells = []
        for value in row:
            text, css = _cell(value.item() if hasattr(value, "item") else value)
            cells.append(f'<td class="{css}">{_e(text)}</td>' if css else f"<td>{_e(text)}</td>")
        css = row_classes[index] if row_classes is not None else ""
        rows.append(f'<tr class="{css}">' + "".join(cells) + "</tr>" if css else "<tr>" + "".join(cells) + "</tr>")
    caption_html = f"<caption>{_e(caption)}</caption>" if caption else ""
    return f"<table>{caption_html}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def embedded_image(path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _figure(path, title: str) -> str:
    return f"<figure><figcaption>{_e(title)}</figcaption>{embedded_image(path, title)}</figure>"


# --- sections -----------------------------------------------------------------------------

def rerun_section() -> str:
    return """<h2 id="rerun">How to rerun</h2>
<pre>make figures                                              # the full paper run (config/config.yaml), from a fresh venv
snakemake --cores all                                     # the same, in an environment that has the pinned packages
snakemake --cores all --configfile config/smoke.yaml      # the tiny CI-sized run (minutes)
snakemake --cores all results/report.html                 # only this page and what it needs</pre>
<p class="note">Edit a YAML grid and rerun: only the new cells are computed (in an experiment with
<code>share_rho</code>, a new rho reruns the jobs of its settings, which hold every rho). Results are in
<code>results/</code>, figures (PDF and PNG) in <code>figures/</code>.</p>"""


def experiments_section(config: dict, summaries: list) -> str:
    rows = []
    for path in summaries:
        summary = pd.read_csv(path)
        for experiment, frame in summary.groupby("experiment", sort=False):
            entry = config.get("experiments", {}).get(experiment, {})
            data = ", ".join(f"{k}={v}" for k, v in entry.get("data", {}).items())
            grid = "; ".join(f"{k} \u2208 {{{', '.join(format_value(v) for v in values)}}}"
                             for k, values in entry.get("grid", {}).items())
            settings = len(frame.drop_duplicates([c for c in frame.columns if c in entry.get("grid", {})]))
            trials = sorted(set(frame["trials"].astype(int)))
            rows.append({"experiment": experiment, "data": data, "grid": grid, "metric": entry.get("metric", "l2"),
                         "mechanisms": ", ".join(dict.fromkeys(frame["mechanism"])), "settings": settings,
                         "trials per setting": "/".join(map(str, trials))})
    if not rows:
        return ""
    return '<h2 id="experiments">Experiments</h2>' + html_table(pd.DataFrame(rows))


def figures_section(config: dict, figures: list) -> str:
    titles = {name: spec.get("title", name) for name, spec in (config.get("figures") or {}).items()}
    parts = ['<h2 id="figures">Figures</h2>']
    if not figures:
        parts.append("<p>No figures are configured.</p>")
    for path in figures:
        stem = Path(path).stem
        parts.append(_figure(path, titles.get(stem, stem)))
    return "\n".join(parts)


def fidelity_section(config: dict, fidelity: list) -> str:
    parts = ['<h2 id="fidelity">Fidelity: our medians against the published ones</h2>',
             f"<p>Ratio = our median error / the published median, per setting. With 50 trials a median has a "
             f"few per cent of Monte-Carlo spread, so a ratio within {LOW:g}\u2013{HIGH:g} is agreement; where the "
             f"published medians rest on few trials (agreement <code>band_or_se</code>), a difference within "
             f"{STANDARD_ERRORS:g} combined standard errors (<code>combined_se</code>, from both interquartile ranges "
             f"and trial counts) agrees too. Gaussian A: the target covers every PLAN (published accounting) and IOME "
             f"ratio for d \u2264 1024, coordinate_median (budget share 0.25, published accounting) against the "
             f"published PLAN-noscale curve for d \u2264 1024, and the non-private empirical mean at every d (it checks "
             f"that our data match the published data). Binary: the private outputs of PLAN-binary (paper, oracle, "
             f"noscale) and IOME, of which the configured share must agree. Targeted rows that do not agree are "
             f"highlighted.</p>"]
    if not fidelity:
        parts.append("<p>No fidelity comparison is configured (config key <code>fidelity</code>).</p>")
    for path in fidelity:
        experiment = Path(path).stem
        entry = (config.get("fidelity") or {}).get(experiment, {})
        agreement, required_share = entry.get("agreement", "band"), float(entry.get("required_share", 1.0))
        table = pd.read_csv(path)
        targeted = table["target_applies"].astype(bool) if len(table) else pd.Series(dtype=bool)
        inside = table["within_target"].astype(bool) if len(table) else pd.Series(dtype=bool)
        met = bool(len(table)) and target_met(table, required_share)
        line = verdict(table, experiment, agreement=agreement, required_share=required_share)
        parts.append(f'<p class="verdict {"met" if met else "not-met"}">Verdict: {_e(line)}</p>')
        note = _comparability_note(config, experiment, table)
        if note:
            parts.append(f'<p class="note">{_e(note)}</p>')
        classes = ["outside" if t and not i else "" for t, i in zip(targeted, inside)]
        parts.append(html_table(table, caption=f"{experiment}: ours vs published", row_classes=classes))
    return "\n".join(parts)


def _comparability_note(config, experiment, table) -> str:
    """Why a run's ratios may be off by design: fewer trials or another n than the published run."""
    notes = []
    if len(table) and (table["ours_trials"] < table["published_trials"]).any():
        notes.append(f"this run has {'/'.join(map(str, sorted(set(table['ours_trials']))))} trials per setting "
                     f"against {'/'.join(map(str, sorted(set(table['published_trials']))))} published, so its medians "
                     "carry more Monte-Carlo spread")
    n, published = _our_n(config, experiment), _published_n(config, experiment)
    if n is not None and published is not None and format_value(n) != published:
        notes.append(f"our n = {n}, the published runs' n = {published}: the errors scale roughly like "
                     "1/sqrt(n), so these ratios are not a fidelity check (run the full config for that)")
    return ("Note: " + "; ".join(notes) + ".") if notes else ""


def _our_n(config, experiment):
    return config.get("experiments", {}).get(experiment, {}).get("data", {}).get("n")


def _published_n(config, experiment):
    """The n of the published runs, from the experiment's fidelity reference (None if unknown)."""
    path = (config.get("fidelity") or {}).get(experiment, {}).get("reference")
    if not path or not Path(path).is_file():
        return None
    values = pd.read_csv(path).get("n")
    return None if values is None or values.nunique() != 1 else format_value(values.iloc[0])


def tables_section(tables: list) -> str:
    if not tables:
        return ""
    parts = ['<h2 id="tables">Tables</h2>']
    for path in tables:
        path = Path(path)
        sidecar = path.with_suffix(".caption.txt")
        caption = sidecar.read_text().strip() if sidecar.is_file() else TABLE_CAPTIONS.get(path.stem, str(path))
        parts.append(html_table(pd.read_csv(path), caption=caption))
    return "\n".join(parts)


def run_times(benchmarks: list) -> pd.DataFrame:
    """Per experiment (results/<experiment>/benchmarks/<job>.tsv, one per cell, or per setting
    with share_rho): jobs, summed wall seconds (``s``), summed CPU seconds (``cpu_time``), the
    longest job and the peak max_rss; a total row."""
    records = []
    for path in benchmarks:
        path = Path(path)
        frame = pd.read_csv(path, sep="\t")
        for _, row in frame.iterrows():
            records.append({"experiment": path.parent.parent.name, "job": path.stem,
                            "s": pd.to_numeric(row.get("s"), errors="coerce"),
                            "cpu_time": pd.to_numeric(row.get("cpu_time"), errors="coerce"),
                            "max_rss": pd.to_numeric(row.get("max_rss"), errors="coerce")})
    columns = ["experiment", "jobs", "wall s (sum)", "CPU s (sum)", "longest job", "longest job s",
               "peak max_rss MB"]
    if not records:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(records)

    def summarise(name, group):
        longest = group.loc[group["s"].idxmax()] if group["s"].notna().any() else None
        return {"experiment": name, "jobs": len(group), "wall s (sum)": group["s"].sum(),
                "CPU s (sum)": group["cpu_time"].sum(),
                "longest job": "" if longest is None else (longest["job"] if name != "total"
                                                           else f"{longest['experiment']}/{longest['job']}"),
                "longest job s": math.nan if longest is None else longest["s"],
                "peak max_rss MB": group["max_rss"].max()}

    rows = [summarise(name, group) for name, group in frame.groupby("experiment", sort=False)]
    rows.append(summarise("total", frame))
    return pd.DataFrame(rows, columns=columns)


def run_times_section(benchmarks: list) -> str:
    table = run_times(benchmarks)
    parts = ['<h2 id="runtimes">Run times</h2>',
             '<p class="note">From the Snakemake benchmark file of every job (a cell, or every rho of a setting '
             'where the experiment shares them): <code>s</code> is the wall time '
             'of the job, <code>cpu_time</code> its CPU seconds, <code>max_rss</code> its peak resident memory. '
             'The summed wall time is the serial cost; with <code>--cores N</code> the run takes about 1/N of it.</p>']
    if table.empty:
        parts.append("<p>No benchmark files.</p>")
        return "\n".join(parts)
    classes = ["total" if name == "total" else "" for name in table["experiment"]]
    parts.append(html_table(table, row_classes=classes))
    return "\n".join(parts)


def errata_section(config: dict, errata_table, errata_figures: list, errata_noscale=None) -> str:
    figures = {Path(path).stem: path for path in errata_figures}
    parts = ['<h2 id="errata">Errata of the published code (DESIGN.md 5.0 and 5.3)</h2>',
             '<p class="note">Rerun just this section: <code>snakemake --cores all errata</code> (add '
             '<code>--configfile config/smoke.yaml</code> for the smoke run). It writes '
             '<code>results/errata/accounting.csv</code>, <code>results/errata/noscale.csv</code> and '
             '<code>figures/errata_accounting.png|pdf</code>, <code>figures/errata_noscale.png|pdf</code>.</p>',
             "<h3>1. Published accounting is about 3.75\u03c1-zCDP where it claims \u03c1 (DESIGN.md 5.0)</h3>",
             "<p>The published Gaussian PLAN code ran its exponential-mechanism quantiles with the add/remove "
             "sensitivity 0.5 where swap neighbours need 1 (4\u00d7 in \u03c1), and stacked three shifted copies of "
             "every person while dividing the budget by 3, where three copies move the utility by 3 (9\u00d7 in "
             "\u03c1, not 3\u00d7). The 0.25\u03c1 it books for the centre and variance steps really costs 3\u03c1; "
             "with the correctly booked 0.75\u03c1 of the main step a run that claims \u03c1 is about 3.75\u03c1-zCDP. "
             "Our <code>PLAN</code> reproduces that accounting (the paper's curves); <code>PLAN-exact</code> is the "
             "same algorithm with exactly \u03c1.</p>"]
    table = pd.read_csv(errata_table) if errata_table else pd.DataFrame()
    if table.empty:
        parts.append("<p>No experiment in this config runs PLAN with both published and exact accounting.</p>")
    else:
        fails = table["exact_fails"].astype(bool)
        factor = table["published_true_rho_over_rho"].dropna()
        measured = (f"Measured here from the per-trial ledgers (<code>true_rho</code> in the cell files): the "
                    f"published-accounting runs spend a median of {factor.median():.3g}\u03c1 "
                    f"(range {factor.min():.4g}\u2013{factor.max():.4g} over {len(factor)} settings). "
                    if len(factor) else "")
        parts.append(
            f"<p>{measured}We ran both accountings in {len(table)} Gaussian settings of "
            f"{table['experiment'].nunique()} experiments and compared the median l2 error against the true mean "
            f"(<code>error</code>, for every experiment, also those whose figures plot the error against the "
            f"empirical mean). A setting fails under exact accounting when the exact median exceeds the "
            f"published-accounting one by more than {FAIL_FACTOR:g}\u00d7: with an honest budget PLAN's preprocessing "
            f"then no longer works, while where \u03c1 is ample the two agree within Monte-Carlo spread.</p>")
        worst = table[fails].sort_values("ratio", ascending=False)
        listed = "; ".join(f"{r.experiment} {r.setting} {readable_number(r.published_median)} \u2192 "
                           f"{readable_number(r.exact_median)} ({readable_number(r.ratio)}\u00d7)"
                           for r in worst.head(10).itertuples())
        verdict_text = f"{int(fails.sum())} of {len(table)} settings fail under exact accounting"
        if fails.any():
            verdict_text += ": " + listed + (" \u2026" if fails.sum() > 10 else "")
        parts.append(f'<p class="verdict {"not-met" if fails.any() else "met"}">{_e(verdict_text)}</p>')
        examples = []
        for experiment, setting, before, after in DESIGN_EXAMPLES:
            row = table[(table["experiment"] == experiment) & (table["setting"] == setting)]
            here = (f"this run: {readable_number(row['published_median'].iloc[0])} \u2192 "
                    f"{readable_number(row['exact_median'].iloc[0])}"
                    if len(row) else "not in this run's grid")
            examples.append(f"{experiment} {setting}: {before} \u2192 {after} ({here})")
        parts.append("<p>The design's independent prototype found " + _e("; ".join(examples)) + ".</p>")
        if fails.any():
            parts.append(html_table(table[fails].drop(columns=["measure"]),
                                    caption="Settings where exact accounting fails"))
        parts.append("<details><summary>Every setting</summary>"
                     + html_table(table, row_classes=["fails" if f else "" for f in fails]) + "</details>")
    if "errata_accounting" in figures:
        parts.append(_figure(figures["errata_accounting"],
                             "PLAN median l2 error: exact (y) vs published (x) accounting, every Gaussian setting"))
    parts.append("<h3>2. The published PLAN-noscale curve is a private coordinate-wise median (DESIGN.md 5.3)</h3>"
                 "<p>The published code's clip-norm search for PLAN without scaling used an upper bound of about "
                 "1e-13 while the scaled norms were about 1e16, so every point was clipped to almost nothing and only "
                 "the private centre was left: that centre was computed with \u03c1<sub>pre</sub> = 0.25\u03c1 under "
                 "published accounting. So the published curve is what our <code>coordinate_median</code> "
                 "(budget share 0.25, published accounting) computes, not PLAN-noscale. We implement "
                 "<code>PLAN-noscale</code> as specified (whole \u03c1<sub>pre</sub> on the centre, no variance step, "
                 "clip-norm search over the whole universe) and show all three below.</p>")
    if errata_noscale:
        noscale = pd.read_csv(errata_noscale)
        if len(noscale):
            cm = noscale["coordinate_median_over_published"].dropna()
            ns = noscale["noscale_over_published"].dropna()
            summary = []
            if len(cm):
                summary.append(f"coordinate_median / published curve: median {cm.median():.3g} "
                               f"(range {cm.min():.3g}\u2013{cm.max():.3g}, {len(cm)} settings)")
            if len(ns):
                summary.append(f"PLAN-noscale as specified / published curve: median {ns.median():.3g} "
                               f"(range {ns.min():.3g}\u2013{ns.max():.3g})")
            if summary:
                parts.append(f"<p>Measured here: {_e('; '.join(summary))}.</p>")
            experiment = str(noscale["experiment"].iloc[0]) if "experiment" in noscale.columns else ""
            n, published = _our_n(config, experiment), _published_n(config, experiment)
            if n is not None and published is not None and format_value(n) != published:
                parts.append(f'<p class="note">Note: {_e(experiment)} has n = {_e(n)} in this config, the published '
                             f"curve n = {_e(published)}: the ratios compare different sample sizes; only the full "
                             "config checks the finding.</p>")
            parts.append("<details><summary>Every setting</summary>" + html_table(noscale) + "</details>")
    if "errata_noscale" in figures:
        parts.append(_figure(figures["errata_noscale"], "Published PLAN-noscale curve vs our coordinate_median "
                                                        "and PLAN-noscale as specified"))
    else:
        parts.append("<p>No fidelity experiment maps the published PLAN-noscale curve in this config: "
                     "no figure.</p>")
    return "\n".join(parts)


# --- provenance ---------------------------------------------------------------------------

def config_hash(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git_state(repository=REPOSITORY) -> tuple[str, str]:
    """(commit, "clean"/"dirty") of the code's repository; ("unknown", reason) without git.

    The generated outputs do not count: a run rewrites the committed results and figures
    (Snakemake deletes a job's outputs before it runs), which says nothing about the code."""
    try:
        commit = subprocess.run(["git", "-C", str(repository), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=20, check=True).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repository), "status", "--porcelain", "--", ".", ":(exclude)results",
             ":(exclude)figures"], capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return "unknown", f"no git information ({type(error).__name__})"
    return commit, ("dirty (uncommitted changes)" if status.strip() else "clean")


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def provenance(config: dict, *, now=None) -> dict:
    commit, tree = git_state()
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return {
        "git commit": commit,
        "work tree": tree,
        **{name: package_version(name) for name in PACKAGES},
        "python": sys.version.split()[0],
        "seed": config.get("seed", "not set"),
        "config sha256": config_hash(config),
        "date (UTC)": now.isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "CPU count": os.cpu_count(),
    }


def provenance_section(config: dict) -> str:
    items = provenance(config)
    rows = "".join(f"<tr><th class='text'>{_e(k)}</th><td class='text'><code>{_e(v)}</code></td></tr>"
                   for k, v in items.items())
    return ('<h2 id="provenance">Provenance</h2><p class="note">The config hash is the sha256 of the config as '
            'canonical JSON (sorted keys); equal hashes and commits mean the same run.</p>'
            f"<table><tbody>{rows}</tbody></table>")


# --- the page -----------------------------------------------------------------------------

def render_report(*, config, summaries=(), fidelity=(), figures=(), benchmarks=(), errata_table=None,
                  errata_figures=(), errata_noscale=None, tables=()) -> str:
    sections = [
        rerun_section(),
        experiments_section(config, list(summaries)),
        figures_section(config, list(figures)),
        fidelity_section(config, list(fidelity)),
        tables_section(list(tables)),
        run_times_section(list(benchmarks)),
        errata_section(config, errata_table, list(errata_figures), errata_noscale),
        provenance_section(config),
    ]
    nav = " ".join(f'<a href="#{anchor}">{label}</a>' for anchor, label in (
        ("rerun", "Rerun"), ("experiments", "Experiments"), ("figures", "Figures"), ("fidelity", "Fidelity"),
        *((("tables", "Tables"),) if tables else ()), ("runtimes", "Run times"), ("errata", "Errata"),
        ("provenance", "Provenance")))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>PLAN private mean estimation: results report</title>"
            f"<style>{CSS}</style></head><body>"
            "<h1>PLAN: variance-aware private mean estimation \u2014 results report</h1>"
            "<p>Every figure and table of the PLAN paper (Aum\u00fcller, Lebeda, Nelson, Pagh; PETS 2024) regenerated "
            "from the YAML config of this run, with the comparison against the published numbers, run times, the "
            f"errata of the published code and the provenance of the run.</p><nav>{nav}</nav>"
            + "\n".join(section for section in sections if section) + "</body></html>\n")


def write_text_atomically(text: str, path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o644)  # mkstemp makes 0600 files; the page is meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def report_job(*, config, summaries, fidelity, figures, benchmarks, output, log, errata_table=None,
               errata_figures=(), errata_noscale=None, tables=()):
    """Snakemake job: results/report.html."""
    page = render_report(config=config, summaries=summaries, fidelity=fidelity, figures=figures,
                         benchmarks=benchmarks, errata_table=errata_table, errata_figures=errata_figures,
                         errata_noscale=errata_noscale, tables=tables)
    write_text_atomically(page, output)
    with open(log, "w") as stream:
        print(f"report: {len(figures)} figures, {len(fidelity)} fidelity tables, {len(tables)} extra tables, "
              f"{len(benchmarks)} benchmark files, {len(errata_figures)} errata figures; {len(page)} characters",
              file=stream)
