"""The one-page HTML report (experiments/outputs/report/, written by experiments.jobs.results.report_job)."""
import base64
import io
import os
import re
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from experiments.jobs.results import report_job
from experiments.outputs.report import html as report_html
from experiments.outputs.report import page as report_page
from experiments.outputs.report import provenance as provenance_module
from experiments.outputs.report.contents import run_times
from experiments.outputs.report.provenance import config_hash, git_state
from testkit.report_inputs import AUDIT_ROW, CONFIG, LONG_PAIR, audit_inputs, power_inputs, power_rows, write_inputs


@pytest.fixture
def inputs(tmp_path):
    """A small synthetic set of every report input (tests/testkit/report_inputs.py)."""
    return write_inputs(tmp_path)


def page(inputs, **changes):
    report_job(**{**inputs, **changes})
    return inputs["output"].read_text(encoding="utf-8")


def test_report_has_every_section(inputs):
    html = page(inputs)
    for heading in ("How to rerun", "Experiments", "Figures", "Fidelity", "Run times", "Errata", "Provenance"):
        assert re.search(rf"<h2[^>]*>{heading}", html), heading


def test_report_gives_the_three_rerun_commands(inputs):
    html = page(inputs)
    for command in ("make figures", "snakemake --cores all", "snakemake --cores all --configfile config/smoke.yaml"):
        assert command in html


def test_report_embeds_every_figure_as_a_base64_png(inputs):
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page(inputs))
    assert len(images) == 3
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)


def test_report_titles_each_figure_from_the_config_and_links_its_full_size_png_and_pdf(inputs):
    assert ('<figcaption>Figure 3: l2 error on synthetic Gaussian data <span class="figure-links">(full size: '
            '<a href="../figures/figure3.png">PNG</a>, <a href="../figures/figure3.pdf">PDF</a>; <label><input '
            'type="checkbox" class="readable-size">readable size</label>)</span>'
            '<span class="figure-caption">Colour: mechanism. Drawn as: the authors&#39; notebook</span></figcaption>'
            in page(inputs))


def test_a_figure_of_ours_says_so_in_its_caption(inputs):
    config = {**inputs["config"], "figures": {"figure3": {"title": "Mine", "panels": [{"statistic": "median_iqr"}]}}}
    html = page(inputs, config=config)
    assert ('<span class="figure-caption">Ours: no figure of the papers. Median over trials; bars: interquartile '
            'range (25th to 75th percentile). Colour: mechanism.</span>') in html


def headline_counts(text):
    """{status or verdict: count} from the report's headline sentence."""
    return {phrase: int(count) for count, phrase in re.findall(r"(\d+) ([a-z][a-z ]+?)(?=[,.])", text)}


def test_the_scorecard_comes_first_and_its_headline_states_the_counts_of_the_tables(inputs):
    from experiments.outputs.claims import VERDICT_PHRASES

    html = page(inputs)
    headline = re.search(r'<p class="headline">(.*?)</p>', html).group(1)
    assert html.index('<p class="headline">') < html.index("<h2")
    assert re.findall(r'<h2 id="([^"]+)"', html)[0] == "scorecard"
    scorecard, _, claims = (pd.read_csv(path) for path in inputs["scorecard"])
    papers = scorecard[scorecard["status"] != "ours"]
    stated = headline_counts(headline.split("Of the", 2)[1])
    assert stated == papers["status"].value_counts().to_dict()
    assert f"Of the {len(papers)} figures and tables of the four papers" in headline
    claimed = headline_counts(headline.split("Of the", 2)[2])
    assert claimed == {VERDICT_PHRASES[v]: n for v, n in claims["verdict"].value_counts().items()}
    assert "Every figure and table" not in html and "regenerated" not in html


def test_the_scorecard_row_links_its_figure_and_folds_every_compared_value(inputs):
    html = page(inputs)
    assert '<a href="#figure-figure3">figure3</a>' in html and 'id="figure-figure3"' in html
    assert "<summary>Every compared value: 2 values; 2 agree</summary>" in html
    assert '<td class="status st-good" data-label="status">reproduced</td>' in html
    assert '<td class="status st-absent" data-label="status">not run here</td>' in html
    assert "plan outperforms iome" in html


