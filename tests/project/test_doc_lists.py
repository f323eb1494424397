"""The lists in docs/ that name parts of the code are the code's: the rule table of docs/workflow.md
names every rule the Snakefile and workflow/rules/*.smk define (read statically, Snakemake is not
run), the module list of docs/architecture-modules.md names every package and module of
mechanisms/, datasets/ and experiments/, and the registry list of docs/design.md §4 names every
config name of mechanisms.REGISTRY, each and nothing else. Only the descriptions are free text.

Formats. The rule table is the Markdown table under the heading "## Rules" of docs/workflow.md;
its first column holds each rule's name as code (`run_cell`); a rule a loop defines once per
experiment is written as its name pattern (`run_setting_{experiment}`). The module list is the
first fenced code block under "## Modules" of docs/architecture-modules.md: a line that starts
with a path (`mechanisms/plan.py`, a package as `mechanisms/_fast/`) names it; the rest of the
line, and every indented line, is description. The registry list is the paragraph of docs/design.md's
section 4 that begins "`mechanisms.REGISTRY` maps these config names": the names in code between
its first colon and the end of its first sentence.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW_PAGE = ROOT / "docs" / "workflow.md"
MODULES_PAGE = ROOT / "docs" / "architecture-modules.md"
DESIGN_PAGE = ROOT / "docs" / "design.md"
RULE_FILES = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
PACKAGES = ("mechanisms", "datasets", "experiments")

RULE = re.compile(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", re.M)
NAMED_RULE = re.compile(r"^\s*name:\s*(?:\n\s*)?f?[\"']([^\"']+)[\"']", re.M)
PLACEHOLDER = re.compile(r"\{_*(\w+)\}")


# ----------------------------------------------------------------------------- reading the code


def defined_rules(texts: list[str]) -> set[str]:
    """Rule and checkpoint names of Snakemake files; ``name: f"run_setting_{_experiment}"`` gives the
    pattern ``run_setting_{experiment}`` (leading underscores of a placeholder dropped)."""
    names = set()
    for text in texts:
        names.update(RULE.findall(text))
        names.update(PLACEHOLDER.sub(r"{\1}", name) for name in NAMED_RULE.findall(text))
    return names


def package_paths(root: Path) -> set[str]:
    """Every package (``pkg/sub/``, a folder with ``__init__.py``) and module (``pkg/mod.py``) under the
    three top-level packages, relative to ``root``."""
    paths = set()
    for top in PACKAGES:
        for path in (root / top).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            relative = path.relative_to(root)
            if path.name == "__init__.py":
                paths.add(relative.parent.as_posix() + "/")
            else:
                paths.add(relative.as_posix())
    return paths


# ----------------------------------------------------------------------------- reading the pages


def section(text: str, heading: str) -> str:
    """The text under the heading line ``heading`` up to the next heading of its level or above."""
    level = len(heading) - len(heading.lstrip("#"))
    match = re.search(rf"^{re.escape(heading)}[ \t]*$", text, re.M)
    assert match, f"no heading {heading!r}"
    rest = text[match.end():]
    # headings inside fenced code blocks are not headings
    masked = re.sub(r"^```.*?^```", lambda m: " " * len(m.group()), rest, flags=re.S | re.M)
    following = re.search(rf"^#{{1,{level}}} ", masked, re.M)
    return rest[:following.start()] if following else rest


def documented_rules(text: str) -> list[str]:
    """The names in the first column of the rule table under "## Rules"."""
    names = []
    for line in section(text, "## Rules").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or set(cells[0]) <= set("-: "):
            continue
        names += re.findall(r"`([^`]+)`", cells[0])
    return names


def documented_modules(text: str) -> list[str]:
    """The paths the first code block under "## Modules" names, one per unindented line."""
    block = re.search(r"^```[^\n]*\n(.*?)^```", section(text, "## Modules"), re.S | re.M)
    assert block, "no code block under ## Modules"
    return [line.split()[0] for line in block.group(1).splitlines() if line.strip() and not line[0].isspace()]


def documented_registry(text: str) -> list[str]:
    """The config names the registry paragraph of section 4 lists, in order."""
    match = re.search(r"^`mechanisms\.REGISTRY` maps these config names[^:]*:(.*?)\.(?:\s|$)",
                      section(text, "## 4. Mechanism interface and ledger"), re.S | re.M)
    assert match, "no paragraph starting `mechanisms.REGISTRY` maps these config names"
    return re.findall(r"`([^`]+)`", match.group(1))


def differences(kind: str, documented: list[str], defined: set[str]) -> list[str]:
    """What a page lists that the code lacks, what it lacks, and what it lists twice, in words."""
    problems = [f"{kind} {name} is listed but not defined" for name in sorted(set(documented) - defined)]
    problems += [f"{kind} {name} is defined but not listed" for name in sorted(defined - set(documented))]
    twice = {name for name in documented if documented.count(name) > 1}
    problems += [f"{kind} {name} is listed twice" for name in sorted(twice)]
    return problems


# ----------------------------------------------------------------------------- the repository


def test_the_rule_table_of_the_workflow_page_names_every_rule_and_no_other():
    defined = defined_rules([path.read_text(encoding="utf-8") for path in RULE_FILES])
    assert {"all", "run_cell", "fetch_dataset", "run_setting_{experiment}"} <= defined  # the parser finds them
    documented = documented_rules(WORKFLOW_PAGE.read_text(encoding="utf-8"))
    problems = differences("rule", documented, defined)
    assert not problems, "docs/workflow.md, ## Rules:\n" + "\n".join(problems)


def test_the_module_list_names_every_package_and_module_and_no_other():
    defined = package_paths(ROOT)
    assert {"mechanisms/", "mechanisms/plan.py", "experiments/planning/"} <= defined
    documented = documented_modules(MODULES_PAGE.read_text(encoding="utf-8"))
    problems = differences("module", documented, defined)
    assert not problems, "docs/architecture-modules.md, ## Modules:\n" + "\n".join(problems)


def test_the_registry_list_of_the_design_names_every_config_name_and_no_other():
    import mechanisms

    documented = documented_registry(DESIGN_PAGE.read_text(encoding="utf-8"))
    problems = differences("mechanism", documented, set(mechanisms.REGISTRY))
    assert not problems, "docs/design.md §4, the registry list:\n" + "\n".join(problems)


# ----------------------------------------------------------------------------- the checks on small texts

SMK = '''
rule all:
    input: "x"

if TABLE:

    rule table2:
        output: "t"

checkpoint fetch_dataset:
    output: "f"

for _experiment in RUN.trials.shared_experiments:

    rule:
        name:
            f"run_setting_{_experiment}"
        output: "s"

    rule:
        name: f"run_setting_shard_{_experiment}"
'''

PAGE = """# The workflow

