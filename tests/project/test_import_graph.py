"""The packages' import graph (tests/testkit/import_graph.py) has no knots: no import cycle (lazy and
relative imports included), no private name imported across modules, no private module imported
from outside its package, and one direction between packages: mechanisms imports neither
datasets nor experiments, datasets does not import experiments, and inside experiments its packages
import downwards only (audit, engine, outputs, planning, jobs). The checker itself is tested on
tiny synthetic packages first."""
from pathlib import Path

import pytest

from testkit.import_graph import cycles, imports, layer_violations, private_imports

ROOT = Path(__file__).resolve().parents[2]
# lowest first; experiments' own packages in the order of experiments/__init__.py
PACKAGES = ("mechanisms", "datasets", "experiments")
LAYERS = ("mechanisms", "datasets", "experiments.audit", "experiments.engine", "experiments.outputs",
          "experiments.planning", "experiments.jobs")


def write_modules(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# ----------------------------------------------------------------------------- the checker


def test_a_cycle_is_found_and_named_in_import_order(tmp_path):
    root = write_modules(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import f\n",
                                    "pkg/b.py": "from .c import g\n", "pkg/c.py": "import pkg.a\n",
                                    "pkg/d.py": "from pkg import a\n"})
    assert cycles(imports(root, ["pkg"])) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]


def test_a_lazy_import_inside_a_function_counts(tmp_path):
    root = write_modules(tmp_path, {"pkg/__init__.py": "", "pkg/low.py": "def f():\n    from .high import g\n",
                                    "pkg/high.py": "from pkg.low import f\n\ndef g():\n    pass\n"})
    assert cycles(imports(root, ["pkg"])) == [["pkg.high", "pkg.low", "pkg.high"]]


def test_relative_imports_resolve_to_modules_and_parent_packages_are_no_edge(tmp_path):
    root = write_modules(tmp_path, {"pkg/__init__.py": "from .sub import thing\n", "pkg/sub/__init__.py": "",
                                    "pkg/sub/thing.py": "from ..other import x\nfrom . import sibling\n",
                                    "pkg/sub/sibling.py": "", "pkg/other.py": "x = 1\n"})
    edges = {(edge.source, edge.target) for edge in imports(root, ["pkg"])}
    assert edges == {("pkg", "pkg.sub.thing"), ("pkg.sub.thing", "pkg.other"), ("pkg.sub.thing", "pkg.sub.sibling")}
    assert cycles(imports(root, ["pkg"])) == []


def test_private_names_and_private_modules_are_flagged_where_they_cross_a_boundary(tmp_path):
    root = write_modules(tmp_path, {
        "low/__init__.py": "", "low/_inner.py": "VALUE = 1\n", "low/api.py": "from ._inner import VALUE\n_x = 1\n",
        "high/__init__.py": "", "high/user.py": "def f():\n    from low.api import _x\n    import low._inner\n",
    })
    problems = private_imports(imports(root, ["low", "high"]))
    assert problems == ["high.user:2 imports the private name _x of low.api",
                        "high.user:3 imports the private module low._inner from outside low"]


def test_an_import_against_the_package_order_is_flagged(tmp_path):
    root = write_modules(tmp_path, {"low/__init__.py": "", "low/a.py": "def f():\n    import high.b\n",
                                    "high/__init__.py": "", "high/b.py": "from low import a\n"})
    assert layer_violations(imports(root, ["low", "high"]), ["low", "high"]) == [
        "low.a:2 imports high.b: low must not import high"]


def test_subpackages_are_layers_of_their_own(tmp_path):
    root = write_modules(tmp_path, {"top/__init__.py": "", "top/base/__init__.py": "", "top/base/a.py": "",
                                    "top/base/b.py": "from top.upper.c import f\n", "top/upper/__init__.py": "",
                                    "top/upper/c.py": "from ..base import a\n\ndef f():\n    pass\n"})
    assert layer_violations(imports(root, ["top"]), ["top.base", "top.upper"]) == [
        "top.base.b:1 imports top.upper.c: top.base must not import top.upper"]


# ----------------------------------------------------------------------------- the project


@pytest.fixture(scope="module")
def project_imports():
    return imports(ROOT, PACKAGES)


def test_the_checker_sees_the_project(project_imports):
    sources = {edge.source for edge in project_imports}
    assert {"mechanisms.plan", "datasets.real.download", "experiments.jobs.runs"} <= sources


def test_the_packages_have_no_import_cycle(project_imports):
    found = cycles(project_imports)
    assert not found, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in found)


def test_no_private_name_or_private_module_is_imported_across_modules(project_imports):
    assert private_imports(project_imports) == []


def test_packages_import_each_other_in_one_direction_only(project_imports):
    assert layer_violations(project_imports, LAYERS) == []


def test_every_package_of_experiments_is_a_layer():
    packages = {path.parent.name for path in (ROOT / "experiments").glob("*/__init__.py")}
    layers = {layer for layer in LAYERS if layer.startswith("experiments.")}
    assert {f"experiments.{name}" for name in packages} == layers
    assert not [path.name for path in (ROOT / "experiments").glob("*.py") if path.name != "__init__.py"]
