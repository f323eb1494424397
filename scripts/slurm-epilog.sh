#!/usr/bin/env bash
# Slurm's Epilog for the test cluster of scripts/slurm-local.sh: when a job ends (done, failed or
# cancelled), SIGKILL every process still carrying its SLURM_JOB_ID. Without cgroups
# (proctrack/linuxproc) Slurm follows a job's processes through their parents, so a process
# orphaned when its parent step died (a Snakemake job process that handles SIGTERM and waits for
# its script) escapes KillWait's SIGKILL; on a cgroup cluster the job's cgroup kills it. Slurm runs
# the Epilog as root with SLURM_JOB_ID set; this script and its own children (marked by
# SLURM_SCRIPT_CONTEXT) are spared. By hand: SLURM_JOB_ID=<id> scripts/slurm-epilog.sh
set -uo pipefail

job=${SLURM_JOB_ID:?"the job's id: Slurm sets SLURM_JOB_ID for its Epilog"}
[[ $job =~ ^[0-9]+$ ]] || { echo "slurm-epilog: SLURM_JOB_ID must be a job id, got '$job'" >&2; exit 2; }
export SLURM_SCRIPT_CONTEXT=${SLURM_SCRIPT_CONTEXT:-epilog_slurmd}

for environ in /proc/[0-9]*/environ; do
  pid=${environ#/proc/}
  pid=${pid%/environ}
  [ "$pid" = "$$" ] && continue
  # variables are NUL-separated; a process that ended meanwhile or is not ours to read is skipped
  variables=$(tr '\0' '\n' <"$environ" 2>/dev/null) || continue
  if grep -qxE "SLURM_JOB_ID=$job|SLURM_JOBID=$job" <<<"$variables" \
    && ! grep -q '^SLURM_SCRIPT_CONTEXT=' <<<"$variables"; then
    echo "slurm-epilog: job $job: killing pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200))" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
done
exit 0