## Rules

| rule | what it makes |
| --- | --- |
| `all` | everything |
| `table2`, `fetch_dataset` | Table 2; a download |
| `run_setting_{experiment}` | a setting's cells |

## Next

| `not_a_rule` | outside the section |
"""


def test_the_rule_parser_reads_plain_conditional_checkpoint_and_named_rules():
    assert defined_rules([SMK]) == {"all", "table2", "fetch_dataset", "run_setting_{experiment}",
                                    "run_setting_shard_{experiment}"}


def test_a_rule_missing_from_or_extra_in_the_table_is_named():
    documented = documented_rules(PAGE)
    assert documented == ["all", "table2", "fetch_dataset", "run_setting_{experiment}"]
    assert differences("rule", documented, defined_rules([SMK])) == [
        "rule run_setting_shard_{experiment} is defined but not listed"]
    assert differences("rule", documented + ["gone"], defined_rules([SMK]))[0] == "rule gone is listed but not defined"


MODULE_PAGE = """# Module layout

## Modules

```
mechanisms/            the library
  more description of it
mechanisms/plan.py     PLAN
mechanisms/_fast/      fast paths
```

```
mechanisms/ignored.py  a second block is not the list
```
"""


def test_a_module_missing_from_or_extra_in_the_list_is_named(tmp_path):
    for name in ("mechanisms/__init__.py", "mechanisms/plan.py", "mechanisms/iome.py", "mechanisms/_fast/__init__.py",
                 "mechanisms/__pycache__/plan.cpython-311.py", "datasets/__init__.py", "experiments/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    defined = package_paths(tmp_path)
    assert defined == {"mechanisms/", "mechanisms/plan.py", "mechanisms/iome.py", "mechanisms/_fast/", "datasets/",
                       "experiments/"}
    documented = documented_modules(MODULE_PAGE)
    assert documented == ["mechanisms/", "mechanisms/plan.py", "mechanisms/_fast/"]
    assert differences("module", documented + ["mechanisms/plan.py"], defined) == [
        "module datasets/ is defined but not listed", "module experiments/ is defined but not listed",
        "module mechanisms/iome.py is defined but not listed", "module mechanisms/plan.py is listed twice"]


DESIGN = """# Design

## 4. Mechanism interface and ledger

`mechanisms.REGISTRY` maps these config names to the functions (a note: with a colon): `plan_gaussian`,
`iome`. The engine passes `x`.

## 5. Next

`mechanisms.REGISTRY` maps these config names: `outside`.
"""


def test_the_registry_list_is_read_from_its_paragraph_and_a_missing_name_is_named():
    documented = documented_registry(DESIGN)
    assert documented == ["plan_gaussian", "iome"]
    assert differences("mechanism", documented, {"plan_gaussian", "iome", "akmv"}) == [
        "mechanism akmv is defined but not listed"]
