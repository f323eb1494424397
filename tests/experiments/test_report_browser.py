"""The report page (experiments/outputs/report/) in a real browser: Debian's Chromium (/usr/bin/chromium),
headless, driven by Playwright (Playwright's own browser download needs the internet and is not
used). At 800 and 1400 px wide: the page never scrolls sideways and nothing sticks out past its
right edge except inside a horizontally scrolling box, every image has loaded, every link
resolves, the scorecard's key columns are in view without scrolling, the audit table is no wider
than the page (its rows are cards), every figure fits the page and, with its "readable size"
ticked, is shown where its text is readable, long text columns are not squeezed, and a "not run
here" row names what is missing in a few words with a working link to the sources tried. Two
pages: one rendered here from tests/testkit/report_inputs.py (long fidelity tables, a three-panel
figure, an audit with long texts, the audit's power curves, a data set not obtained) and the smoke
run's (the session's one run of the workflow, tests/conftest.py). A full-page screenshot of
each lands in the test's temporary directory (printed when a check fails).

Under CI (CI=true) these tests never skip: without Chromium or Playwright they fail and say
which is missing. Elsewhere they skip when /usr/bin/chromium is absent."""
import importlib.util
import os
import re
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

from experiments.jobs.results import report_job
from experiments.outputs.report.page import MIN_FIGURE_SCALE
from testkit.report_inputs import AUDIT_ROW, LONG_PAIR, audit_inputs, power_inputs, power_rows, write_inputs

CHROMIUM = Path("/usr/bin/chromium")
# As root in a container: no sandbox, no GPU, nothing fetched from the network in the background.
# Playwright gives the browser a fresh empty profile (--user-data-dir) of its own.
LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTHS = (800, 1400)
HEIGHT = 900
# matplotlib's default font size, and the smallest CSS px at which figure text counts as readable.
DEFAULT_FONT_PT = 10
READABLE_PX = 10
LONG_TEXT_CHARS = 40  # a cell with longer text must not be squeezed to a narrow column
MIN_LONG_TEXT_EM = 20

KEY_SCORECARD_COLUMNS = ["item", "status", "values that agree", "largest deviation"]
NOT_RUN_HERE_CHARS = 160  # a "not run here" row's note: a few words, not the download errors

