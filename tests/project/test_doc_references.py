"""Every reference into docs/ resolves, and nothing refers to the team's brief or its folder.

The grammar is stated at the top of docs/design.md: ``docs/<page>.md §N`` names the section of
the page whose heading starts with the number N; more sections follow as ``, §M``; ``§N-M`` is a
range; a ``§N`` without a page belongs to the last ``docs/<page>.md`` named before it in the same
paragraph (text between blank lines; inside docs/, to the page itself when none is named).
Links ``docs/<page>.md`` and ``docs/<page>.md#anchor``, and relative Markdown links to ``.md``
files, must name an existing page and, after ``#``, one of its headings (GitHub's anchor rules)
or an HTML ``id``. Every git-tracked text file is scanned except the generated results/ and
figures/. In this file the section sign is written as an escape, so that its examples are not
references themselves.
"""
from __future__ import annotations

import posixpath
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GENERATED = ("results/", "figures/")
SIGN = "\u00a7"  # the section sign
# Assembled, so that this file does not mention them itself.
FORBIDDEN = ("DESIGN" + ".md", "../" + "shared", "/work/" + "shared")

PAGE = re.compile(r"(?<![\w./-])(docs/[\w.-]+?\.md)(?![\w-])(?:#([\w-]+))?")
SECTION = re.compile(SIGN + r"(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?")
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HEADING_NUMBER = re.compile(r"(\d+(?:\.\d+)*)\.?(?:\s|$)")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""")
COMMENT_LEADER = re.compile(r'^(?:#+|//|\*|>|"""|\'\'\')')
DESIGN_SECTIONS = [str(n) for n in range(1, 5)] + ["5"] + [f"5.{i}" for i in range(14)] + ["6", "6.1", "6.2", "6.3"] + [
    str(n) for n in range(7, 12)]


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its rendered text lower-cased, every character that is
    not a letter, digit, space, hyphen or underscore removed, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def outside_code_blocks(text: str):
    """(line number, line) of the lines of a Markdown text that are not in a fenced code block."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield number, line


@dataclass(frozen=True)
class Page:
    """What references can point at in a Markdown page: its numbered headings, in order, and its anchors."""

    numbers: tuple[str, ...]
    anchors: frozenset[str]


def parse_page(text: str) -> Page:
    numbers, anchors, seen = [], set(), {}
    for _, line in outside_code_blocks(text):
        heading = HEADING.match(line)
        if heading is None:
            anchors.update(HTML_ID.findall(line))
            continue
        title = heading.group(1)
        number = HEADING_NUMBER.match(title)
        if number is not None:
            numbers.append(number.group(1))
        anchor = github_anchor(title)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return Page(tuple(numbers), frozenset(anchors))


def paragraph_break(line: str) -> bool:
    """A blank line, also inside a comment or a docstring, ends a paragraph."""
    return not COMMENT_LEADER.sub("", line.strip()).strip()


class References:
    """Checks the references of text files against the pages ``read(path)`` returns (the text of
    a repository-relative path, or None where there is no such file)."""

    def __init__(self, read):
        self._read = read
        self._pages: dict[str, Page | None] = {}

    def page(self, path: str) -> Page | None:
        if path not in self._pages:
            text = self._read(path)
            self._pages[path] = None if text is None else parse_page(text)
        return self._pages[path]

    def problems(self, name: str, text: str) -> list[str]:
        """One "file:line: what" per dangling reference of ``text``, the file ``name``."""
        own_page = name if name.startswith("docs/") and name.endswith(".md") else None
        markdown = name.endswith(".md")
        problems = []
        current = own_page
        for number, line in enumerate(text.splitlines(), 1):
            if paragraph_break(line) or (markdown and HEADING.match(line)):
                current = own_page
            tokens = sorted([(m.start(), "page", m) for m in PAGE.finditer(line)]
                            + [(m.start(), "section", m) for m in SECTION.finditer(line)], key=lambda t: t[0])
            for _, kind, match in tokens:
                where = f"{name}:{number}"
                if kind == "page":
                    current = match.group(1)
                    problems += self._link(where, current, match.group(2))
                elif current is None:
                    problems.append(f"{where}: {match.group(0)} has no docs/<page>.md before it in its paragraph")
                else:
                    problems += self._sections(where, current, match.group(1), match.group(2))
            if markdown and HEADING.match(line):
                current = own_page
        if markdown:
            problems += self._markdown_links(name, text)
        return list(dict.fromkeys(problems))  # a page named twice on a line is reported once

    def _link(self, where, path, anchor):
        page = self.page(path)
        if page is None:
            return [f"{where}: page {path} does not exist"]
        if anchor is not None and anchor not in page.anchors:
            return [f"{where}: {path} has no anchor #{anchor}"]
        return []

    def _sections(self, where, path, first, last):
        page = self.page(path)
        if page is None:  # reported where the page is named
            return []
        missing = [n for n in (first, last) if n is not None and n not in page.numbers]
        if missing:
            return [f"{where}: {path} has no section {SIGN}{n}" for n in missing]
        if last is not None and page.numbers.index(first) >= page.numbers.index(last):
            return [f"{where}: the range {SIGN}{first}-{last} of {path} does not run forwards"]
        return []

    def _markdown_links(self, name, text):
        problems = []
        for number, line in outside_code_blocks(text):
            for target in MARKDOWN_LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                    continue  # a URL, mailto: or an absolute path
                path, _, anchor = target.partition("#")
                if path and not path.endswith(".md"):
                    continue
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), path)) if path else name
                problems += self._link(f"{name}:{number}", resolved, anchor or None)
        return problems


def forbidden_mentions(name: str, text: str) -> list[str]:
    return [f"{name}:{number}: mentions {word!r}: {line.strip()}"
            for number, line in enumerate(text.splitlines(), 1) for word in FORBIDDEN if word in line]


def tracked_text_files() -> dict[str, str]:
    """Repository-relative path -> text of every tracked text file outside results/ and figures/."""
    listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], check=True, capture_output=True).stdout
    files = {}
    for name in listing.decode().split("\0"):
        path = REPO / name
        if not name or name.startswith(GENERATED) or not path.is_file():
            continue
        raw = path.read_bytes()
        if b"\0" in raw:
            continue
        try:
            files[name] = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return files


@pytest.fixture(scope="module")
def repository():
    return tracked_text_files()


# ---------------------------------------------------------------- the repository


def test_no_tracked_file_mentions_the_brief_or_its_folder(repository):
    problems = [problem for name, text in repository.items() for problem in forbidden_mentions(name, text)]
    assert not problems, "\n".join(problems)


def test_every_reference_into_docs_resolves(repository):
    references = References(repository.get)
    problems = [problem for name, text in sorted(repository.items()) for problem in references.problems(name, text)]
    assert not problems, "dangling references:\n" + "\n".join(problems)


def test_the_design_page_has_the_numbered_sections_the_code_cites(repository):
    assert parse_page(repository["docs/design.md"]).numbers == tuple(DESIGN_SECTIONS)


# ---------------------------------------------------------------- the checker on small texts

DESIGN_TEXT = "\n".join([
    "# Design", "", "## 1. Scope", "", "## 5. Algorithms", "", "### 5.1 Quantiles", "",
    "### 5.2 PLAN, Gaussian instantiation (p = 2)", "", "```", "# 7. not a heading", "```", "",
    '<a id="kept-anchor"></a>', "## Notes", "## Notes",
])
DOCS = "docs" + "/"  # page paths in this file are assembled too: OTHER is not a page of the repository
OTHER, GONE = DOCS + "other.md", DOCS + "gone.md"
PAGES = {DOCS + "design.md": DESIGN_TEXT, "README.md": "# Read me\n\n## Setting up\n"}


def check(name, text, pages=PAGES):
    return References(pages.get).problems(name, text)


def ref(*parts: str) -> str:
    """A reference to docs/design.md, assembled so that this file holds none: ref("5.2")."""
    return "docs/" + "design.md " + ", ".join(SIGN + part for part in parts)


def test_a_section_reference_resolves_to_the_heading_that_starts_with_its_number():
    assert check("mechanisms/plan.py", f'"""PLAN ({ref("5.2")} steps 1-6)."""') == []
    assert check("a.py", f"# {ref('5')}: every algorithm") == []


def test_a_section_the_page_lacks_is_reported_with_file_and_line():
    text = f"first line\n# see {ref('5.3')}\n"
    assert check("mechanisms/plan.py", text) == [f"mechanisms/plan.py:2: docs/design.md has no section {SIGN}5.3"]


def test_a_heading_inside_a_code_block_is_not_a_section():
    assert check("a.py", f"# {ref('7')}") == [f"a.py:1: docs/design.md has no section {SIGN}7"]


def test_a_missing_page_is_reported():
    text = "see " + GONE + " " + SIGN + "1"
    assert check("README.md", text) == [f"README.md:1: page {GONE} does not exist"]


def test_every_item_of_a_list_is_checked():
    assert check("a.py", f"# {ref('1', '5.1', '9')}") == [f"a.py:1: docs/design.md has no section {SIGN}9"]


def test_a_range_needs_both_ends_in_order():
    assert check("a.py", f"# {ref('5.1-5.2')}") == []
    assert check("a.py", f"# {ref('5.2-5.1')}") == [
        f"a.py:1: the range {SIGN}5.2-5.1 of docs/design.md does not run forwards"]
    assert check("a.py", f"# {ref('5.1-5.4')}") == [f"a.py:1: docs/design.md has no section {SIGN}5.4"]


def test_a_reference_wrapped_across_a_comment_line_keeps_its_page():
    text = f"# the stack ({ref('5.1')},\n# {SIGN}5.2 step 1, {SIGN}1)\n"
    assert check("a.py", text) == []
    wrong = f"# the stack ({ref('5.1')},\n# {SIGN}5.9)\n"
    assert check("a.py", wrong) == [f"a.py:2: docs/design.md has no section {SIGN}5.9"]


def test_a_section_sign_after_a_blank_line_has_no_page():
    text = f"# {ref('5.1')}\n#\n# then {SIGN}5.2\n"
    assert check("a.py", text) == [f"a.py:3: {SIGN}5.2 has no docs/<page>.md before it in its paragraph"]


def test_inside_a_docs_page_a_bare_section_refers_to_the_page_itself():
    pages = {**PAGES, OTHER: "## 3. Here\n\nSee " + SIGN + "3 and " + ref("5.1") + ".\n"}
    assert check(OTHER, pages[OTHER], pages) == []
    assert check(OTHER, "See " + SIGN + "4.\n", pages) == [f"{OTHER}:1: {OTHER} has no section {SIGN}4"]


def test_an_anchor_must_be_a_heading_of_the_page_by_githubs_rules():
    link = "docs/" + "design.md#"
    assert check("a.py", f"# {link}52-plan-gaussian-instantiation-p--2") == []
    assert check("a.py", f"# {link}notes-1 and {link}kept-anchor") == []
    assert check("a.py", f"# {link}5-quantiles") == ["a.py:1: docs/design.md has no anchor #5-quantiles"]


def test_relative_markdown_links_resolve_from_the_linking_page():
    pages = {**PAGES, OTHER: "[design](design.md#1-scope), [read me](../README.md#setting-up)\n"}
    assert check(OTHER, pages[OTHER], pages) == []
    assert check(OTHER, "[gone](gone.md) and [here](#nowhere)\n", pages) == [
        f"{OTHER}:1: page {GONE} does not exist",
        f"{OTHER}:1: {OTHER} has no anchor #nowhere",
    ]


@pytest.mark.parametrize(("heading", "anchor"), [
    ("5.2 PLAN, Gaussian instantiation (p = 2)", "52-plan-gaussian-instantiation-p--2"),
    ("1. What the project is", "1-what-the-project-is"),
    ("The `coordinate_median` and [IOME](https://example.org)", "the-coordinate_median-and-iome"),
    ("Budget: ρ-zCDP § 5", "budget-ρ-zcdp--5"),
])
def test_github_anchor_follows_githubs_rules(heading, anchor):
    assert github_anchor(heading) == anchor


def test_mentions_of_the_brief_and_its_folder_are_found():
    text = "ok\nsee " + FORBIDDEN[0] + " 5.2\n" + "cd " + FORBIDDEN[2] + "/papers\n"
    assert [problem.split(": mentions")[0] for problem in forbidden_mentions("x.py", text)] == ["x.py:2", "x.py:3"]
