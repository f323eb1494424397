"""The README's library example runs as written."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_mechanisms_example_runs_and_reports_private_estimates(capsys):
    text = README.read_text()
    section = text[text.index("## Using the mechanisms library"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "README example", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["PLAN", "IOME"]
    for line in lines:
        error, rho_total = (float(v) for v in line.split()[1:3])
        assert error < 20.0 and abs(rho_total - 0.5) < 1e-12


def test_readme_starts_with_the_figures_and_test_commands():
    first_block = re.search(r"```\n(.*?)```", README.read_text(), re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["make figures", "make test"]


def test_readme_binary_example_runs_on_sparse_data_and_reports_private_estimates(capsys):
    text = README.read_text()
    section = text[text.index("**PLAN on binary data.**"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README binary example", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["PLAN-binary", "IOME"]
    for line in lines:
        error, rho_total = (float(v) for v in line.split()[1:3])
        assert 1.9 < error < 12.0 and abs(rho_total - 0.0625) < 1e-12  # above the empirical mean's ~1.9


def test_readme_user_level_example_runs_batched_and_reports_pure_dp_ledgers(capsys):
    text = README.read_text()
    section = text[text.index("**User-level clipping (DESIGN.md 5.7).**"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README user-level example", "exec"), {})
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [line[0] for line in lines] == ["laplace", "opt_worst_case", "akmv"]
    errors = {line[0]: float(line[1]) for line in lines}
    assert all(line[2:] == ["0.5", "eps"] for line in lines)
    # the Laplace scale is 65 * 64 / 448 / 0.5 = 18.57, and OPT-wc clips to do better
    assert 18.0 < errors["laplace"] < 19.2 and errors["opt_worst_case"] < errors["laplace"] / 3
    assert errors["laplace"] < errors["akmv"] < 1.2 * errors["laplace"]
