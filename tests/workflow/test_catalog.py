"""The files the Snakemake workflow catalog and citation tools read (docs/deployment.md): the catalog's
.snakemake-workflow-catalog.yml, CITATION.cff and LICENSE, checked against each other and the workflow."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "workflow" / "rules"


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _citation():
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def _catalog():
    return yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())


def test_citation_has_the_keys_cff_1_2_0_requires_and_the_projects_version_and_license():
    citation = _citation()
    assert citation["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "version", "license", "type", "references"):
        assert citation.get(key), key
    assert citation["authors"] == [{"name": "The PLAN reproduction contributors"}]
    assert str(citation["version"]) == _pyproject()["version"]
    assert citation["license"] == _pyproject()["license"] == "MIT"


def test_citation_references_the_four_reproduced_papers_with_authors_and_venues():
    references = {reference["title"]: reference for reference in _citation()["references"]}
    expected = {
        "PLAN: Variance-Aware Private Mean Estimation": (["Aumüller", "Lebeda", "Nelson", "Pagh"], 2024),
        "Instance-optimal Mean Estimation Under Differential Privacy": (["Huang", "Liang", "Yi"], 2021),
        "CoinPress: Practical Private Mean and Covariance Estimation": (["Biswas", "Dong", "Kamath", "Ullman"], 2020),
        "Bounding User Contributions for User-Level Differentially Private Mean Estimation": (
            ["Rameshwar", "Tandon"],
            None,
        ),
    }
    assert set(references) == set(expected)
    for title, (family_names, year) in expected.items():
        reference = references[title]
        assert reference["type"], title
        assert [author["family-names"] for author in reference["authors"]] == family_names, title
        assert all(author.get("given-names") for author in reference["authors"]), title
        assert reference.get("year") == year, title
        # a venue where the paper names one; the user-level paper's text names none, and its entry says so
        assert reference.get("journal") or reference.get("collection-title") or "no venue" in reference["notes"]


def test_license_is_mit_for_the_contributors_and_pyproject_ships_it():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The PLAN reproduction contributors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND" in text
    assert _pyproject()["license-files"] == ["LICENSE"]


def test_catalog_file_states_what_the_workflow_does():
    usage = _catalog()["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    # nothing is mandatory beyond --cores: the Snakefile loads the default config itself
    assert usage["mandatory-flags"]["flags"] == ""
    assert "--cores" in usage["mandatory-flags"]["desc"]
    snakefile = (ROOT / "Snakefile").read_text()
    assert 'configfile: "config/config.yaml"' in snakefile and (ROOT / "config" / "config.yaml").is_file()
    # conda: every rule that runs names the environment file (tests/project/test_environment_sync.py checks it
    # rule by rule through Snakemake); no rule names a container
    rules = "\n".join(path.read_text() for path in sorted(RULES.glob("*.smk")))
    stack = usage["software-stack-deployment"]
    assert stack["conda"] is True and (ROOT / "workflow" / "envs" / "plan.yaml").is_file()
    assert rules.count('"../envs/plan.yaml"') == len(re.findall(r"^\s+script:$", rules, flags=re.M)) > 10
    assert stack["apptainer"] is False and stack["apptainer+conda"] is False
    assert "container:" not in rules + snakefile
    # report: outputs marked for Snakemake's report, with captions
    assert usage["report"] is True
    assert rules.count("caption=") >= 15
