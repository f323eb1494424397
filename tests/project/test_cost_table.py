"""benchmarks/cost_table.py: reading benchmark files and job records, the list-scheduling
estimate of the wall time on k cores, its lower bound, the simulated trial shards, and the errors."""
import base64
import json
import random
import re
from pathlib import Path

import pytest

from benchmarks.cost_table import (
    ALL_MEASURED,
    DEFAULT_CORES,
    OTHER_STEPS,
    CostTableError,
    Job,
    cost_rows,
    critical_path,
    job_id_of_log,
    lower_bound,
    main,
    markdown_table,
    merge_records,
    read_benchmark,
    read_benchmarks,
    read_config,
    read_job_records,
    read_jobs_csv,
    run_jobs,
    run_row,
    run_table,
    scenarios,
    scheduled_jobs,
    shard_layouts,
    simulate,
    split_job,
    write_jobs_csv,
)
from experiments.planning.run_plan import RunPlan
from experiments.planning.trial_jobs import FAIR_SHARE_FRACTION

ROOT = Path(__file__).resolve().parents[2]
# A benchmark file as Snakemake 9 writes it (from the full run: gaussian_A, d = 1024, rho = 1/8).
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
ROW = "52.82\t0:00:52\t265.71\t450.87\t227.34\t240.14\t0.00\t0.02\t76.84\t41.03\n"


def jobs_of(*walls, **kwargs):
    return [Job(id=f"j{i}", group="g", wall_s=float(w), **kwargs) for i, w in enumerate(walls)]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_snakemake_benchmark_file_gives_wall_cpu_and_peak_rss(tmp_path):
    measured = read_benchmark(write(tmp_path / "b.tsv", HEADER + ROW))
    assert measured == {"wall_s": 52.82, "cpu_s": 41.03, "max_rss_mb": 265.71}


def test_the_rows_of_a_repeated_benchmark_are_summed_and_the_peak_is_their_maximum(tmp_path):
    second = ROW.replace("52.82", "10.00").replace("265.71", "300.00").replace("41.03", "9.00")
    measured = read_benchmark(write(tmp_path / "b.tsv", HEADER + ROW + second))
    assert measured["wall_s"] == pytest.approx(62.82)
    assert measured["cpu_s"] == pytest.approx(50.03)
    assert measured["max_rss_mb"] == 300.0