# Runs in the page: what the checks need, for the page as loaded and again with every <details>
# opened (a folded table has no box until it is opened) and every figure's "readable size" ticked.
MEASURE = """({openDetails, longText, keyColumns}) => {
  if (openDetails) {
    document.querySelectorAll('details').forEach(d => { d.open = true; });
    document.querySelectorAll('input.readable-size').forEach(box => { box.checked = true; });
  }
  const root = document.documentElement, right = root.clientWidth + 0.5;
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const describe = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
    + ' "' + (e.textContent || e.alt || '').trim().slice(0, 40) + '"';
  const sticking_out = [];
  for (const element of document.body.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    if (box.right <= right) continue;
    let ancestor = element.parentElement, contained = false;
    while (ancestor && ancestor !== document.body) {
      if (scrolls(ancestor) && ancestor.getBoundingClientRect().right <= right) { contained = true; break; }
      ancestor = ancestor.parentElement;
    }
    if (!contained) sticking_out.push(describe(element) + ' right edge ' + Math.round(box.right));
  }
  const images = [...document.images].map(image => ({
    alt: image.alt, complete: image.complete, natural_width: image.naturalWidth,
    shown_width: image.getBoundingClientRect().width - image.clientLeft * 2,
    outer_width: image.getBoundingClientRect().width, box_width: image.parentElement.clientWidth,
    print_width: parseFloat(getComputedStyle(image).getPropertyValue('--print-width')) || null}));
  const long_cells = [...document.querySelectorAll('td')]
    .filter(cell => cell.textContent.trim().length > longText)
    .map(cell => ({text: cell.textContent.trim().slice(0, 40), width: cell.getBoundingClientRect().width,
                   em: parseFloat(getComputedStyle(cell).fontSize)}));
  const edges = cell => ({label: cell.dataset.label, left: cell.getBoundingClientRect().left,
                          right: cell.getBoundingClientRect().right});
  const key_cells = [...document.querySelectorAll('table.scorecard td')]
    .filter(cell => keyColumns.includes(cell.dataset.label)).map(edges);
  const tables = Object.fromEntries([...document.querySelectorAll('table[id]')].map(table => [table.id,
    {width: table.getBoundingClientRect().width, box_width: table.parentElement.clientWidth}]));
  const not_run_here = [...document.querySelectorAll('table.scorecard tr, table.claims tr')]
    .filter(row => [...row.querySelectorAll('td[data-label="status"], td[data-label="verdict"]')]
      .some(cell => cell.textContent.trim() === 'not run here'))
    .map(row => row.querySelector('td[data-label="note"], td[data-label="this run"]'))
    .map(cell => ({text: cell.textContent.trim(),
                   links: [...cell.querySelectorAll('a')].map(a => a.getAttribute('href'))}));
  return {scroll_width: root.scrollWidth, client_width: root.clientWidth, height: root.scrollHeight,
          sticking_out, images, long_cells, key_cells, tables, not_run_here,
          scorecard_rows: document.querySelectorAll('table.scorecard tbody tr').length,
          missing_ids: [...document.querySelectorAll('.missing [id]')].map(e => e.id),
          links: [...document.querySelectorAll('[href]')].map(e => e.getAttribute('href')),
          ids: [...document.querySelectorAll('[id]')].map(e => e.id)};
}"""


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing_browser() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the Python package playwright is not installed (pip install -r requirements.txt)"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (Debian: apt-get install -y chromium; .ci/run installs it)"
    return None


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the whole module."""
    reason = missing_browser()
    if reason:
        if in_ci():
            pytest.fail(f"the report's browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def rendered_report(tmp_path_factory):
    """A report rendered from realistic inputs: the long fidelity tables and the three-panel
    figure of tests/testkit/report_inputs.py, Table 2, an audit with long texts, the audit's power curves, a data
    set not reproduced."""
    root = tmp_path_factory.mktemp("rendered")
    inputs = write_inputs(root)
    table2 = root / "results/variance_study/table2.csv"
    table2.parent.mkdir(parents=True)
    pd.DataFrame({"method": ["direct-0.75", "pairs-0.75"], "error": [0.12, 0.31]}).to_csv(table2, index=False)
    audit = [{**AUDIT_ROW, "name": f"audit_{index}", "pair": LONG_PAIR,
              "mechanism": "coordinate_median(accounting='published'): median of the stack (x+0.1, x, x-0.1), rho/3"}
             for index in range(12)]
    missing = [{"dataset": "kosarak", "reason": "could not connect (Name or service not known) (after 4 attempts)",
                "how_to_supply": "put it at datasets/raw/kosarak.dat.gz (or any path and set datasets.kosarak.path "
                                 "in the config), or set datasets.kosarak.url to a mirror",
                "url": "http://fimi.uantwerpen.be/data/kosarak.dat.gz", "experiments": ["kosarak"],
                "figures": ["figure5_real", "figure2"]}]
    report_job(**inputs, tables=[table2], audit=audit_inputs(root, audit),
               audit_power=power_inputs(root, power_rows()), not_reproduced=missing)
    return inputs["output"]


@pytest.fixture(scope="module", params=["rendered", "smoke run"])
def report_page(request):
    """The page under test; the smoke run's only when a test asks for it (it runs the workflow)."""
    if request.param == "rendered":
        return request.getfixturevalue("rendered_report")
    return request.getfixturevalue("smoke_run") / "results" / "report.html"


