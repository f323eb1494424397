"""Prints the memory limit of a local run in MiB, which `make figures` passes to Snakemake as
`--resources mem_mb=<MiB>`: Snakemake then starts jobs only while the sum of their `mem_mb`
requests stays within it, so that on a machine with many cores and little memory it does not
start more large jobs than fit (docs/setup.md#the-memory-limit-of-a-local-run).

    python scripts/available_memory.py        # what this machine has available, less RESERVE_MIB
    python scripts/available_memory.py 8000   # a limit of your own (make figures MEM_MB=8000), checked

Linux: MemAvailable of /proc/meminfo, the kernel's estimate of what can be allocated without
swapping (page cache it can drop included). Without /proc/meminfo (macOS): the total physical
memory from os.sysconf, with a note, since what is free there has no cheap measure. Neither:
one error line, naming how to set the limit by hand.

Warns (stderr) when cell or setting jobs of the default config ask for more than the limit:
Snakemake 9 lowers such a request to the limit without a word and runs the job alone, where it
may run out of memory.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from experiments.planning.config_files import load_config
from experiments.planning.run_plan import RunPlan

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = ROOT / "config" / "config.yaml"
MEMINFO = Path("/proc/meminfo")
SYSCONF = getattr(os, "sysconf", None)  # None where Python has none (Windows)
MIB = 1024 * 1024
# Kept for what no job's mem_mb counts: Snakemake's own scheduling process (200 MiB measured,
# /usr/bin/time -v of a dry run of the default config; a job's own Snakemake process is in its
# request) and what the OS and other programs take during a run of hours. No margin beyond it:
# every job's request is already 25 % above its estimated peak (experiments/planning/resources.py).
RESERVE_MIB = 500
HOW_TO_SET = "set it yourself: make figures MEM_MB=<MiB>, or snakemake --resources mem_mb=<MiB>"


class MemoryLimitError(Exception):
    """A limit that cannot be detected or read; the message is one line."""


def meminfo_available_mib(text: str) -> int:
    """MemAvailable of a /proc/meminfo text (in kB, i.e. KiB), in MiB."""
    match = re.search(r"^MemAvailable:\s+(\d+) kB$", text, re.M)
    if match is None:
        raise MemoryLimitError(f"/proc/meminfo has no MemAvailable line (a Linux kernel before 3.14?); {HOW_TO_SET}")
    return int(match.group(1)) // 1024


def physical_mib(sysconf) -> int:
    """The total physical memory from ``sysconf`` (os.sysconf), in MiB."""
    return sysconf("SC_PHYS_PAGES") * sysconf("SC_PAGE_SIZE") // MIB


def detected_mib(meminfo: Path = MEMINFO, sysconf=SYSCONF) -> tuple[int, str | None]:
    """This machine's available memory in MiB, and a note when it is only the total memory."""
    if meminfo.exists():
        return meminfo_available_mib(meminfo.read_text()), None
    try:
        total = physical_mib(sysconf) if sysconf is not None else None
    except (ValueError, OSError):  # a name this platform's sysconf does not know
        total = None
    if total is None:
        raise MemoryLimitError(f"cannot tell this machine's memory (no {meminfo}, no os.sysconf); {HOW_TO_SET}")
    return total, (f"no {meminfo}: the limit starts from all {total} MiB of this machine (os.sysconf), not from "
                   f"what is free now; if less is free, {HOW_TO_SET}")


def memory_limit(available_mib: int, reserve_mib: int = RESERVE_MIB) -> int:
    """The limit for ``available_mib`` MiB: at least 1, so that with almost nothing free the jobs
    run one at a time (each lowered to the limit) rather than the run refusing to start."""
    return max(1, available_mib - reserve_mib)


def parse_limit(text: str) -> int:
    """A limit given by hand: a whole number of MiB above 0."""
    if not re.fullmatch(r"\d+", text.strip()) or int(text) == 0:
        raise MemoryLimitError(f"the memory limit must be a whole number of MiB above 0 (e.g. MEM_MB=8000), "
                               f"got {text!r}")
    return int(text)


def cell_and_setting_jobs(plan: RunPlan) -> list[tuple[int, str]]:
    """(mem_mb, the job as Snakemake names it) of every cell and setting job of ``plan``: the
    large jobs; the others ask for at most 2000 MiB (experiments/planning/resources.py). A job split
    into trial shards: what each shard asks for (one trial's data, as the whole job)."""
    jobs = []
    for name, spec in plan.experiments.items():
        if spec.share_rho:
            for setting in spec.settings():
                label = f"run_setting_{name}" + (f" (setting={setting})" if setting else "")
                jobs.append((plan.resources.job_mem_mb(name, {"setting": setting}, whole=True), label))
        else:
            for cell in spec.cells():
                label = f"run_cell (experiment={name}, cell={cell.id})"
                jobs.append((plan.resources.job_mem_mb(name, {"cell": cell.id}, whole=True), label))
    return jobs


def oversize_warning(jobs: list[tuple[int, str]], limit: int) -> str | None:
    """One line naming the largest of ``jobs`` above ``limit`` and what to do, or None."""
    over = sorted(job for job in jobs if job[0] > limit)
    if not over:
        return None
    mem_mb, label = over[-1]
    largest = f" (the largest of {len(over)} jobs above it)" if len(over) > 1 else ""
    return (f"warning: the memory limit is {limit} MiB, but {label} of the default config asks for {mem_mb} MiB"
            f"{largest}: Snakemake lowers such a request to the limit and runs the job alone, where it may run out "
            "of memory and be killed; free memory first, or run these jobs on a larger machine or on Slurm "
            "(docs/cluster.md)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mem_mb", nargs="?", help="a limit of your own, in MiB (default: detected)")
    arguments = parser.parse_args(argv)
    try:
        if arguments.mem_mb is not None:
            limit = parse_limit(arguments.mem_mb)
        else:
            available, note = detected_mib()
            if note is not None:
                print(f"available_memory.py: {note}", file=sys.stderr)
            limit = memory_limit(available)
    except MemoryLimitError as error:
        print(f"available_memory.py: error: {error}", file=sys.stderr)
        return 1
    warning = oversize_warning(cell_and_setting_jobs(RunPlan(load_config(default=DEFAULT_CONFIG))), limit)
    if warning is not None:
        print(f"available_memory.py: {warning}", file=sys.stderr)
    print(limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