def test_a_not_run_here_row_names_its_dataset_and_links_its_sources_tried_said_once(inputs):
    note = "kosarak not obtained here: the report lists the sources tried."
    html = page(inputs, not_reproduced=[{**NOT_REPRODUCED[0], "dataset": "kosarak"}])
    linked = ('Not obtained here: <a href="#not-reproduced-kosarak">kosarak</a> (links: the sources tried). ')
    # the scorecard's row (Figure 5 (b), (c)) and the claim on it, each in a few words with the link
    assert html.count(linked) == 2 and note not in html
    assert '<h3 id="not-reproduced-kosarak">kosarak</h3>' in html
    assert html.count("datasets/raw/kosarak.dat is missing") == 1  # the reason, once: in "Not reproduced"
    # without that section on the page the row keeps the text of the CSV file, linking nowhere
    html = page(inputs)
    assert html.count(note) == 2 and 'href="#not-reproduced' not in html


def test_the_scorecard_claims_experiments_and_audit_tables_become_cards_with_labelled_cells(inputs, tmp_path):
    html = page(inputs, audit=audit_inputs(tmp_path, [AUDIT_ROW]))
    assert '<table class="scorecard cards-when-narrow">' in html and '<table class="claims cards-when-narrow">' in html
    assert '<table id="T_experiments" class="cards-when-narrow">' in html
    audit = re.search(r'<table id="T_audit" class="cards">.*?</table>', html, re.S).group(0)
    header = re.findall(r'<th scope="col">([^<]*)</th>', audit)
    assert re.findall(r'data-label="([^"]*)"', audit) == header and header[:2] == ["name", "mechanism"]
    assert '<td class="card-title text" data-label="name">gaussian_step</td>' in audit
    # the scorecard's key columns first: item, status, the agreeing share and the largest deviation
    scorecard_header = re.search(r'<table class="scorecard.*?</thead>', html, re.S).group(0)
    assert re.findall(r"<th>([^<]*)</th>", scorecard_header)[:4] == ["item", "status", "values that agree",
                                                                       "largest deviation"]
    assert "@media (max-width: 1000px) {\ntable.cards-when-narrow, table.cards-when-narrow > tbody" in html


def test_without_a_scorecard_the_page_has_no_headline_and_claims_nothing_about_reproduction(inputs):
    html = page(inputs, scorecard=None)
    assert 'id="scorecard"' not in html and 'class="headline"' not in html
    assert "compares them with the published numbers" in html and "(the scorecard below)" not in html


def test_every_figure_links_its_png_and_pdf_relative_to_the_page(inputs):
    html = page(inputs)
    links = re.findall(r'<span class="figure-links">\(full size: <a href="([^"]+)">PNG</a>, <a href="([^"]+)">PDF</a>',
                       html)
    assert sorted(links) == sorted((f"../figures/{name}.png", f"../figures/{name}.pdf")
                                   for name in ("figure3", "errata_accounting", "errata_noscale"))
    page_dir = inputs["output"].parent
    assert all((page_dir / link).is_file() for pair in links for link in pair)


def test_report_links_follow_the_page_wherever_it_is_written(inputs, tmp_path):
    (tmp_path / "deeper/down").mkdir(parents=True)
    html = page({**inputs, "output": tmp_path / "deeper/down/page.html"})
    assert '<a href="../../figures/figure3.png">PNG</a>' in html


def test_figures_are_sized_to_their_print_size_from_the_png_resolution(inputs):
    html = page(inputs)
    # the three-panel figure: 15 inches at 150 dpi = 2250 px, shown at 15 CSS inches of 96 px
    figure3 = re.search(r'<figure class="figure-box" id="figure-figure3">.*?<img ([^>]*)>', html, re.S).group(1)
    assert 'width="2250"' in figure3 and 'style="--print-width: 1440px"' in figure3
    # matplotlib's default 100 dpi: a 2 x 1 inch figure is 200 px, 192 CSS px in print
    errata = re.search(r'<figure class="figure-box" id="figure-errata_accounting">.*?<img ([^>]*)>', html,
                       re.S).group(1)
    assert 'width="200" height="100"' in errata and 'style="--print-width: 192px"' in errata
    assert "min-width: calc(var(--print-width) * 0.75)" in html


