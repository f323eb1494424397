"""Every path template is spelled once, in experiments/planning/paths.py: the rule files, the
workflow plan and the jobs read it, and no job parses a path back into parameters (the rules pass
cell ids and trial ranges as params)."""
import ast
import re
from pathlib import Path

from experiments.planning import paths

ROOT = Path(__file__).resolve().parents[2]
PATH_ROOTS = ("results/", "figures/", "logs/", "datasets/raw/", "datasets/processed/")
QUOTED_PATH = re.compile("[\"'](?:" + "|".join(re.escape(root) for root in PATH_ROOTS) + ")")


def code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module's code (docstrings left out) and the first text part of
    each f-string, with their lines."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    skipped = docstrings | {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                            for part in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            found.append((node.lineno, str(node.values[0].value)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            found.append((node.lineno, node.value))
    return found


def test_fill_fills_the_given_fields_and_leaves_the_others_as_wildcards():
    assert paths.fill(paths.CELL, suffix=".csv") == "results/{experiment}/cells/{cell}.csv"
    assert paths.fill(paths.SHARD, experiment="e", cell="rho=1", first=0, last=4, suffix=".csv.gz") == (
        "results/e/shards/rho=1/trials=0-4.csv.gz")
    assert paths.figure_files("figure3") == ["figures/figure3.pdf", "figures/figure3.png"]


def test_the_rule_files_spell_no_path():
    offending = []
    for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if QUOTED_PATH.search(code):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offending == []


def test_the_plan_and_the_jobs_spell_no_path_and_parse_none():
    modules = [*sorted(path for path in (ROOT / "experiments" / "planning").glob("*.py") if path.name != "paths.py"),
               *sorted((ROOT / "experiments" / "jobs").glob("*.py"))]
    offending = [f"{module.relative_to(ROOT)}:{line}: {text!r}" for module in modules
                 for line, text in code_strings(module) if text.startswith(PATH_ROOTS) or "trials=" in text]
    assert offending == []
    # a job reads cells and trial ranges from its params, not from its files' names
    runs = (ROOT / "experiments" / "jobs" / "runs.py").read_text()
    assert "removesuffix" not in runs and "removeprefix" not in runs and 'split("/")' not in runs


def test_the_checks_see_a_spelled_path(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""results/ in a docstring is prose."""\nA = "results/x.csv"\nB = f"logs/{A}.log"\n')
    assert [text for _, text in code_strings(module) if text.startswith(PATH_ROOTS)] == ["results/x.csv", "logs/"]
    assert QUOTED_PATH.search('    output: "figures/{figure}.pdf",')
    assert not QUOTED_PATH.search("    output: paths.FIGURE_PDF")
