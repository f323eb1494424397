"""Why a job failed on a Slurm cluster, in one line naming the rule and the resource
(docs/design.md §10, docs/cluster.md).

Slurm kills a job that exceeds its memory request or its time limit. snakemake-executor-plugin-slurm
then reports only the job's state ("SLURM status is: 'FAILED'. Reason: Unknown." where memory is
enforced without cgroups), and the reason is in the job's Slurm log, which the plugin keeps for
failed jobs. The workflow's ``onerror`` hook reads the run's log for the failed Slurm jobs, and
their Slurm logs for the kill, and prints what to ask for instead.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

SUBMITTED = re.compile(r"submitted with SLURM jobid (\S+) \(log: (.+?)\)")
FAILED = re.compile(r"SLURM-job '(\S+?)' failed")
# jobacct_gather (no cgroups): "StepId=86.0 exceeded memory limit (841216000 > 629145600), being killed";
# with cgroups: "Detected 1 oom_kill event in StepId=86.0" / "oom-kill"
OVER_MEMORY = re.compile(r"exceeded memory limit \((\d+) > (\d+)\)")
OOM_KILL = re.compile(r"oom[-_ ]kill|OUT_OF_MEMORY", re.I)
TIME_LIMIT = re.compile(r"DUE TO TIME LIMIT")
MIB = 1 << 20


def resource_failures(log_text: str) -> list[str]:
    """One message per failed Slurm job of a run whose Slurm log shows that it ran out of memory
    or time (``log_text``: the Snakemake log of the run)."""
    slurm_logs = dict(SUBMITTED.findall(log_text))
    messages = []
    for jobid in dict.fromkeys(FAILED.findall(log_text)):
        try:
            text = Path(slurm_logs[jobid]).read_text(errors="replace")
        except (KeyError, OSError):
            continue
        message = explain_slurm_log(jobid, text)
        if message and message not in messages:
            messages.append(message)
    return messages


def _field(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text, re.M)
    return match.group(1).strip() if match else None


def explain_slurm_log(jobid: str, text: str) -> str | None:
    """The line for one job's Slurm log, or None if it was not killed for a resource."""
    rule = _field(r"^\s*(?:local)?rule (\S+?):\s*$", text) or "a job"
    wildcards = _field(r"^\s*wildcards: (.*)$", text)
    resources = _field(r"^\s*resources: (.*)$", text) or ""
    requested = dict(re.findall(r"(\w+)=([^,\s]+)", resources))
    job = f"rule {rule}" + (f" ({wildcards})" if wildcards else "") + f", Slurm job {jobid}"
    over = OVER_MEMORY.search(text)
    if over or OOM_KILL.search(text):
        mem_mb = requested.get("mem_mb", "?")
        if over:
            used = int(over.group(1)) / MIB
            suggest = math.ceil(1.25 * used / 100) * 100
            detail = f"it reached {used:.0f} MiB"
        else:
            suggest = 2 * int(mem_mb) if mem_mb.isdigit() else None
            detail = "the kernel's OOM killer ended it"
        hint = f"; ask for more, e.g. --set-resources {rule}:mem_mb={suggest}" if suggest else ""
        return f"{job}: out of memory: {detail}, over its request mem_mb={mem_mb} (MiB){hint}"
    if TIME_LIMIT.search(text):
        runtime = requested.get("runtime", "?")
        suggest = 2 * int(runtime) if runtime.isdigit() else None
        hint = f"; ask for more, e.g. --set-resources {rule}:runtime={suggest}" if suggest else ""
        return f"{job}: out of time: it reached its request runtime={runtime} (minutes){hint}"
    return None


def report_resource_failures(logfiles, stream) -> None:
    """The ``onerror`` hook's part: prints the messages for the run's logs ``logfiles``."""
    for logfile in logfiles or []:
        try:
            text = Path(logfile).read_text(errors="replace")
        except OSError:
            continue
        for message in resource_failures(text):
            print(f"CLUSTER RESOURCES: {message}", file=stream)