@pytest.mark.parametrize("text, message", [
    (HEADER, "no measurement row"),
    ("", "no measurement row"),
    ("s\th:m:s\n1\t0:00:01\n", "missing column(s) max_rss, cpu_time"),
    (HEADER + ROW.replace("41.03", "NA"), "line 2: cpu_time='NA' is not a number"),
    (HEADER + ROW.replace("52.82", "-1"), "line 2: s='-1' must be finite and >= 0"),
    (HEADER + "52.82\t0:00:52\n", "line 2: max_rss=None is not a number"),
])
def test_a_malformed_benchmark_file_is_refused_naming_the_file_and_the_problem(tmp_path, text, message):
    path = write(tmp_path / "bad.tsv", text)
    with pytest.raises(CostTableError) as error:
        read_benchmark(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_benchmark_files_are_jobs_of_their_experiment(tmp_path):
    write(tmp_path / "results/gaussian_A/benchmarks/d=8_rho=1.tsv", HEADER + ROW)
    write(tmp_path / "results/pos_shaped/benchmarks/all.tsv", HEADER + ROW)
    write(tmp_path / "results/gaussian_A/summary.csv", "not a benchmark\n")
    jobs = read_benchmarks(tmp_path / "results")
    assert [(job.id, job.group) for job in jobs] == [("gaussian_A/d=8_rho=1", "gaussian_A"),
                                                     ("pos_shaped/all", "pos_shaped")]


def test_the_benchmark_files_of_shards_are_jobs_named_as_their_logs_are(tmp_path):
    write(tmp_path / "results/tiny/benchmarks/d=8_rho=1.tsv", HEADER + ROW)
    for trials in ("0-2", "3-5"):
        write(tmp_path / f"results/tiny/benchmarks/shards/d=8_rho=1/trials={trials}.tsv", HEADER + ROW)
    jobs = read_benchmarks(tmp_path / "results")
    assert [(job.id, job.group) for job in jobs] == [("tiny/d=8_rho=1", "tiny"),
                                                     ("tiny/shards/d=8_rho=1/trials=0-2", "tiny"),
                                                     ("tiny/shards/d=8_rho=1/trials=3-5", "tiny")]
    assert job_id_of_log("logs/tiny/shards/d=8_rho=1/trials=0-2.log") == "tiny/shards/d=8_rho=1/trials=0-2"


def test_a_missing_results_directory_is_an_error(tmp_path):
    with pytest.raises(CostTableError, match="results directory .*nowhere does not exist"):
        read_benchmarks(tmp_path / "nowhere")


def test_a_results_directory_without_benchmark_files_is_an_error(tmp_path):
    write(tmp_path / "results/gaussian_A/summary.csv", "x\n")
    with pytest.raises(CostTableError, match="no benchmark files"):
        read_benchmarks(tmp_path / "results")


def test_list_scheduling_of_3_3_2_2_2_on_2_cores_takes_7_where_the_optimum_and_the_bound_are_6():
    # Longest first puts 3 and 3 on the two cores, then 2 and 2, and the last 2 alone:
    # the classic case where list scheduling misses the optimum {3, 3}, {2, 2, 2}.
    jobs = jobs_of(3, 3, 2, 2, 2)
    assert simulate(jobs, 2) == 7
    assert lower_bound(jobs, 2) == 6


def test_the_longest_ready_job_starts_first():
    # shortest first would run the four 1 s jobs, then the 4 s job alone: 6 s
    assert simulate(jobs_of(1, 1, 1, 1, 4), 2) == 4


def test_one_long_job_sets_the_wall_time_on_many_cores():
    jobs = jobs_of(100, *[1] * 30)
    assert simulate(jobs, 64) == 100
    assert lower_bound(jobs, 64) == 100


def test_on_one_core_the_wall_time_is_the_sum_of_the_jobs():
    jobs = jobs_of(5, 1.5, 7, 2, 3)
    assert simulate(jobs, 1) == pytest.approx(18.5)


def test_a_job_starts_only_after_the_jobs_it_reads_from():
    jobs = [Job(id="cell", group="g", wall_s=2), Job(id="summary", group="s", wall_s=3, after=("cell",)),
            Job(id="other", group="g", wall_s=4)]
    assert simulate(jobs, 2) == 5  # cell 0-2, summary 2-5 beside other 0-4
    assert simulate(jobs, 1) == 9
    assert critical_path(jobs) == (5, ["cell", "summary"])


def test_a_job_waits_for_as_many_free_cores_as_its_threads():
    jobs = [Job(id="wide", group="g", wall_s=4, threads=2), *jobs_of(3, 3)]
    assert simulate(jobs, 2) == 7  # the two 3 s jobs side by side, then the 2-thread job
    assert simulate(jobs, 3) == 6  # one 3 s job beside the 2-thread job, then the other


def test_threads_beyond_the_cores_are_lowered_to_the_cores_as_snakemake_does():
    assert simulate([Job(id="wide", group="g", wall_s=4, threads=8)], 2) == 4


@pytest.mark.parametrize("seed", range(20))
def test_the_lower_bound_never_exceeds_the_simulated_wall_time(seed):
    rng = random.Random(seed)
    jobs = []
    for i in range(rng.randint(1, 40)):
        after = tuple(f"j{d}" for d in rng.sample(range(i), k=min(i, rng.randint(0, 3))))
        jobs.append(Job(id=f"j{i}", group="g", wall_s=rng.choice([0.5, 1, 2, 3, 10, 100]) * rng.random(),
                        threads=rng.randint(1, 3), after=after))
    for cores in (1, 2, 3, 16, 64):
        assert lower_bound(jobs, cores) <= simulate(jobs, cores) + 1e-9


def test_dependencies_that_form_a_cycle_are_an_error():
    jobs = [Job(id="a", group="g", wall_s=1, after=("b",)), Job(id="b", group="g", wall_s=1, after=("a",))]
    with pytest.raises(CostTableError, match="cycle"):
        simulate(jobs, 2)
    with pytest.raises(CostTableError, match="cycle"):
        critical_path(jobs)


def test_zero_cores_is_an_error():
    with pytest.raises(CostTableError, match="cores must be >= 1, got cores=0"):
        simulate(jobs_of(1), 0)


@pytest.mark.parametrize("log, job_id", [
    ("logs/gaussian_A/cells/d=8_rho=1.log", "gaussian_A/d=8_rho=1"),
    ("logs/kosarak_shaped/settings/all.log", "kosarak_shaped/all"),
    ("logs/audit/iome.log", "audit/iome"),
    ("logs/gaussian_A/summary.log", "gaussian_A/summary"),
    ("logs/report.log", "report"),
])
def test_a_job_record_is_named_by_its_log_as_its_benchmark_file_is(log, job_id):
    assert job_id_of_log(log) == job_id


def record(metadata: Path, output: str, **fields):
    # Snakemake's file persistence: urlsafe base64 of the output path, cut into directories of
    # 254 characters prefixed with "@" (the last part without).
    encoded = base64.urlsafe_b64encode(output.encode()).decode()
    parts = [encoded[i:i + 254] for i in range(0, len(encoded), 254)]
    path = metadata.joinpath(*["@" + p for p in parts[:-1]], parts[-1])
    write(path, json.dumps(fields))


def test_job_records_give_the_missing_jobs_and_the_dependencies(tmp_path):
    write(tmp_path / "results/exp/benchmarks/a.tsv", HEADER + ROW)
    metadata = tmp_path / "metadata"
    record(metadata, "results/exp/cells/a.csv", rule="run_cell", log=["logs/exp/cells/a.log"], input=[],
           starttime=100.0, endtime=153.0)
    # two outputs of one job: its wall time runs from the first start to the last end
    long_name = "figures/" + "x" * 300 + ".png"
    for output, start, end in [("figures/f.pdf", 153.5, 155.0), (long_name, 153.0, 156.0)]:
        record(metadata, output, rule="figure", log=["logs/figures/f.log"],
               input=["results/exp/cells/a.csv", "config.yaml"],
               starttime=start, endtime=end)
    records = read_job_records(metadata)
    assert sorted(r["id"] for r in records) == ["exp/a", "figures/f"]
    jobs = {job.id: job for job in merge_records(read_benchmarks(tmp_path / "results"), records)}
    assert jobs["exp/a"].wall_s == 52.82 and jobs["exp/a"].source == "benchmark"  # the benchmark file wins
    assert jobs["figures/f"] == Job(id="figures/f", group=OTHER_STEPS, wall_s=3.0, rule="figure", after=("exp/a",),
                                    source="record")


def test_a_file_that_is_no_job_record_is_an_error(tmp_path):
    write(tmp_path / "metadata" / base64.urlsafe_b64encode(b"out.csv").decode(), "{not json")
    with pytest.raises(CostTableError, match="not a Snakemake job record"):
        read_job_records(tmp_path / "metadata")


def test_the_per_job_csv_reads_back_the_same_jobs(tmp_path):
    jobs = [Job(id="exp/a", group="exp", wall_s=52.82, cpu_s=41.03, max_rss_mb=265.71, rule="run_cell"),
            Job(id="report", group=OTHER_STEPS, wall_s=10.04, rule="report_page", after=("exp/a", "x/y"),
                source="record")]
    write_jobs_csv(jobs, tmp_path / "jobs.csv")
    assert read_jobs_csv(tmp_path / "jobs.csv") == jobs


def test_the_table_has_a_row_per_experiment_the_unmeasured_ones_and_the_measured_jobs_in_all():
    jobs = [Job(id="exp/a", group="exp", wall_s=7200, cpu_s=3600, max_rss_mb=2000),
            Job(id="exp/b", group="exp", wall_s=3600, cpu_s=3600, max_rss_mb=1000),
            Job(id="exp/summary", group=OTHER_STEPS, wall_s=60, after=("exp/a", "exp/b"), source="record")]
    rows = cost_rows(jobs, {1: jobs, 2: jobs}, not_measured=("exp", "kosarak"))
    assert [row["experiment"] for row in rows] == ["exp", OTHER_STEPS, "kosarak", ALL_MEASURED]
    assert rows[-1]["core_hours"] == pytest.approx(3 + 1 / 60)
    table = markdown_table(rows, (1, 2))
    assert "| exp | 2 | 3.000 | 2.000 | a (7200, 2.00) | 3:00:00 | 2:00:00 |" in table
    assert "| kosarak | not measured here |" in table
    assert "| **all measured jobs** | 3 | 3.017 |  | exp/a (7200, 2.00) |  |  |" in table


def test_the_whole_run_table_gives_wall_time_bound_jobs_core_hours_and_critical_path_per_core_count():
    jobs = [Job(id="exp/a", group="exp", wall_s=7200), Job(id="exp/b", group="exp", wall_s=3600),
            Job(id="exp/summary", group=OTHER_STEPS, wall_s=60, after=("exp/a", "exp/b"))]
    row = run_row("as measured", {1: jobs, 2: jobs})
    assert row["wall_s_2_cores"] == 7260 and row["lower_bound_s_2_cores"] == 7260
    assert row["critical_path_s_1_cores"] == 7260 and row["jobs_2_cores"] == 3
    table = run_table([row], (1, 2))
    assert "| **as measured** | 3:01:00 (>= 3:01:00) | 2:01:00 (>= 2:01:00) |" in table
    assert ("| its jobs, core-hours, critical path | 3 jobs, 3.017 core-h, path 2:01:00 "
            "| 3 jobs, 3.017 core-h, path 2:01:00 |") in table


def test_the_command_line_names_a_missing_directory_and_exits_with_status_2(tmp_path, capsys):
    assert main([str(tmp_path / "nowhere"), "--configfile", ""]) == 2
    assert "cost_table: results directory" in capsys.readouterr().err


def test_a_config_file_that_does_not_exist_is_an_error_not_a_run_without_shards(tmp_path, capsys):
    write(tmp_path / "results/exp/benchmarks/a.tsv", HEADER + ROW)
    assert main([str(tmp_path / "results"), "--configfile", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err == (f"cost_table: config file {tmp_path / 'nope.yaml'} does not exist "
                                       "(--configfile '' for none)\n")


def test_the_command_line_writes_the_table_and_both_csv_files(tmp_path, capsys):
    write(tmp_path / "results/exp/benchmarks/a.tsv", HEADER + ROW)
    out = tmp_path / "out"
    out.mkdir()
    status = main([str(tmp_path / "results"), "--configfile", "", "--cores", "1", "4",
                   "--markdown", str(out / "t.md"), "--csv", str(out / "t.csv"), "--jobs-csv", str(out / "j.csv")])
    assert status == 0
    printed = capsys.readouterr().out
    assert (out / "t.md").read_text() in printed and "| 1 cores | 4 cores |" in printed
    assert "wall_s_4_cores" in (out / "t.csv").read_text() and "critical_path_s_4_cores" in (out / "t.csv").read_text()
    assert read_jobs_csv(out / "j.csv")[0].wall_s == 52.82


def test_every_rule_runs_one_thread_as_the_table_assumes_by_default():
    # cost_table.py counts a job's cores as 1 unless --threads says otherwise
    rules = "".join(p.read_text() for p in (ROOT / "workflow/rules").glob("*.smk"))
    threads = re.findall(r"^\s*threads:\s*(\S+)", rules,
                         flags=re.MULTILINE)
    assert threads and set(threads) == {"1"}


def test_the_cluster_page_tables_are_the_ones_the_committed_measurements_give(tmp_path):
    assert main(["--from-jobs", str(ROOT / "results/cost/jobs.csv"), "--configfile", str(ROOT / "config/config.yaml"),
                 "--markdown", str(tmp_path / "table.md")]) == 0
    section = (ROOT / "docs/cluster.md").read_text().split("\n## Cost of a full reproduction\n")[1].split("\n## ")[0]
    assert (tmp_path / "table.md").read_text() in section


# --- trial shards ---------------------------------------------------------------------------

STARTUP, MERGE = 1.5, 0.25


def cell_job(wall_s=101.5, **fields):
    return Job(id="exp/d=8_rho=1", group="exp", wall_s=wall_s, cpu_s=90.0, max_rss_mb=300.0, rule="run_cell",
               **fields)


def test_a_sharded_job_becomes_shards_of_a_start_up_and_their_trials_then_a_merge_after_all_of_them():
    shards_and_merge = split_job(cell_job(), [range(0, 10), range(10, 30), range(30, 50)], startup_s=STARTUP,
                                 measured_startup_s=STARTUP, merge_s=MERGE)
    *shards, merge = shards_and_merge
    # 100 s of trials (101.5 s less the 1.5 s start-up), 2 s per trial
    assert [(job.id, job.wall_s) for job in shards] == [("exp/shards/d=8_rho=1/trials=0-9", 21.5),
                                                        ("exp/shards/d=8_rho=1/trials=10-29", 41.5),
                                                        ("exp/shards/d=8_rho=1/trials=30-49", 41.5)]
    assert {job.rule for job in shards} == {"run_shard"} and {job.source for job in shards} == {"simulated"}
    assert sum(job.wall_s - STARTUP for job in shards) == pytest.approx(101.5 - STARTUP)
    assert merge.id == "exp/d=8_rho=1" and merge.wall_s == STARTUP + MERGE and merge.rule == "run_cell"
    assert merge.after == tuple(job.id for job in shards)


def test_a_setting_jobs_shards_run_its_settings_shard_rule_and_batched_runs_split_as_the_layout_says():
    job = Job(id="userlevel/all", group="userlevel", wall_s=41.0, rule="run_setting_userlevel")
    *shards, _ = split_job(job, [range(0, 6000), range(6000, 10000)], startup_s=1.0, measured_startup_s=1.0,
                           merge_s=0.0)
    assert [(s.id, s.rule, s.wall_s) for s in shards] == [("userlevel/shards/all/trials=0-5999",
                                                            "run_setting_shard_userlevel", 25.0),
                                                           ("userlevel/shards/all/trials=6000-9999",
                                                            "run_setting_shard_userlevel", 17.0)]


def test_the_dependants_of_a_sharded_job_wait_for_its_merge_and_its_shards_run_side_by_side():
    jobs = [cell_job(), Job(id="exp/summary", group=OTHER_STEPS, wall_s=1.0, after=("exp/d=8_rho=1",))]
    run = run_jobs(jobs, {"exp/d=8_rho=1": [range(0, 20), range(20, 50)]}, startup_s=STARTUP,
                   measured_startup_s=STARTUP, merge_s=MERGE)
    assert [job.id for job in run] == ["exp/shards/d=8_rho=1/trials=0-19", "exp/shards/d=8_rho=1/trials=20-49",
                                       "exp/d=8_rho=1", "exp/summary"]
    # the longer shard (1.5 + 30 x 2 s), the merge (1.5 + 0.25 s), the summary
    assert critical_path(run) == (pytest.approx(61.5 + 1.75 + 1.0), ["exp/shards/d=8_rho=1/trials=20-49",
                                                                     "exp/d=8_rho=1", "exp/summary"])
    assert simulate(run, 2) == pytest.approx(64.25) and simulate(run, 1) == pytest.approx(41.5 + 61.5 + 1.75 + 1.0)


def test_a_job_that_is_not_split_is_the_measured_job_unless_the_start_up_changes():
    job = cell_job(after=("datasets/fetch",))
    assert run_jobs([job], {}, startup_s=STARTUP, measured_startup_s=STARTUP) == [job]
    assert run_jobs([job], {job.id: [range(50)]}, startup_s=STARTUP, measured_startup_s=STARTUP) == [job]
    # a cluster job starts in 17 s where the measured one started in 1.5 s
    assert run_jobs([job], {}, startup_s=17.0, measured_startup_s=STARTUP) == [
        Job(id=job.id, group="exp", wall_s=117.0, cpu_s=90.0, max_rss_mb=300.0, rule="run_cell",
            after=("datasets/fetch",))]


def tiny_config(**experiment):
    entry = {"data": {"source": "gaussian_a", "n": 300}, "grid": {"d": [8], "rho": [0.5, 1.0]}, "trials": 6,
             "mechanisms": ["iome", "empirical_mean"]}
    entry.update(experiment)
    return {"seed": 5, "experiments": {"tiny": entry}}


def test_the_layout_is_the_workflows_configured_one_for_the_measured_jobs_of_configured_experiments():
    jobs = [Job(id="tiny/d=8_rho=0.5", group="tiny", wall_s=13.0), Job(id="tiny/d=8_rho=1", group="tiny", wall_s=7.0),
            Job(id="other/d=8_rho=1", group="other", wall_s=7.0),
            Job(id="tiny/summary", group=OTHER_STEPS, wall_s=1.0, after=("tiny/d=8_rho=0.5", "tiny/d=8_rho=1"))]
    plan = RunPlan(tiny_config(shards=3), cores=2)
    assert shard_layouts(jobs, plan) == {"tiny/d=8_rho=0.5": [range(0, 2), range(2, 4), range(4, 6)],
                                         "tiny/d=8_rho=1": [range(0, 2), range(2, 4), range(4, 6)]}
    local = scenarios(local_startup_s=1.0)["local"]
    run = scheduled_jobs(jobs, tiny_config(shards=3), local, (2,), measured_startup_s=1.0, merge_s=0.0)[2]
    assert len(run) == 4 * 2 + 2 and sum(job.wall_s for job in run) == pytest.approx(13 + 7 + 7 + 1 + 2 * 3)


def test_the_command_line_splits_the_jobs_of_a_config_that_asks_for_shards(tmp_path, capsys):
    for cell in ("d=8_rho=0.5", "d=8_rho=1"):
        write(tmp_path / f"results/tiny/benchmarks/{cell}.tsv", HEADER + ROW)
    config = write(tmp_path / "tiny.yaml", json.dumps(tiny_config(shards=2)))
    assert main([str(tmp_path / "results"), "--configfile", str(config), "--cores", "2",
                 "--startup-seconds", "0.82", "--merge-seconds", "0"]) == 0
    printed = capsys.readouterr().out
    # two cells of 52.82 s: each 2 shards of 0.82 + 26 s and a merge of 0.82 s, both cells side by side
    assert "| tiny | 2 | 0.029 | 0.023 | d=8_rho=0.5 (53, 0.27) | 0:00:54 |" in printed
    assert "| **sharded as a local run on k cores** | 0:00:54 (>= 0:00:54) |" in printed
    assert "| its jobs, core-hours, critical path | 6 jobs, 0.030 core-h, path 0:00:28 |" in printed
    assert "| **not sharded (the measured jobs)** | 0:00:53 (>= 0:00:53) |" in printed


def test_jobs_measured_as_shards_are_not_split_again():
    jobs = [Job(id="tiny/d=8_rho=1", group="tiny", wall_s=1.0),
            *[Job(id=f"tiny/shards/d=8_rho=1/trials={trials}", group="tiny", wall_s=4.0) for trials in ("0-2", "3-5")]]
    assert shard_layouts(jobs, RunPlan(tiny_config(shards=3))) == {}


def committed_jobs():
    return read_jobs_csv(ROOT / "results/cost/jobs.csv")


def test_on_two_cores_a_local_run_splits_none_of_the_committed_jobs_so_its_schedule_is_todays():
    jobs, config = committed_jobs(), read_config(ROOT / "config/config.yaml")
    local = scheduled_jobs(jobs, config, scenarios()["local"], (2,))[2]
    assert local == jobs
    assert simulate(local, 2) == simulate(jobs, 2)


def test_sharding_the_committed_jobs_never_lengthens_a_run_a_long_job_bounds_and_keeps_the_fair_share_promise():
    """Where the unsharded run is bound by its critical path (64 and 256 cores here) the shards never
    end it later. Where it is bound by its work (16 cores: work / 16 is above the critical path) they
    cannot end it sooner and cost their start-ups (the committed run: 1.4 s of 600, docs/cluster.md);
    there the promise of experiments/planning/trial_jobs.py holds: within FAIR_SHARE_FRACTION of the
    work per core."""
    jobs, config = committed_jobs(), read_config(ROOT / "config/config.yaml")
    sharded = scheduled_jobs(jobs, config, scenarios()["local"], DEFAULT_CORES)
    work = sum(job.wall_s for job in jobs)
    path_bound = [cores for cores in DEFAULT_CORES if critical_path(jobs)[0] > work / cores]
    assert path_bound  # the strict check below runs
    for cores in DEFAULT_CORES:
        sharded_work = sum(job.wall_s for job in sharded[cores])
        assert simulate(sharded[cores], cores) <= (1 + FAIR_SHARE_FRACTION) * max(sharded_work / cores,
                                                                                  critical_path(sharded[cores])[0])
        if cores in path_bound:
            assert simulate(sharded[cores], cores) <= simulate(jobs, cores)
    assert len(sharded[64]) > len(jobs)  # 64 cores split some of them


def test_a_measured_job_the_config_does_not_have_is_one_error_line():
    jobs = [Job(id="tiny/d=4096_rho=1", group="tiny", wall_s=10.0)]
    with pytest.raises(CostTableError) as error:
        shard_layouts(jobs, RunPlan(tiny_config()))
    assert str(error.value) == ("tiny/d=4096_rho=1: not a cell or setting job of experiment tiny in the config "
                                "(did its grid change since the measurement?)")


def test_a_config_the_workflow_refuses_is_one_error_line():
    config = tiny_config(shards=2, shard_seconds=60)
    with pytest.raises(CostTableError, match="^config: .*shard") as error:
        scheduled_jobs([cell_job()], config, scenarios()["local"], (2,))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("option", ["--startup-seconds", "--cluster-startup-seconds", "--merge-seconds"])
@pytest.mark.parametrize("value", ["-1", "nan"])
def test_start_up_and_merge_seconds_below_zero_or_not_finite_are_refused(tmp_path, capsys, option, value):
    write(tmp_path / "results/exp/benchmarks/a.tsv", HEADER + ROW)
    assert main([str(tmp_path / "results"), "--configfile", "", option, value]) == 2
    assert capsys.readouterr().err == f"cost_table: {option} must be a number of seconds >= 0, got {float(value)}\n"