@pytest.fixture(scope="module")
def measured(browser, tmp_path_factory):
    """``measured(page, width)``: the page's measurements at that viewport width, as loaded and
    with every <details> open, and its full-page screenshot; each page and width loaded once."""
    cache = {}
    screenshots = tmp_path_factory.mktemp("screenshots")

    def measure(page_path: Path, width: int) -> dict:
        if (page_path, width) not in cache:
            page = browser.new_page(viewport={"width": width, "height": HEIGHT})
            try:
                page.goto(page_path.resolve().as_uri(), wait_until="load")
                screenshot = screenshots / f"{page_path.parent.parent.name}_{width}.png"
                page.screenshot(path=screenshot, full_page=True)
                cache[page_path, width] = {
                    state: page.evaluate(MEASURE, {"openDetails": state == "open", "longText": LONG_TEXT_CHARS,
                                                   "keyColumns": KEY_SCORECARD_COLUMNS})
                    for state in ("folded", "open")} | {"screenshot": screenshot}
            finally:
                page.close()
        return cache[page_path, width]

    return measure


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_never_scrolls_sideways_and_nothing_sticks_out_but_inside_a_scrolling_box(report_page, measured,
                                                                                          width):
    result = measured(report_page, width)
    for state in ("folded", "open"):
        page = result[state]
        assert page["client_width"] == width, page["client_width"]
        assert page["scroll_width"] <= page["client_width"], (state, page["scroll_width"], result["screenshot"])
        assert page["sticking_out"] == [], (state, page["sticking_out"][:10], result["screenshot"])


@pytest.mark.parametrize("width", WIDTHS)
def test_every_image_has_loaded(report_page, measured, width):
    images = measured(report_page, width)["open"]["images"]
    assert images
    assert [image["alt"] for image in images if not (image["complete"] and image["natural_width"] > 0)] == []


def test_every_link_resolves_to_an_anchor_or_a_file_beside_the_page(report_page, measured):
    page = measured(report_page, WIDTHS[0])["folded"]
    ids = set(page["ids"])
    assert len(ids) == len(page["ids"]), "duplicate ids"
    base = report_page.resolve().as_uri()
    files = []
    for href in page["links"]:
        if href.startswith("#"):
            assert href[1:] in ids, f"link {href}: no element has id {href[1:]!r}"
            continue
        target = urllib.parse.urlparse(urllib.parse.urljoin(base, href))
        assert target.scheme == "file", f"link {href} leaves the page's files"
        path = Path(urllib.parse.unquote(target.path))
        assert path.is_file(), f"link {href}: {path} does not exist"
        files.append(path)
    # the navigation and every figure's PNG and PDF are among them
    assert sum(href.startswith("#") for href in page["links"]) >= 5
    figures = {path.stem for path in files if path.suffix == ".png"}
    assert figures and figures == {path.stem for path in files if path.suffix == ".pdf"}
    assert len(figures) == len(page["images"])


@pytest.mark.parametrize("width", WIDTHS)
def test_figures_are_shown_where_their_text_is_readable(report_page, measured, width):
    # matplotlib's 10 pt text is 10 / 72 * dpi PNG px; the page shows it at that times the display scale
    for image in measured(report_page, width)["open"]["images"]:
        dpi = 96 * image["natural_width"] / image["print_width"]
        scale = image["shown_width"] / image["natural_width"]
        text_px = DEFAULT_FONT_PT / 72 * dpi * scale
        assert scale >= MIN_FIGURE_SCALE * 96 / dpi - 0.01, image
        assert text_px >= READABLE_PX - 0.1, (image["alt"], round(text_px, 2))


@pytest.mark.parametrize("width", WIDTHS)
def test_every_figure_fits_the_page_as_loaded(report_page, measured, width):
    images = measured(report_page, width)["folded"]["images"]
    assert images
    for image in images:
        assert image["outer_width"] <= image["box_width"] + 0.5, image["alt"]  # no sideways scrolling in its box
        assert image["shown_width"] <= image["print_width"] + 0.5, image["alt"]  # never enlarged
        # at its print size, or as wide as the page lets it be
        assert image["shown_width"] >= image["print_width"] - 0.5 or image["outer_width"] >= image["box_width"] - 0.5


