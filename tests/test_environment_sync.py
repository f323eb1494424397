"""Dependencies are pinned once, in requirements.txt; environment.yml must mirror it (DESIGN.md section 2)."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!-]+)$")


def _normalise(name):
    return name.lower().replace("_", "-")


def _requirement_lines():
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    return [line for line in lines if line]


PROJECT_INSTALL = "-e ."  # the conda env installs the project itself, for `snakemake --use-conda`


def _conda_pip_section():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_sections = [dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict) and "pip" in dep]
    assert len(pip_sections) == 1, "environment.yml must have exactly one pip: section"
    return [str(line).strip() for line in pip_sections[0]]


def _conda_pip_lines():
    return [line for line in _conda_pip_section() if line != PROJECT_INSTALL]


def _pins(lines):
    pins = {}
    for line in lines:
        match = PIN.match(line)
        assert match, f"not an exact '==' pin: {line!r}"
        pins[_normalise(match["name"])] = match["version"]
    return pins


@pytest.mark.parametrize("source", [_requirement_lines, _conda_pip_lines], ids=["requirements.txt", "environment.yml"])
def test_every_requirement_is_an_exact_pin(source):
    lines = source()
    assert lines, "no requirements found"
    for line in lines:
        assert PIN.match(line), f"not an exact '==' pin: {line!r}"


def test_environment_yml_pins_the_same_packages_and_versions_as_requirements_txt():
    assert _pins(_conda_pip_lines()) == _pins(_requirement_lines())


@pytest.mark.parametrize("source", [_requirement_lines, _conda_pip_lines], ids=["requirements.txt", "environment.yml"])
def test_each_package_is_pinned_only_once(source):
    names = [_normalise(line.split("==", 1)[0]) for line in source()]
    assert len(names) == len(set(names))


def test_pyproject_reads_its_dependencies_from_requirements_txt():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "dependencies" in pyproject["project"].get("dynamic", [])
    assert "dependencies" not in pyproject["project"]
    files = pyproject["tool"]["setuptools"]["dynamic"]["dependencies"]["file"]
    assert ([files] if isinstance(files, str) else files) == ["requirements.txt"]


def test_environment_yml_installs_the_project_once_after_its_pins():
    section = _conda_pip_section()
    assert section.count(PROJECT_INSTALL) == 1 and section[-1] == PROJECT_INSTALL