def test_png_geometry_reads_the_size_and_resolution_and_rejects_other_files(tmp_path):
    figure = Figure(figsize=(3, 2))
    stream = io.BytesIO()
    figure.savefig(stream, format="png", dpi=120)
    width, height, dpi = report_html.png_geometry(stream.getvalue())
    # pHYs stores whole pixels per metre: 120 dpi is 4724 per metre, 119.99 dpi
    assert (width, height) == (360, 240) and dpi == pytest.approx(120, abs=0.02)
    # the same image without its pHYs chunk (length 9 + 12 bytes of header and CRC) records no resolution
    data = stream.getvalue()
    start = data.index(b"pHYs") - 4
    assert report_html.png_geometry(data[:start] + data[start + 21:]) == (360, 240, None)
    with pytest.raises(ValueError, match="figure x.pdf is not a PNG file"):
        report_html.png_geometry(b"%PDF-1.4 ...", name="figure x.pdf")


def test_report_rejects_a_figure_without_its_pdf(inputs):
    inputs["figures"][0].with_suffix(".pdf").unlink()
    with pytest.raises(ValueError, match=r"figure .*figure3\.png has no PDF beside it"):
        page(inputs)
    assert not inputs["output"].exists()


class OpenElements(HTMLParser):
    """For every <table> and <img> of a page: the open elements around it, as (tag, class)."""

    VOID = {"meta", "img", "br", "hr", "input", "link", "wbr"}

    def __init__(self, html):
        super().__init__()
        self.stack, self.found = [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag in ("table", "img"):
            self.found.append((tag, list(self.stack)))
        if tag not in self.VOID:
            self.stack.append((tag, dict(attrs).get("class", "")))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass


def test_every_table_and_figure_sits_in_a_horizontally_scrolling_box(inputs, tmp_path):
    table2 = tmp_path / "results/variance_study/table2.csv"
    table2.parent.mkdir(parents=True)
    pd.DataFrame({"method": ["direct-0.75"], "error": [0.12]}).to_csv(table2, index=False)
    html = page(inputs, tables=[table2], audit=audit_inputs(tmp_path, [AUDIT_ROW]),
                audit_power=power_inputs(tmp_path, power_rows()))
    found = OpenElements(html).found
    # scorecard, its compared values, claims, experiments, 2 fidelity, table 2, run times, 2 errata, noscale,
    # Figure 7(b), audit, the audit's power and its every row, provenance; 5 figures
    assert sorted(tag for tag, _ in found) == ["img"] * 5 + ["table"] * 16
    for tag, around in found:
        assert around[-1] == ("div", "scroll-box"), (tag, around)
    assert ".scroll-box { max-width: 100%; overflow-x: auto;" in html


def test_long_tables_are_folded_behind_a_summary_with_their_counts(inputs):
    html = page(inputs)
    folded = dict(re.findall(r'<details class="folded"><summary>([^<]*)</summary>\n<div class="scroll-box">\n'
                             r'<style type="text/css">[^<]*</style>\n<table id="T_(\w+)"', html))
    assert folded == {
        "2 settings; 1 of 2 targeted within the target, 1 outside (highlighted)": "fidelity_gaussian_A",
        "250 settings; 200 of 200 targeted within the target": "fidelity_binary_synthetic",
        "The 1 setting where exact accounting fails": "errata_fails",
        "Every setting: 1 setting, 1 failing under exact accounting (highlighted)": "errata_accounting",
        "Every setting: 1 setting": "errata_noscale",
        "Every compared value: 2 values; 2 agree": "scorecard_values",
    }
    # every row of the long table is inside its fold
    fold = re.search(r'<details class="folded"><summary>250 settings.*?</details>', html, re.S).group(0)
    assert fold.count("<tr>") == 251 and html.count("PLAN-binary-oracle") == fold.count("PLAN-binary-oracle") == 50


def test_folded_table_escapes_its_summary_and_keeps_the_table_whole():
    frame = pd.DataFrame({"mechanism": ["<b>PLAN</b>", "IOME"], "error": [0.5, 0.25]})
    html = str(report_html.folded_table(frame, name="t", summary="2 rows <of> 2", row_classes=["outside", ""]))
    assert html.startswith('<details class="folded"><summary>2 rows &lt;of&gt; 2</summary>\n<div class="scroll-box">')
    assert html.endswith("</table>\n</div>\n</details>\n")
    assert "&lt;b&gt;PLAN&lt;/b&gt;" in html and len(highlighted_rows(html, "outside")) == 1


def test_long_text_columns_wrap_at_a_minimum_width_and_short_ones_do_not_wrap(inputs, tmp_path):
    rows = [{**AUDIT_ROW, "pair": LONG_PAIR}, AUDIT_ROW]
    html = page(inputs, audit=audit_inputs(tmp_path, rows))
    table = re.search(r'<table id="T_audit".*?</table>', html, re.S).group(0)
    header = re.findall(r"<th [^>]*>([^<]*)</th>", table)
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        classes = dict(zip(header, re.findall(r'<td class="([^"]*)"', row)))
        assert [column for column, css in classes.items() if "long-text" in css.split()] == ["pair"]
    assert "td.text { white-space: nowrap; }\ntd.long-text { white-space: normal; min-width: 22em; }" in html


def test_report_loads_no_external_resources(inputs):
    html = page(inputs)
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<link" not in html and "<script" not in html


def test_report_states_the_fidelity_verdict(inputs):
    assert "Verdict: gaussian_A: 1 of 2 targeted ratios within 0.85..1.15" in page(inputs)


def highlighted_rows(html, css):
    """The table rows marked with the CSS class ``css``: pandas puts a row's class on each of its
    cells, so a row counts when every cell has it (and a row with only some is an error)."""
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        marked = [css in classes.split() for classes in re.findall(r'<td class="([^"]*)"', row)]
        assert all(marked) or not any(marked), row
        if marked and all(marked):
            rows.append(row)
    return rows


def test_report_highlights_targeted_fidelity_rows_outside_the_band(inputs):
    html = page(inputs)
    rows = highlighted_rows(html, "outside")
    assert len(rows) == 1 and "IOME" in rows[0]
    assert "td.outside" in html  # and the class is styled


def test_report_highlights_the_total_run_time_row_and_the_failing_errata_rows(inputs):
    html = page(inputs)
    totals = highlighted_rows(html, "total")
    assert len(totals) == 1 and ">total<" in totals[0]
    fails = highlighted_rows(html, "fails")
    assert len(fails) == 1 and "d=1024_rho=0.125" in fails[0]
    assert "td.total" in html and "td.fails" in html


def test_report_lists_the_provenance_fields(inputs):
    html = page(inputs)
    for field in ("git commit", "work tree", "numpy", "scipy", "pandas", "matplotlib", "snakemake", "pyyaml",
                  "jinja2", "python", "seed", "config sha256", "date (UTC)", "machine", "CPU count"):
        assert f'<th class="text">{field}</th>' in html, field
    assert config_hash(CONFIG) in html


def test_report_without_table2_has_no_tables_section(inputs):
    assert 'id="tables"' not in page(inputs, tables=[])


def test_report_renders_table2_with_its_caption_when_given(inputs, tmp_path):
    table2 = tmp_path / "results/variance_study/table2.csv"
    table2.parent.mkdir(parents=True)
    pd.DataFrame({"method": ["direct-0.75"], "error": [0.12]}).to_csv(table2, index=False)
    html = page(inputs, tables=[table2])
    assert "<caption>Table 2: average relative error" in html and "direct-0.75" in html


def test_report_errata_section_names_the_failing_settings_and_the_measured_true_rho(inputs):
    html = page(inputs)
    assert "1 of 1 settings fail under exact accounting: gaussian_A d=1024_rho=0.125 1.5 \u2192 120 (80\u00d7)" in html
    assert "a median of 3.77\u03c1" in html


def test_report_errata_section_compares_coordinate_median_with_the_published_noscale_curve(inputs):
    assert "coordinate_median / published curve: median 1.01" in page(inputs)


def test_report_without_the_noscale_figure_says_so(inputs):
    html = page(inputs, errata_figures=inputs["errata_figures"][:1], errata_noscale=None)
    assert "No fidelity experiment maps the published PLAN-noscale curve" in html


def benchmark_files(tmp_path):
    """The cell jobs' benchmark files of the report's inputs (tests/testkit/report_inputs.py)."""
    return sorted((tmp_path / "results/gaussian_A/benchmarks").glob("*.tsv"))


def test_run_times_sum_wall_and_cpu_seconds_per_experiment_and_in_total(inputs, tmp_path):
    table = run_times(benchmark_files(tmp_path)).set_index("experiment")
    assert table.loc["gaussian_A", "jobs"] == 2
    assert table.loc["gaussian_A", ["wall s (sum)", "CPU s (sum)", "peak max_rss MB"]].tolist() == [6.5, 3.25, 150.0]
    assert table.loc["gaussian_A", "longest job"] == "d=32_rho=0.5"
    assert table.loc["total", "longest job"] == "gaussian_A/d=32_rho=0.5"


def test_run_times_count_a_split_jobs_shards_under_its_experiment(inputs, tmp_path):
    shard = tmp_path / "results/gaussian_A/benchmarks/shards/d=64_rho=1/trials=0-24.tsv"
    shard.parent.mkdir(parents=True)
    shard.write_text("s\tmax_rss\tcpu_time\n9.5\t200\t9.0\n")
    table = run_times([*benchmark_files(tmp_path), shard]).set_index("experiment")
    assert table.loc["gaussian_A", "jobs"] == 3 and "shards" not in table.index
    assert table.loc["gaussian_A", "longest job"] == "d=64_rho=1/trials=0-24"
    assert table.loc["gaussian_A", "wall s (sum)"] == 16.0


def test_config_hash_does_not_depend_on_key_order():
    assert config_hash({"a": 1, "b": {"c": 2, "d": 3}}) == config_hash({"b": {"d": 3, "c": 2}, "a": 1})


def test_git_state_without_git_reports_unknown(monkeypatch):
    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert git_state()[0] == "unknown"


def test_git_state_is_clean_when_only_generated_outputs_changed_and_dirty_when_code_did(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    for name in ("results/summary.csv", "figures/figure3.png", "mechanisms/plan.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("committed\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    (tmp_path / "results" / "summary.csv").unlink()  # as Snakemake does before rerunning a job
    (tmp_path / "figures" / "figure3.png").write_text("redrawn\n")
    commit, state = git_state(tmp_path)
    assert len(commit) == 40 and state == "clean"
    (tmp_path / "mechanisms" / "plan.py").write_text("changed\n")
    assert git_state(tmp_path)[1] == "dirty (uncommitted changes)"


def test_report_without_git_still_renders(inputs, monkeypatch):
    monkeypatch.setattr(provenance_module, "git_state", lambda: ("unknown", "no git information"))
    assert "no git information" in page(inputs)


def test_report_job_leaves_only_the_report_in_its_directory(inputs):
    page(inputs)
    assert [path.name for path in inputs["output"].parent.iterdir() if path.is_file()] == ["report.html"]


def test_report_escapes_names_and_captions_from_the_inputs(inputs, tmp_path):
    script = "<script>alert(1)</script>"
    summary = pd.read_csv(inputs["summaries"][0])
    summary.loc[0, "mechanism"] = script
    summary.to_csv(inputs["summaries"][0], index=False)
    fidelity = pd.read_csv(inputs["fidelity"][0])
    fidelity.loc[0, "mechanism"] = script
    fidelity.to_csv(inputs["fidelity"][0], index=False)
    table2 = tmp_path / "results/variance_study/table2.csv"
    table2.parent.mkdir(parents=True)
    pd.DataFrame({script: ["direct-0.75"], "error": [0.12]}).to_csv(table2, index=False)
    table2.with_suffix(".caption.txt").write_text(f"Table 2 {script}")
    config = {**CONFIG, "figures": {"figure3": {"title": f"Figure 3 {script}", "panels": []}}}
    html = page(inputs, config=config, tables=[table2],
                not_reproduced=[{"dataset": script, "reason": script, "how_to_supply": script}])
    assert "<script" not in html
    # experiments and fidelity tables, the table2 header and caption, the figure title, not_reproduced
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8


NOT_REPRODUCED = [{"dataset": "Kosarak", "reason": "datasets/raw/kosarak.dat is missing",
                   "how_to_supply": "download kosarak.dat from the FIMI repository into datasets/raw/",
                   "url": "http://fimi.example/kosarak.dat.gz",
                   "experiments": ["kosarak_real"], "figures": ["figure3", "figure2"]}]


def test_report_lists_the_data_sets_not_reproduced_before_the_figures(inputs):
    html = page(inputs, not_reproduced=NOT_REPRODUCED)
    section = re.search(r'<h2 id="not-reproduced">Not reproduced</h2>(.*?)<h2', html, re.S).group(1)
    for text in ("Kosarak", "datasets/raw/kosarak.dat is missing",
                 "download kosarak.dat from the FIMI repository into datasets/raw/", "kosarak_real",
                 "Figure 3: l2 error on synthetic Gaussian data (figure3)", "http://fimi.example/kosarak.dat.gz",
                 "Figure 2: per-item variances of the real datasets"):
        assert text in section, text
    assert html.index("<h1>") < html.index('id="not-reproduced"') < html.index('id="figures"')
    assert '<a href="#not-reproduced">' in re.search(r"<nav>(.*?)</nav>", html, re.S).group(1)
    assert "1 data sets not reproduced" in inputs["log"].read_text()


@pytest.mark.parametrize("not_reproduced", [None, []])
def test_report_without_missing_data_sets_has_no_not_reproduced_section(inputs, not_reproduced):
    html = page(inputs, not_reproduced=not_reproduced)
    assert "not-reproduced" not in html and "Not reproduced" not in html


def test_report_rejects_a_not_reproduced_entry_without_its_reason(inputs):
    with pytest.raises(ValueError, match="reason"):
        page(inputs, not_reproduced=[{"dataset": "Kosarak", "how_to_supply": "download it"}])


def test_report_renders_the_same_page_twice(inputs, monkeypatch):
    # pandas would give each table a random id; the page only changes when its inputs do
    monkeypatch.setattr(report_page, "provenance", lambda config: {"seed": config.get("seed")})
    assert page(inputs) == page(inputs)


ROOT = Path(__file__).resolve().parents[2]


def test_report_template_is_found_from_another_working_directory(tmp_path):
    code = "from experiments.outputs.report.page import render_report; print(render_report(config={}))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert '<h2 id="provenance">Provenance</h2>' in done.stdout


def test_report_template_ships_as_package_data():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    templates = [path.relative_to(ROOT / "experiments/outputs/report").as_posix()
                 for path in (ROOT / "experiments/outputs/report/templates").iterdir()]
    assert report_page.TEMPLATE in [Path(name).name for name in templates]
    for name in templates:
        assert any(fnmatch(name, pattern) for pattern in package_data["experiments.outputs.report"]), name


def userlevel_summary(path, experiment, means):
    """A user-level summary: mean errors per mechanism at eps 0.25, 1, 4."""
    rows = [{"experiment": experiment, "mechanism": mechanism, "eps": eps, "trials": 10000, "mean": mean, "se": 0.01,
             "median": mean, "q25": mean, "q75": mean, "std": 1.0}
            for mechanism, values in means.items() for eps, mean in zip((0.25, 1.0, 4.0), values)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_the_user_level_section_describes_the_mechanisms_and_states_what_each_experiment_found(inputs, tmp_path):
    config = {**CONFIG, "variants": {"OPT-wc": {"algorithm": "opt_worst_case"}, "AKMV": {"algorithm": "akmv"}},
              "experiments": {**CONFIG["experiments"],
                              "ul_paper": {"data": {"source": "userlevel", "collection": "geometric", "M": 2},
                                           "grid": {"eps": [0.25, 1, 4]}},
                              "ul_simplex": {"data": {"source": "userlevel", "collection": "geometric", "M": 2, "d": 3},
                                             "grid": {"eps": {"logspace": [0.25, 4, 3]}}}}}
    means = {"laplace": (40.0, 10.0, 2.5), "OPT-wc": (4.0, 2.0, 2.5), "AKMV": (40.0, 11.0, 3.0)}
    summaries = [userlevel_summary(tmp_path / "a.csv", "ul_paper", means),
                 userlevel_summary(tmp_path / "b.csv", "ul_simplex", means)]
    html = page(inputs, config=config, summaries=[*inputs["summaries"], *summaries])
    section = re.search(r'<h2 id="userlevel">(.*?)<h2', html, re.S).group(1)
    assert '<a href="#userlevel">' in html
    for text in ("<b>laplace</b>", "<b>OPT-wc</b>: worst-case optimal clipping", "<b>AKMV</b>: Amin et al. 2019"):
        assert text in section, text
    # M = 2: one user with the largest count, so OPT-wc clips nothing from eps = 2 (d = 1), 6 (d = 3)
    paper = re.search(r"<b>ul_paper</b>(.*?)</p>", section, re.S).group(1)
    assert "beyond the paper" not in paper
    assert "For eps &lt; 2 OPT-wc&#39;s mean error is 5 to 10 times smaller" in paper
    assert "the ratio is 1 to 1." in paper and "AKMV / Laplace is 1 to 1 for eps &lt; 0.5 and 1.1 to 1.2" in paper
    simplex = re.search(r"<b>ul_simplex</b>(.*?)</p>", section, re.S).group(1)
    assert "(goes beyond the paper)" in simplex and "For eps &lt; 6 OPT-wc&#39;s mean error is 1 to 10" in simplex


def test_no_user_level_section_without_user_level_experiments(inputs):
    html = page(inputs)
    assert 'id="userlevel"' not in html and '<a href="#userlevel">' not in html


def test_the_audit_section_explains_the_method_and_states_the_outcome(inputs, tmp_path):
    rows = [AUDIT_ROW, {**AUDIT_ROW, "name": "empirical_mean", "accounting": "none", "measure": "eps-DP",
                        "lower_bound": 9.1, "violation": True, "expected_violation": True}]
    html = page(inputs, audit=audit_inputs(tmp_path, rows))
    section = re.search(r'<h2 id="audit">(.*?)<h2', html, re.S).group(1)
    assert "Clopper-Pearson" in section and "positive control" in section and "in its own" in section
    assert "2 audits, each with its positive control. Every positive control was flagged" in section
    assert "No mechanism under exact accounting was flagged (1 audits)." in section
    assert "Violations found: empirical_mean (claims eps 1, at least 9.1)." in section
    assert "Every outcome is the one stated before running." in section and 'class="verdict met"' in section
    assert '<a href="#audit">' in html


def test_an_audit_whose_control_is_not_flagged_or_an_exact_mechanism_flagged_fails_the_section(inputs, tmp_path):
    rows = [{**AUDIT_ROW, "control_violation": False},
            {**AUDIT_ROW, "name": "iome", "lower_bound": 1.7, "violation": True}]
    html = page(inputs, audit=audit_inputs(tmp_path, rows))
    section = re.search(r'<h2 id="audit">(.*?)<h2', html, re.S).group(1)
    assert "NOT every control was flagged (no power, so these audits count as failed): gaussian_step." in section
    assert "Flagged under exact accounting: iome." in section and "Outcomes other than expected: iome." in section
    assert 'class="verdict not-met"' in section


def test_the_audit_power_section_explains_the_curves_and_states_the_false_alarms_and_what_each_break_needs(
        inputs, tmp_path):
    html = page(inputs, audit=audit_inputs(tmp_path, [AUDIT_ROW]), audit_power=power_inputs(tmp_path, power_rows()))
    section = re.search(r'<h2 id="audit-power">(.*?)<h2', html, re.S).group(1)
    assert "what an audit that finds nothing rules out" in section and "Clopper-Pearson" in section
    assert "audited\n100 times with independent seeds" in section
    assert ("False alarms (break 1, the correct mechanism): none of 600 audits flagged, within the limit 0.05 = "
            "1 - confidence (95 % upper bound of each share 0.036 or less).") in section
    assert ("Flagged in at least 90 % of the audits: gaussian_step (claim rho 0.25): x1.5 from 10^6 runs, x4 from "
            "10^3 runs; userlevel_laplace (claim eps 1): ") in section
    assert 'class="verdict met"' in section
    # one row per mechanism and break, one column per number of runs: the share and its interval
    table = re.search(r'<table id="T_audit_power">.*?</table>', section, re.S).group(0)
    header = re.findall(r"<th [^>]*>([^<]*)</th>", table)
    assert header == ["mechanism", "claim", "break", "audits", "10^3 runs", "10^6 runs"]
    assert table.count("<tr>") == 1 + 9 and "0.40 (0.30\u20130.50)" in table
    assert "<summary>Every row of power_curves.csv: 18 rows, with the flagged counts" in section
    assert 'id="figure-audit_power"' in section
    assert '<a href="#audit-power">' in re.search(r"<nav>(.*?)</nav>", html, re.S).group(1)
    assert html.index('id="audit"') < html.index('id="audit-power"') < html.index('id="provenance"')


def test_false_alarms_above_the_limit_fail_the_power_section_and_mark_the_break_one_rows(inputs, tmp_path):
    html = page(inputs, audit_power=power_inputs(tmp_path, power_rows(false_alarms=9)))
    section = re.search(r'<h2 id="audit-power">(.*?)<h2', html, re.S).group(1)
    assert ("False alarms (break 1, the correct mechanism): 27 of 600 audits flagged; the largest share, 0.09 "
            "(gaussian_step at 10^6 runs, 95 % interval 0.04 to 0.16), is ABOVE the limit 0.05") in section
    assert 'class="verdict not-met"' in section
    rows = highlighted_rows(section, "fails")
    assert len(rows) == 3 and all("<td class=\"data row" in row for row in rows)


def test_no_power_section_without_power_curves(inputs):
    html = page(inputs)
    assert 'id="audit-power"' not in html and '<a href="#audit-power">' not in html


def test_report_shows_the_run_time_table_of_results_run_times_csv(inputs):
    html = page(inputs)
    section = html[html.index('<h2 id="runtimes">'):html.index('<h2 id="errata">')]
    # the longest job, per experiment and in total
    assert "d=32_rho=0.5" in section and "gaussian_A/d=32_rho=0.5" in section


def test_report_without_jobs_in_its_run_time_table_says_no_benchmark_files(inputs, tmp_path):
    empty = tmp_path / "no_run_times.csv"
    run_times([]).to_csv(empty, index=False)
    html = page(inputs, run_times=empty)
    section = html[html.index('<h2 id="runtimes">'):html.index('<h2 id="errata">')]
    assert "No benchmark files." in section and "<table" not in section


def test_run_times_job_writes_the_table_the_report_reads(tmp_path):
    from experiments.jobs.results import run_times_job

    inputs = write_inputs(tmp_path)
    out = tmp_path / "out/run_times.csv"
    run_times_job(benchmarks=benchmark_files(tmp_path), output=out, log=tmp_path / "run_times.log")
    pd.testing.assert_frame_equal(pd.read_csv(out), pd.read_csv(inputs["run_times"]), check_dtype=False)
    assert "2 benchmark files, 1 experiments" in (tmp_path / "run_times.log").read_text()