@pytest.mark.parametrize("width", WIDTHS)
def test_the_scorecard_key_columns_are_in_view_without_scrolling_sideways(report_page, measured, width):
    page = measured(report_page, width)["folded"]
    cells = page["key_cells"]
    assert page["scorecard_rows"] > 0
    # every row has each key column, and each lies inside the viewport as the page loads
    assert sorted(cell["label"] for cell in cells) == sorted(KEY_SCORECARD_COLUMNS * page["scorecard_rows"])
    outside = [cell for cell in cells if cell["left"] < 0 or cell["right"] > page["client_width"] + 0.5]
    assert outside == [], (outside[:4], measured(report_page, width)["screenshot"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_audit_table_is_no_wider_than_the_page(rendered_report, measured, width):
    page = measured(rendered_report, width)["open"]
    audit = page["tables"]["T_audit"]
    assert audit["width"] <= min(audit["box_width"], page["client_width"]) + 0.5, audit


def test_not_run_here_rows_are_short_and_link_the_sources_tried(report_page, measured):
    page = measured(report_page, WIDTHS[0])["folded"]
    for row in page["not_run_here"]:
        assert len(row["text"]) <= NOT_RUN_HERE_CHARS, row["text"]
        if "not obtained" in row["text"].lower() and page["missing_ids"]:
            assert row["links"] and all(link[1:] in page["missing_ids"] for link in row["links"]), row


def test_the_rendered_page_says_the_download_errors_once_and_its_not_run_here_links_lead_there(rendered_report,
                                                                                               measured, browser):
    page = measured(rendered_report, WIDTHS[0])["folded"]
    # the scorecard's Figure 5 (b), (c) and the claim on it, each linking kosarak's entry
    assert [row["links"] for row in page["not_run_here"]] == [["#not-reproduced-kosarak"]] * 2
    assert rendered_report.read_text().count("could not connect (Name or service not known)") == 1
    tab = browser.new_page(viewport={"width": WIDTHS[0], "height": HEIGHT})
    try:
        tab.goto(rendered_report.resolve().as_uri(), wait_until="load")
        tab.click('table.scorecard a[href="#not-reproduced-kosarak"]')
        tab.wait_for_function("location.hash === '#not-reproduced-kosarak'")
        # the entry is in view below the sticky navigation bar, inside the "Not reproduced" section
        seen = tab.evaluate("""() => { const entry = document.getElementById('not-reproduced-kosarak');
            return {top: entry.getBoundingClientRect().top, section: entry.closest('.missing') !== null,
                    nav: document.querySelector('nav').getBoundingClientRect().bottom}; }""")
    finally:
        tab.close()
    assert seen["section"] and seen["nav"] <= seen["top"] < HEIGHT, seen


@pytest.mark.parametrize("width", WIDTHS)
def test_long_text_columns_are_not_squeezed_to_a_word_per_line(report_page, measured, width):
    cells = measured(report_page, width)["open"]["long_cells"]
    narrow = [(cell["text"], round(cell["width"])) for cell in cells if cell["width"] < MIN_LONG_TEXT_EM * cell["em"]]
    assert narrow == []


def test_the_rendered_page_has_the_long_tables_folded_and_the_wide_figure_in_a_scroll_box(rendered_report, measured):
    narrow = measured(rendered_report, 800)
    # folded: the 250-row table adds its height only when opened
    assert narrow["open"]["height"] > narrow["folded"]["height"] + 250 * 15
    assert len(narrow["open"]["long_cells"]) >= 24  # the audit's pairs and mechanisms
    # the three-panel figure is wider than the page at 800 px (and scrolls inside its box)
    figure = next(image for image in narrow["open"]["images"] if image["natural_width"] == 2250)
    assert figure["shown_width"] > narrow["open"]["client_width"]
    assert re.search(r'class="scroll-box"><img alt="Figure 3', rendered_report.read_text())
