"""The errata of docs/design.md §5.0, §5.3 as data and figures (experiments/outputs/errata.py)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.engine.config import MechanismSpec, load_experiments
from experiments.engine.summary import summarise
from experiments.jobs.results import errata_job
from experiments.outputs import errata
from experiments.outputs.errata import accounting_pair, accounting_table, noscale_setup, noscale_table

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = MechanismSpec("PLAN", "plan_gaussian", (("accounting", "published"),))
EXACT = MechanismSpec("PLAN-exact", "plan_gaussian", (("accounting", "exact"),))


def summary(experiment, rows, grid=("d", "rho")):
    """Summary rows (mechanism, *grid values, median)."""
    records = []
    for mechanism, *values, median in rows:
        records.append({"experiment": experiment, "mechanism": mechanism, **dict(zip(grid, values)), "trials": 5,
                        "median": median, "q25": median, "q75": median, "mean": median, "std": 0.0})
    return pd.DataFrame(records)


def cells(experiment, rows):
    """Cell-file rows (mechanism, d, rho, true_rho)."""
    return pd.DataFrame([{"experiment": experiment, "d": d, "rho": rho, "trial": i, "mechanism": m, "error": 1.0,
                          "true_rho": true_rho} for i, (m, d, rho, true_rho) in enumerate(rows)])


def test_accounting_pair_finds_plan_under_published_and_exact_accounting():
    assert accounting_pair([PUBLISHED, MechanismSpec("IOME", "iome", ()), EXACT]) == ("PLAN", "PLAN-exact")


def test_accounting_pair_counts_plan_without_an_accounting_option_as_exact():
    exact = MechanismSpec("plan_gaussian", "plan_gaussian", ())
    assert accounting_pair([PUBLISHED, exact]) == ("PLAN", "plan_gaussian")


def test_accounting_pair_is_none_when_only_published_accounting_runs():
    assert accounting_pair([PUBLISHED, MechanismSpec("IOME", "iome", ())]) is None


def test_accounting_pair_ignores_an_exact_plan_with_other_options():
    other = MechanismSpec("PLAN-bs", "plan_gaussian", (("accounting", "exact"), ("quantile", "binary_search")))
    assert accounting_pair([PUBLISHED, other]) is None


@pytest.mark.parametrize("exact, fails", [(1.0, False), (2.0, False), (2.01, True), (150.0, True)])
def test_exact_fails_only_when_the_exact_median_is_more_than_twice_the_published(exact, fails):
    frame = summary("gaussian_A", [("PLAN", 1024, 0.125, 1.0), ("PLAN-exact", 1024, 0.125, exact)])
    table = accounting_table({"gaussian_A": frame}, {"gaussian_A": ("PLAN", "PLAN-exact")})
    assert bool(table["exact_fails"].iloc[0]) is fails


def test_accounting_table_gives_both_medians_their_ratio_and_the_measure():
    frame = summary("gaussian_C", [("PLAN", 512, 0.125, 6.7), ("PLAN-exact", 512, 0.125, 24.0)])
    row = accounting_table({"gaussian_C": frame}, {"gaussian_C": ("PLAN", "PLAN-exact")}).iloc[0]
    assert (row["experiment"], row["setting"], row["measure"]) == ("gaussian_C", "d=512_rho=0.125", "error")
    assert [row["published_median"], row["exact_median"], row["ratio"]] == pytest.approx([6.7, 24.0, 24.0 / 6.7])


def test_accounting_table_reports_the_median_true_rho_over_rho_of_the_published_runs():
    # through the summary, as the workflow does: cells -> summary.csv -> the erratum
    trials = cells("gaussian_A", [("PLAN", 16, 0.5, 1.8), ("PLAN", 16, 0.5, 1.9), ("PLAN", 16, 0.5, 2.0),
                                  ("PLAN-exact", 16, 0.5, 0.5)])
    frame = summarise(trials, ["d", "rho"])
    assert frame["true_rho_over_rho"].tolist() == pytest.approx([3.8, 1.0])
    table = accounting_table({"gaussian_A": frame}, {"gaussian_A": ("PLAN", "PLAN-exact")})
    assert table["published_true_rho_over_rho"].tolist() == pytest.approx([3.8])


def test_a_summary_of_trials_without_true_rho_has_no_factor_and_the_erratum_leaves_it_unknown():
    trials = cells("gaussian_A", [("PLAN", 16, 0.5, None), ("PLAN-exact", 16, 0.5, None)])
    frame = summarise(trials, ["d", "rho"])
    assert "true_rho_over_rho" not in frame.columns
    table = accounting_table({"gaussian_A": frame}, {"gaussian_A": ("PLAN", "PLAN-exact")})
    assert table["published_true_rho_over_rho"].isna().all()


def test_accounting_table_has_one_column_per_grid_parameter_of_any_experiment():
    a = summary("gaussian_A", [("PLAN", 16, 0.5, 1.0), ("PLAN-exact", 16, 0.5, 1.0)])
    b = summary("gaussian_B", [("PLAN", 2.0, 0.5, 1.0), ("PLAN-exact", 2.0, 0.5, 1.0)], grid=("alpha", "rho"))
    table = accounting_table({"gaussian_A": a, "gaussian_B": b},
                             {"gaussian_A": ("PLAN", "PLAN-exact"), "gaussian_B": ("PLAN", "PLAN-exact")})
    assert list(table.columns[:5]) == ["experiment", "setting", "d", "alpha", "rho"]
    assert table["setting"].tolist() == ["d=16_rho=0.5", "alpha=2_rho=0.5"]


def test_accounting_table_is_empty_with_its_columns_when_no_experiment_runs_both():
    table = accounting_table({}, {})
    assert table.empty and "exact_fails" in table.columns


def smoke_config():
    from experiments.planning.config_files import load_config

    # smoke.yaml merged over config.yaml, as the workflow reads it (docs/configuration.md)
    return load_config(REPO / "config" / "smoke.yaml", default=REPO / "config" / "config.yaml")


def test_noscale_setup_uses_the_fidelity_experiment_that_maps_the_published_curve():
    config = smoke_config()
    setup = noscale_setup(config, load_experiments(config))
    assert (setup["experiment"], setup["coordinate_median"], setup["noscale"]) == (
        "gaussian_A", "coordinate_median", "PLAN-noscale")


def test_noscale_setup_is_empty_without_a_fidelity_section():
    config = smoke_config()
    del config["fidelity"]
    assert noscale_setup(config, load_experiments(config)) == {}


NOSCALE = {"experiment": "gaussian_A", "reference": "reference.csv", "published": "PLAN-noscale(published)",
           "coordinate_median": "coordinate_median", "noscale": "PLAN-noscale", "n": 4000}


def noscale_inputs():
    ours = summary("gaussian_A", [(m, d, rho, v * d / 16) for m, v in (("coordinate_median", 0.08),
                                                                       ("PLAN-noscale", 0.2))
                                  for d in (16, 32) for rho in (0.5, 1.0)])
    published = summary("gaussian_A", [("PLAN-noscale(published)", d, rho, 0.08 * d / 16)
                                       for d in (16, 32, 64) for rho in (0.25, 0.5, 1.0)]).assign(n=4000)
    return ours, published


def test_noscale_table_gives_our_medians_over_the_published_curve():
    ours, published = noscale_inputs()
    table = noscale_table(ours, published, NOSCALE)
    assert len(table) == 4
    assert table["coordinate_median_over_published"].tolist() == pytest.approx([1.0] * 4)
    assert table["noscale_over_published"].tolist() == pytest.approx([2.5] * 4)


def write_accounting_inputs(tmp_path):
    frame = summary("gaussian_A", [("PLAN", 16, 0.5, 1.0), ("PLAN-exact", 16, 0.5, 1.1),
                                   ("PLAN", 1024, 0.125, 1.5), ("PLAN-exact", 1024, 0.125, 120.0)])
    frame.to_csv(tmp_path / "summary.csv", index=False)
    return {"summaries": [tmp_path / "summary.csv"], "pairs": {"gaussian_A": ["PLAN", "PLAN-exact"]}}


def assert_nonempty_image(path, magic):
    assert path.is_file() and path.stat().st_size > 1000
    assert path.read_bytes().startswith(magic)


def test_errata_job_writes_the_accounting_table_and_a_png_and_pdf_figure(tmp_path):
    out = tmp_path / "out"
    errata_job(**write_accounting_inputs(tmp_path), table=out / "accounting.csv",
               accounting_png=out / "a.png", accounting_pdf=out / "a.pdf", log=tmp_path / "errata.log")
    assert pd.read_csv(out / "accounting.csv")["exact_fails"].tolist() == [False, True]
    assert_nonempty_image(out / "a.png", b"\x89PNG")
    assert_nonempty_image(out / "a.pdf", b"%PDF")
    assert "1 fail under exact accounting" in (tmp_path / "errata.log").read_text()


def test_errata_job_writes_the_noscale_table_and_figure_when_configured(tmp_path):
    ours, published = noscale_inputs()
    ours.to_csv(tmp_path / "ours.csv", index=False)
    published.to_csv(tmp_path / "reference.csv", index=False)
    errata_job(**write_accounting_inputs(tmp_path), table=tmp_path / "accounting.csv",
               accounting_png=tmp_path / "a.png", accounting_pdf=tmp_path / "a.pdf", log=tmp_path / "errata.log",
               noscale=NOSCALE, noscale_summary=tmp_path / "ours.csv", noscale_reference=tmp_path / "reference.csv",
               noscale_table_path=tmp_path / "noscale.csv", noscale_png=tmp_path / "n.png",
               noscale_pdf=tmp_path / "n.pdf")
    assert len(pd.read_csv(tmp_path / "noscale.csv")) == 4
    assert_nonempty_image(tmp_path / "n.png", b"\x89PNG")
    assert_nonempty_image(tmp_path / "n.pdf", b"%PDF")


def test_errata_job_without_any_experiment_pair_still_writes_its_outputs(tmp_path):
    errata_job(summaries=[], pairs={}, table=tmp_path / "accounting.csv", accounting_png=tmp_path / "a.png",
               accounting_pdf=tmp_path / "a.pdf", log=tmp_path / "errata.log")
    assert pd.read_csv(tmp_path / "accounting.csv").empty
    assert_nonempty_image(tmp_path / "a.png", b"\x89PNG")


def test_errata_job_leaves_no_temporary_files_behind(tmp_path):
    out = tmp_path / "out"
    errata_job(**write_accounting_inputs(tmp_path), table=out / "accounting.csv",
               accounting_png=out / "a.png", accounting_pdf=out / "a.pdf", log=tmp_path / "errata.log")
    assert sorted(p.name for p in out.iterdir()) == ["a.pdf", "a.png", "accounting.csv"]


def test_dry_run_of_the_smoke_config_plans_the_errata_rule_with_the_noscale_figure(tmp_path):
    shutil.copytree(REPO / "config", tmp_path / "config")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n",
         "figures/errata_noscale.png", "results/errata/accounting.csv", "--configfile", "config/smoke.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule errata:" in result.stdout + result.stderr


def authors_code_table(t20=(14.7, 18.9, 35.0), t10=(22.0, 27.8, 40.8), ours=(14.5, 19.6, 34.1),
                       means_corr=(20.8, 24.3, 36.3), means_plain=(19.1, 22.9, 34.7)):
    rows = []
    for (data, implementation, steps), medians, means in (
            (("C'", "authors' code", 20), t20, means_corr), (("C'", "authors' code", 10), t10, means_corr),
            (("C'", "ours", 20), ours, means_corr), (("C", "authors' code", 20), t20, means_plain)):
        for rho, median, mean in zip((1.0, 0.5, 0.125), medians, means):
            rows.append({"data": data, "implementation": implementation, "steps": steps, "rho": rho, "trials": 10,
                         "median_vs_empirical": median, "mean_vs_truth": mean, "repository": "a/b",
                         "commit": "94470ac71ec6d45537edf3168c95dbf29c2ebd93", "seed": 1, "command": "python x"})
    return pd.DataFrame(rows)


def test_the_figure7_erratum_reads_the_authors_code_table(tmp_path):
    authors_code_table().to_csv(tmp_path / "authors.csv", index=False)
    authors = errata.read_authors_code(tmp_path / "authors.csv")
    table = errata.figure7_table(None, authors)
    assert list(table["quoted"]) == [22.61, 45.19, 66.5] and list(table["authors_code_T20"]) == [14.7, 18.9, 35.0]
    assert list(table["authors_code_T10"]) == [22.0, 27.8, 40.8] and list(table["ours_same_data"]) == [14.5, 19.6, 34.1]
    finding = errata.figure7_finding(authors)
    assert "The authors' own code (a/b at 94470ac7, run by scripts/authors_figure7.py" in finding
    assert "gives 14.70 / 18.90 / 35.00, our IOME on the same data 14.50 / 19.60 / 34.10" in finding
    assert "20.80 / 24.30 / 36.30 on C' against 19.10 / 22.90 / 34.70 on C" in finding
    assert errata.figure7_note(authors).endswith("which gives 14.70 / 18.90 / 35.00 at rho = 1 / 0.5 / 0.125 "
                                                 "(see the errata).")


def test_without_the_authors_code_table_the_erratum_shows_the_quoted_values_and_says_so():
    table = errata.figure7_table(None, None)
    assert list(table.columns) == ["rho", "quoted", "this_run", "this_run_trials"]
    assert errata.figure7_finding(None).endswith("(scripts/authors_figure7.py writes it).")
