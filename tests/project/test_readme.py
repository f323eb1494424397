"""The README and the pages under docs/ say what the code does: the two commands at the top are
the Makefile targets they claim to be, every relative link and anchor resolves, the README's
"add a setting" example is a valid config that plans the cells it promises, and the library
examples in docs/library.md run as written and print what the page says."""
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from experiments.engine.config import ConfigError, check_audits, check_illustrations, check_table2, load_experiments
from experiments.engine.summary import STATISTICS, SUFFIXES
from experiments.outputs.figures.paper import plan_figure
from experiments.planning.validation import one_line_config_error

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LIBRARY = ROOT / "docs" / "library.md"
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "config" / "README.md"]
# Pages that other branches of this change add; links to them are checked once they exist.
PENDING = {"docs/design.md", "docs/configuration.md", "docs/deployment.md"}

FENCE = re.compile(r"^```.*?^```[^\n]*$", re.S | re.M)


def section(path: Path, heading: str) -> str:
    """The text under ``heading`` (a whole heading line) up to the next heading of its level or above."""
    text = path.read_text(encoding="utf-8")
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n") + 1
    rest = text[start + len(heading):]
    following = re.search(rf"^#{{1,{level}}} ", FENCE.sub(lambda m: " " * len(m.group()), rest), re.M)
    return heading + (rest[:following.start()] if following else rest)


def code_block(text: str, language: str) -> str:
    return re.search(rf"```{language}\n(.*?)```", text, re.S).group(1)


# ----------------------------------------------------------------------------- the commands at the top


def make_dry_run(target: str, *variables: str) -> list[list[str]]:
    """The commands ``make -n <target> [VARIABLE=value ...]`` would run, split into words (outside any make of
    ours)."""
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MEM_MB")}
    out = subprocess.run(["make", "-n", target, *variables], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    return [shlex.split(line) for line in out.splitlines() if line.strip()]


def test_readme_starts_with_the_figures_and_test_commands():
    first_block = re.search(r"```\n(.*?)```", README.read_text(), re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["make figures", "make test"]


def test_make_figures_runs_snakemake_on_the_default_target_which_is_rule_all():
    commands = [words for words in make_dry_run("figures") if words[0].endswith("snakemake")]
    assert len(commands) == 1, commands
    words = commands[0][1:]
    assert words[:2] == ["--cores", "all"]  # as the README's comment says
    # no target on the command line: Snakemake builds the default target, rule all
    values = {"--cores", "-c", "--jobs", "-j", "--profile", "--directory", "-d", "--resources"}
    positional = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] not in values)]
    assert positional == []
    snakefile = (ROOT / "Snakefile").read_text()
    assert re.search(r"^rule all:\n    default_target: True\n", snakefile, re.M)


def test_make_figures_gives_snakemake_the_detected_memory_limit_or_mem_mb():
    # scripts/available_memory.py prints the MiB (tests/project/test_available_memory.py); MEM_MB=... overrides
    for variables, argument in [((), ""), (("MEM_MB=8000",), "8000")]:
        commands = [words for words in make_dry_run("figures", *variables) if words[0].endswith("snakemake")]
        assert commands[0][3] == "--resources"
        limit = re.fullmatch(r"mem_mb=\$\(\.venv/bin/python scripts/available_memory\.py ?(\d*)\)", commands[0][4])
        assert limit and limit.group(1) == argument, commands[0]
    # not in the profile: Snakemake reads profiles/default beside profiles/slurm too
    assert "resources" not in yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())


def test_make_test_runs_the_whole_pytest_suite_and_ci_runs_make_test():
    commands = [words for words in make_dry_run("test") if "pytest" in " ".join(words)]
    assert commands == [[".venv/bin/python", "-m", "pytest"]]  # no selection: every test
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test" in ci and "make lint" in ci


def test_the_python_version_the_readme_asks_for_is_the_one_make_and_pyproject_require():
    assert "Python 3.11 or newer" in " ".join(README.read_text().split())
    assert "v >= (3, 11)" in (ROOT / "Makefile").read_text()
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"] == ">=3.11"


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 160


