"""scripts/available_memory.py: the memory limit `make figures` gives Snakemake (MemAvailable of
/proc/meminfo less a reserve, the total memory where there is no /proc/meminfo, or MEM_MB), and
its warning about jobs that ask for more than the limit. The Snakemake side, that the limit holds
jobs back, is tests/workflow/test_memory_limit.py."""
import copy
import importlib.util
from pathlib import Path

import pytest

from experiments.planning.run_plan import RunPlan
from testkit.workflow_runs import TINY

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("available_memory", REPO / "scripts" / "available_memory.py")
available_memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(available_memory)

MEMINFO = """MemTotal:       32871744 kB
MemFree:         1203112 kB
MemAvailable:   23186120 kB
Buffers:          530204 kB
Cached:         20488020 kB
"""


def fake_sysconf(values):
    def sysconf(name):
        if name not in values:
            raise ValueError(f"unrecognized configuration name {name!r}")  # as os.sysconf says it
        return values[name]
    return sysconf


def test_memavailable_is_read_in_mib():
    assert available_memory.meminfo_available_mib(MEMINFO) == 23186120 // 1024 == 22642


def test_a_meminfo_without_memavailable_is_one_error_line_saying_how_to_set_the_limit():
    with pytest.raises(available_memory.MemoryLimitError, match="no MemAvailable line.*MEM_MB=<MiB>") as error:
        available_memory.meminfo_available_mib(MEMINFO.replace("MemAvailable", "MemAvail"))
    assert "\n" not in str(error.value)


def test_linux_reads_proc_meminfo_and_leaves_sysconf_alone(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO)
    assert available_memory.detected_mib(meminfo, fake_sysconf({})) == (22642, None)


def test_without_proc_meminfo_the_total_memory_from_sysconf_is_used_with_a_note(tmp_path):
    sysconf = fake_sysconf({"SC_PHYS_PAGES": 2 * 1024 * 1024, "SC_PAGE_SIZE": 4096})  # 8 GiB, as on macOS
    mib, note = available_memory.detected_mib(tmp_path / "missing", sysconf)
    assert mib == 8192
    assert "not from what is free now" in note and "MEM_MB=<MiB>" in note and "\n" not in note


@pytest.mark.parametrize("sysconf", [None, fake_sysconf({"SC_PAGE_SIZE": 4096})], ids=["no sysconf", "no name"])
def test_without_meminfo_and_sysconf_the_limit_must_be_set_by_hand(tmp_path, sysconf):
    with pytest.raises(available_memory.MemoryLimitError, match=r"cannot tell this machine's memory.*mem_mb=<MiB>"):
        available_memory.detected_mib(tmp_path / "missing", sysconf)


def test_the_limit_keeps_the_reserve_for_snakemake_and_is_never_below_one_mib():
    assert available_memory.memory_limit(22642) == 22642 - available_memory.RESERVE_MIB
    assert available_memory.memory_limit(300) == 1  # then the jobs run one at a time


@pytest.mark.parametrize("text", ["8GB", "0", "-5", "", "1.5"])
def test_a_limit_by_hand_must_be_a_whole_number_of_mib(text):
    with pytest.raises(available_memory.MemoryLimitError, match=rf"whole number of MiB above 0.*got {text!r}"):
        available_memory.parse_limit(text)


def test_the_jobs_are_named_as_snakemake_names_them_with_their_requests():
    plan = RunPlan(TINY)
    jobs = available_memory.cell_and_setting_jobs(plan)
    assert sorted(label for _, label in jobs) == [f"run_cell (experiment=tiny, cell=d={d}_rho={rho})"
                                                  for d in (16, 8) for rho in ("0.5", "1")]
    assert {mem_mb for mem_mb, _ in jobs} == {plan.resources.job_mem_mb("tiny", {"cell": "d=8_rho=0.5"})}
    shared = copy.deepcopy(TINY)
    shared["experiments"]["tiny"]["share_rho"] = True
    assert sorted(label for _, label in available_memory.cell_and_setting_jobs(RunPlan(shared))) == [
        "run_setting_tiny (setting=d=16)", "run_setting_tiny (setting=d=8)"]


def test_the_warning_names_the_largest_job_above_the_limit_and_what_to_do():
    jobs = [(700, "run_cell (experiment=a, cell=x=1)"), (5100, "run_cell (experiment=a, cell=x=3)"),
            (2900, "run_setting_b (setting=y=2)")]
    assert available_memory.oversize_warning(jobs, 5100) is None
    warning = available_memory.oversize_warning(jobs, 2000)
    assert warning.startswith("warning: the memory limit is 2000 MiB, but run_cell (experiment=a, cell=x=3) of the "
                              "default config asks for 5100 MiB (the largest of 2 jobs above it): Snakemake lowers")
    assert "larger machine or on Slurm (docs/cluster.md)" in warning and "\n" not in warning
    assert "(the largest" not in available_memory.oversize_warning(jobs, 3000)


def test_main_prints_the_limit_given_by_hand_and_warns_about_the_default_configs_largest_job(capsys):
    assert available_memory.main(["100"]) == 0
    out, err = capsys.readouterr()
    assert out == "100\n"
    assert err.startswith("available_memory.py: warning: the memory limit is 100 MiB, but run_")
    assert available_memory.main(["1000000"]) == 0
    assert capsys.readouterr() == ("1000000\n", "")


def test_main_prints_this_machines_available_memory_less_the_reserve(capsys):
    assert available_memory.main([]) == 0
    limit = int(capsys.readouterr().out)
    if Path("/proc/meminfo").exists():
        available = available_memory.meminfo_available_mib(Path("/proc/meminfo").read_text())
        # MemAvailable moves while the test runs: within 10 % of it
        assert abs(limit - available_memory.memory_limit(available)) <= available // 10
    assert limit >= 1


def test_main_stops_on_a_bad_limit_with_one_error_line_and_prints_nothing(capsys):
    assert available_memory.main(["8GB"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "available_memory.py: error: the memory limit must be a whole number of MiB above 0 " \
                  "(e.g. MEM_MB=8000), got '8GB'\n"