def test_the_smoke_command_names_a_config_that_exists():
    text = README.read_text()
    assert ".venv/bin/snakemake --cores all --configfile config/smoke.yaml" in text
    assert (ROOT / "config" / "smoke.yaml").is_file()


# ----------------------------------------------------------------------------- links and anchors


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text (code spans and links reduced to their
    text), lower case, every character but letters, digits, '_', '-' and spaces dropped,
    spaces turned into '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"(\*\*|__|\*)", "", text).strip().lower()
    return "".join(ch for ch in text if ch.isalnum() or ch in "_- ").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6} +(.*?) *#* *$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path):
    """(page, target) of every inline link and image outside code."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    for match in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
        target = match.group(1)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target):
            yield path, target


LINKS = [link for page in PAGES if page.exists() for link in links(page)]


def test_the_pages_have_links_to_check():
    assert len(LINKS) > 40
    assert {page.name for page, _ in LINKS} >= {"README.md", "index.md", "workflow.md", "cluster.md"}


@pytest.mark.parametrize("page, target", LINKS, ids=[f"{p.relative_to(ROOT)}->{t}" for p, t in LINKS])
def test_every_relative_link_resolves_to_a_file_and_anchor(page, target):
    file_part, _, anchor = target.partition("#")
    resolved = (page.parent / file_part).resolve() if file_part else page
    relative = resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(resolved)
    if not resolved.exists() and relative in PENDING:
        pytest.skip(f"{relative} is written on another branch")
    assert resolved.exists(), f"{page.relative_to(ROOT)}: {target} does not exist"
    if anchor:
        assert resolved.suffix == ".md", f"{target}: an anchor into a file that is not Markdown"
        assert anchor in anchors(resolved), f"{page.relative_to(ROOT)}: no heading for #{anchor} in {relative}"


def test_the_slugs_follow_githubs_rules():
    assert slug("Real datasets (Kosarak and POS)") == "real-datasets-kosarak-and-pos"
    assert slug("The pip route (what `make` does)") == "the-pip-route-what-make-does"
    assert slug("Figure 7(b) erratum") == "figure-7b-erratum"
    assert slug("`experiments`") == "experiments"
    heading = "A cluster on one machine, for trying it and for CI"
    assert slug(heading) == "a-cluster-on-one-machine-for-trying-it-and-for-ci"


# ----------------------------------------------------------------------------- adding a setting


def example_config():
    """config/config.yaml with the README's example entries added under its sections, as the
    README says to, and the example itself."""
    snippet = yaml.safe_load(code_block(section(README, "## Adding a setting"), "yaml"))
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for name, entries in snippet.items():
        assert not set(entries) & set(config[name]), "the example must add new entries, not change existing ones"
        config[name] = {**config[name], **entries}
    return config, snippet


def checked(config):
    """The checks a run makes before any job (workflow/rules/common.smk), returning the experiments."""
    try:
        validate(config, str(SCHEMA))
        experiments = load_experiments(config)
        check_audits(config)
        check_table2(config, experiments)
        check_illustrations(config)
    except Exception as error:
        raise ConfigError(one_line_config_error(error)) from None
    return experiments


def fake_summary(spec):
    """A summary of the shape the summarise rule writes, one row per cell and mechanism."""
    rows = []
    for cell in spec.cells():
        for mechanism in spec.mechanisms:
            row = {"experiment": spec.id, "mechanism": mechanism.name, **dict(cell.params), "trials": spec.trials}
            row.update({f"{s}{suffix}": 1.0 for s in STATISTICS for suffix in SUFFIXES})
            rows.append(row)
    return pd.DataFrame(rows)


def test_the_add_a_setting_example_is_a_valid_config_with_the_cells_and_figure_the_readme_promises():
    config, snippet = example_config()
    experiments = checked(config)
    (name,) = snippet["experiments"]
    spec = experiments[name]
    text = " ".join(section(README, "## Adding a setting").split())
    cells = len(spec.cells())
    assert cells == 6 and f"3 x 2 = {cells} cells" in text and f"only the {cells} new cells" in text
    assert f"results/{name}/summary.csv" in text
    for figure, figure_spec in snippet["figures"].items():
        assert f"figures/{figure}.png" in text
        plans = plan_figure(figure_spec, fake_summary(spec), {name: spec.metric})
        assert [plan.experiment for plan in plans] == [name]
        assert {series.mechanism for series in plans[0].series} == {m.name for m in spec.mechanisms}


def test_the_add_a_setting_examples_mistake_gives_the_message_the_readme_quotes():
    config, snippet = example_config()
    (name,) = snippet["experiments"]
    config["experiments"][name]["grid"]["rho"][0] = -1
    with pytest.raises(ConfigError) as error:
        checked(config)
    assert f"`{error.value}`" in " ".join(section(README, "## Adding a setting").split())


def test_a_typo_in_the_example_is_caught_so_the_check_above_is_not_vacuous():
    config, snippet = example_config()
    (name,) = snippet["experiments"]
    config["experiments"][name]["trails"] = config["experiments"][name].pop("trials")
    with pytest.raises(ConfigError, match=rf"experiments\.{name}"):
        checked(config)
    config, _ = example_config()
    config["experiments"][name]["mechanisms"].append("PLAN-typo")
    with pytest.raises(ConfigError, match="unknown mechanism 'PLAN-typo'"):
        checked(config)


# ----------------------------------------------------------------------------- the library examples


def run_block(heading, capsys, name):
    code = code_block(section(LIBRARY, heading), "python")
    exec(compile(code, f"docs/library.md {name}", "exec"), {})
    return capsys.readouterr().out.splitlines()


def test_library_mechanisms_example_runs_and_reports_private_estimates(capsys):
    code = code_block(section(LIBRARY, "## Mechanisms"), "python")
    assert len(code.strip().splitlines()) <= 10
    lines = run_block("## Mechanisms", capsys, "mechanisms example")
    assert [line.split()[0] for line in lines] == ["PLAN", "IOME"]
    for line in lines:
        error, rho_total = (float(v) for v in line.split()[1:3])
        assert error < 20.0 and abs(rho_total - 0.5) < 1e-12


def test_library_binary_example_runs_on_sparse_data_and_reports_private_estimates(capsys):
    lines = run_block("## PLAN on binary data", capsys, "binary example")
    assert [line.split()[0] for line in lines] == ["PLAN-binary", "IOME"]
    for line in lines:
        error, rho_total = (float(v) for v in line.split()[1:3])
        assert 1.9 < error < 12.0 and abs(rho_total - 0.0625) < 1e-12  # above the empirical mean's ~1.9


def test_library_user_level_example_runs_batched_and_reports_pure_dp_ledgers(capsys):
    lines = [line.split() for line in run_block("## User-level clipping", capsys, "user-level example")]
    assert [line[0] for line in lines] == ["laplace", "opt_worst_case", "akmv"]
    errors = {line[0]: float(line[1]) for line in lines}
    assert all(line[2:] == ["0.5", "eps"] for line in lines)
    # the Laplace scale is 65 * 64 / 448 / 0.5 = 18.57, and OPT-wc clips to do better
    assert 18.0 < errors["laplace"] < 19.2 and errors["opt_worst_case"] < errors["laplace"] / 3
    assert errors["laplace"] < errors["akmv"] < 1.2 * errors["laplace"]
    # the page quotes these errors
    number = r"(\d+\.\d+)"
    page = section(LIBRARY, "## User-level clipping")
    quoted = re.search(rf"mean errors about {number}, {number} and {number}", page)
    for name, value in zip(("laplace", "opt_worst_case", "akmv"), quoted.groups()):
        assert abs(errors[name] - float(value)) <= 0.06  # quoted to one decimal


def test_library_coinpress_example_runs_and_improves_with_a_second_step(capsys):
    lines = [line.split() for line in run_block("## CoinPress", capsys, "coinpress example")]
    assert [line[0] for line in lines] == ["1", "2", "3"]
    errors = [float(line[1]) for line in lines]
    assert all(abs(float(line[2]) - 0.5) < 1e-12 for line in lines)
    # the page quotes these errors
    number = r"(\d+\.\d+)"
    quoted = re.search(rf"errors about {number}, {number} and {number}", section(LIBRARY, "## CoinPress"))
    assert [round(error, 2) for error in errors] == [float(value) for value in quoted.groups()]
    assert errors[1] < errors[0] / 2


def test_library_adapters_example_runs_the_three_libraries_at_rho_and_plan_does_better(capsys):
    lines = [line.split() for line in run_block("## Adapters to DP libraries", capsys, "adapters example")]
    assert [line[0] for line in lines] == ["opendp_mean", "diffprivlib_mean", "pydp_mean", "plan_gaussian"]
    errors = {line[0]: float(line[1]) for line in lines}
    assert all(abs(float(line[2]) - 0.5) < 1e-12 for line in lines)
    # the page quotes the libraries' errors about 0.2 to 0.45 (Gaussian or Laplace noise, 16 coordinates), PLAN's 0.08
    assert all(0.1 < errors[name] < 0.7 for name in ("opendp_mean", "diffprivlib_mean", "pydp_mean"))
    assert abs(errors["plan_gaussian"] - 0.08) < 0.01


def test_library_coinpress_registry_example_uses_the_sources_ball_or_the_boxs_and_the_oracle_gains(capsys):
    lines = [line.split() for line in run_block("### CoinPress in the workflow's interface", capsys,
                                                "coinpress registry example")]
    assert [(line[0], line[2]) for line in lines] == [("coinpress_mean", "source"), ("coinpress_mean", "box"),
                                                      ("coinpress_oracle", "box")]
    errors = [float(line[1]) for line in lines]
    number = r"(\d+\.\d+)"
    quoted = re.search(rf"errors about {number} \(the source's ball\), {number} and {number}",
                       section(LIBRARY, "### CoinPress in the workflow's interface"))
    assert errors == [float(value) for value in quoted.groups()]
    assert errors[2] < errors[1] / 3  # the true covariance against sigma_max^2 I on Gaussian C


def test_library_covariance_example_estimates_the_covariance_and_the_whitened_mean(capsys):
    lines = run_block("### CoinPress's covariance and the MVCRec-MVMRec mean", capsys, "covariance example")
    assert [line.rsplit(" ", 2)[0] for line in lines] == ["covariance 1", "covariance 3", "whitened mean"]
    errors = [float(line.split()[-2]) for line in lines]
    assert errors == pytest.approx([0.31, 0.17, 0.15], abs=0.02)  # the page's numbers (seeded)
    assert all(float(line.split()[-1]) == 0.5 for line in lines)


def test_library_plugin_example_runs_the_example_estimator_from_the_repository_root(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the plug-in's path is relative to the working directory
    (line,) = [line.split() for line in run_block("## Your own estimator", capsys, "plug-in example")]
    assert line[0] == "rho" and float(line[2]) == 0.5
    # the page quotes the error; noise std 8 sqrt(16) / (2000 sqrt(1)) = 0.016 per coordinate
    quoted = re.search(r"an error about (\d+\.\d+)", section(LIBRARY, "## Your own estimator")).group(1)
    assert round(float(line[1]), 2) == float(quoted)


def test_library_data_source_example_draws_the_sample_it_describes():
    code = code_block(section(LIBRARY, "## Data sources"), "python")
    namespace = {}
    exec(compile(code, "docs/library.md data source example", "exec"), namespace)
    sample = namespace["sample"]
    assert sample.x.shape == (10_000, 512) and sample.true_mean.shape == (512,) and len(sample.bounds) == 2


# ----------------------------------------------------------------------------- the cluster page


def test_the_cluster_page_states_the_profiles_command_placeholders_retries_and_queue():
    page = " ".join((ROOT / "docs" / "cluster.md").read_text().split())
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    command = ".venv/bin/snakemake --profile profiles/slurm --default-resources slurm_partition=<partition> " \
              "slurm_account=<account>"
    assert command in page
    # the command's two values replace the profile's placeholders, the only resources it sets
    assert set(profile["default-resources"]) == {"slurm_partition", "slurm_account"}
    assert profile["default-resources"]["slurm_partition"] == "SET-YOUR-PARTITION" and "`SET-YOUR-PARTITION`" in page
    assert f"`retries: {profile['retries']}`" in page and f"(`--jobs`, {profile['jobs']} in the profile)" in page
    assert profile["rerun-incomplete"] is True and "`rerun-incomplete` is set in both profiles" in page
    assert yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())["rerun-incomplete"] is True
