#!/usr/bin/env bash
# A real single-node Slurm with accounting on this machine, for the cluster tests (tests/cluster/)
# and for trying profiles/slurm by hand (docs/cluster.md, docs/design.md §10):
#
#   sudo scripts/slurm-local.sh up      # install (apt-get, once), start munge, MariaDB, slurmdbd, slurmctld, slurmd
#   sudo scripts/slurm-local.sh status  # which of them run (by the pid files this script recorded)
#   sudo scripts/slurm-local.sh down    # cancel the cluster's jobs, stop every daemon `up` started, by pid
#
# Debian 12 (Slurm 22.05), root, no systemd: the daemons are started by hand in the order
# munge, MariaDB, slurmdbd, slurmctld, slurmd. Configs go to /etc/slurm/ (where the Slurm commands look for them); state,
# spool, logs and pid files under $SLURM_LOCAL_DIR (default /tmp/slurm-local). The cluster is
# "local", with one node (this host, all its CPUs, its memory less 1 GiB), partition "main" and
# account "default". Memory requests are enforced without cgroups: jobacct_gather/linux samples
# each job step every second and kills a step above its --mem (JobAcctGatherParams=OverMemoryKill);
# the Epilog (scripts/slurm-epilog.sh) kills any process a job leaves when it ends.
# Exit status: 0 on success, 2 for a usage error, 3 without root or without apt-get (the cluster
# cannot be installed here), 1 for anything else (the daemons' logs are printed).
set -euo pipefail

STATE=${SLURM_LOCAL_DIR:-/tmp/slurm-local}
PACKAGES=(slurmctld slurmd slurm-client slurmdbd munge mariadb-server)
# daemon name -> the pid file it writes (munged and MariaDB write theirs into directories they own)
declare -A PIDFILE=(
  [munged]="$STATE/munge/munged.pid"
  [mariadbd]="$STATE/mysql/mariadbd.pid"
  [slurmdbd]="$STATE/pids/slurmdbd.pid"
  [slurmctld]="$STATE/pids/slurmctld.pid"
  [slurmd]="$STATE/pids/slurmd.pid"
)
ORDER=(munged mariadbd slurmdbd slurmctld slurmd)
HOST=$(hostname -s)

say() { echo "slurm-local: $*" >&2; }
die() { say "error: $*"; exit 1; }

logs() {
  # The daemons' logs, for a failure message.
  local file
  for file in "$STATE"/log/*.log "$STATE"/munge/munged.log "$STATE"/mysql/mariadb.log; do
    [ -f "$file" ] || continue
    echo "----- $file (last 40 lines) -----" >&2
    tail -n 40 "$file" >&2
  done
}

fail() { say "error: $*"; logs; exit 1; }

pid_of() {
  # The pid recorded for daemon $1, if that process still runs that daemon.
  local file=${PIDFILE[$1]} pid
  [ -s "$file" ] || return 1
  pid=$(tr -dc 0-9 <"$file")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  # the kernel's comm is the executable's name, cut to 15 characters
  [ "$(cat "/proc/$pid/comm")" = "$1" ] || return 1
  echo "$pid"
}

wait_for() {
  # wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every half second.
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "$what did not happen within $seconds s"
    sleep 0.5
  done
}

install_packages() {
  local missing=0 command
  for command in munged mariadbd slurmdbd slurmctld slurmd sbatch sacct sacctmgr; do
    command -v "$command" >/dev/null 2>&1 || missing=1
  done
  [ $missing = 1 ] || return 0
  command -v apt-get >/dev/null 2>&1 || { say "error: Slurm is not installed and there is no apt-get"; exit 3; }
  say "installing ${PACKAGES[*]} with apt-get"
  # No service is started by the packages (policy-rc.d or no init system): this script starts them.
  DEBIAN_FRONTEND=noninteractive apt-get update -q >"$STATE/log/apt.log" 2>&1 \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${PACKAGES[@]}" >>"$STATE/log/apt.log" 2>&1 \
    || { tail -n 30 "$STATE/log/apt.log" >&2; die "apt-get install ${PACKAGES[*]} failed"; }
}

refuse_foreign_daemons() {
  # A daemon of the same kind that this script did not start (another cluster on this machine)
  # would take our sockets or ports: stop rather than share or kill it.
  local name pid
  for name in "${ORDER[@]}"; do
    pid_of "$name" >/dev/null && continue
    for pid in $(pgrep -x "$name" || true); do
      fail "$name is already running (pid $pid) but was not started by this script (state $STATE); stop it first"
    done
  done
}

write_configs() {
  local cpus memory
  cpus=$(nproc)
  memory=$(($(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo) - 1024))
  mkdir -p /etc/slurm
  # a copy, so that the cluster does not depend on this checkout staying where it is
  install -m 755 "$(dirname "$(readlink -f "$0")")/slurm-epilog.sh" "$STATE/epilog.sh"
  cat >/etc/slurm/slurmdbd.conf <<EOF
# Written by scripts/slurm-local.sh (a single-node test cluster).
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$(cat "$STATE/dbpass")
StorageLoc=slurm_acct_db
LogFile=$STATE/log/slurmdbd.log
PidFile=${PIDFILE[slurmdbd]}
EOF
  chmod 600 /etc/slurm/slurmdbd.conf
  cat >/etc/slurm/slurm.conf <<EOF
# Written by scripts/slurm-local.sh (a single-node test cluster).
ClusterName=local
SlurmctldHost=$HOST
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=${PIDFILE[slurmctld]}
SlurmdPidFile=${PIDFILE[slurmd]}
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
# sacct shows the comment, which the Snakemake plugin sets to the rule (rule_<name>_wildcards_...)
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
# sample every second and kill a step above its memory request (no cgroups here)
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
JobCompType=jobcomp/none
# kill what a job leaves behind when it ends: without cgroups a process orphaned by its step
# escapes KillWait (scripts/slurm-epilog.sh)
Epilog=$STATE/epilog.sh
NodeName=$HOST CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
  if [ -n "${1:-}" ]; then echo "FirstJobId=$1" >>/etc/slurm/slurm.conf; fi
}

first_job_id() {
  # After the accounting database's last job: a fresh state directory would start again at 1
  # and sacct would show two jobs under one id.
  local last
  last=$(sacct -X -n -P -a -o JobIDRaw -S 2000-01-01 -E now 2>/dev/null | grep -Eo '^[0-9]+' | sort -n | tail -n 1 || true)
  echo $((${last:-0} + 1))
}

start_munge() {
  mkdir -p /run/munge "$STATE/munge"
  chown munge:munge /run/munge "$STATE/munge"
  runuser -u munge -- test -w "$STATE/munge" \
    || die "the munge user cannot write to $STATE/munge: put SLURM_LOCAL_DIR where every user can reach it (e.g. under /tmp)"
  runuser -u munge -- munged --pid-file="${PIDFILE[munged]}" --log-file="$STATE/munge/munged.log" \
    || fail "munged did not start"
  wait_for 20 "munge answering" sh -c 'munge -n | unmunge'
}

start_mariadb() {
  mkdir -p /run/mysqld "$STATE/mysql"
  chown mysql:mysql /run/mysqld "$STATE/mysql"
  setsid mariadbd --user=mysql --pid-file="${PIDFILE[mariadbd]}" --log-error="$STATE/mysql/mariadb.log" \
    </dev/null >/dev/null 2>&1 &
  wait_for 60 "MariaDB answering" mariadb-admin ping
  wait_for 10 "MariaDB's pid file" test -s "${PIDFILE[mariadbd]}"
  mariadb <<EOF || fail "could not create the accounting database"
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$(cat "$STATE/dbpass")';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF
}

register() {
  # sacctmgr add fails for what exists: add only what is missing.
  [ -n "$(sacctmgr -n -P show cluster local format=cluster)" ] || sacctmgr -i add cluster local >/dev/null
  [ -n "$(sacctmgr -n -P show account default format=account)" ] \
    || sacctmgr -i add account default Cluster=local Description=tests Organization=local >/dev/null
  [ -n "$(sacctmgr -n -P show user root format=user)" ] || sacctmgr -i add user root Account=default >/dev/null
  sacctmgr -n -P show association user=root format=account | grep -qx default \
    || sacctmgr -i add user root Account=default >/dev/null
}

node_idle() {
  sinfo -h -n "$HOST" -o %T | grep -qx idle
}

up() {
  [ "$(id -u)" = 0 ] || { say "error: must run as root (it installs packages and starts daemons)"; exit 3; }
  mkdir -p "$STATE"/{log,pids,slurmctld,slurmd}
  chmod 755 "$STATE"
  local running=0 name
  for name in "${ORDER[@]}"; do pid_of "$name" >/dev/null && running=$((running + 1)); done
  if [ $running = ${#ORDER[@]} ]; then
    say "already up (state $STATE)"
    return 0
  fi
  [ $running = 0 ] || { say "some daemons are up, others not: restarting all"; down; mkdir -p "$STATE"/{log,pids}; }
  install_packages
  refuse_foreign_daemons
  [ -s "$STATE/dbpass" ] || (umask 077 && head -c 18 /dev/urandom | base64 | tr -dc A-Za-z0-9 >"$STATE/dbpass")
  write_configs
  start_munge
  start_mariadb
  slurmdbd || fail "slurmdbd did not start"
  wait_for 60 "slurmdbd answering" sacctmgr -n show cluster
  register
  write_configs "$(first_job_id)"
  slurmctld || fail "slurmctld did not start"
  wait_for 60 "slurmctld answering" scontrol ping
  slurmd || fail "slurmd did not start"
  # A node drained or down in an earlier run's state comes back.
  sleep 1
  if ! node_idle; then scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true; fi
  wait_for 60 "node $HOST idle" node_idle
  for name in "${ORDER[@]}"; do
    pid_of "$name" >/dev/null || fail "$name is not running"
  done
  say "up: cluster local, node $HOST, partition main, account default (state $STATE)"
}

stop_daemon() {
  local name=$1 pid
  pid=$(pid_of "$name") || { rm -f "${PIDFILE[$name]}"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; do
    if [ $SECONDS -ge $deadline ]; then
      say "$name (pid $pid) ignored SIGTERM for 30 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.2
  done
  rm -f "${PIDFILE[$name]}"
  say "stopped $name (pid $pid)"
}

down() {
  [ "$(id -u)" = 0 ] || { say "error: must run as root"; exit 3; }
  # The jobs of this cluster first (their slurmstepd processes outlive slurmd otherwise).
  if pid_of slurmctld >/dev/null; then
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | tr '\n' ' ' || true)
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs $jobs"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      local deadline=$((SECONDS + 30))
      while [ -n "$(squeue -h -o %A 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
    fi
  fi
  local index
  for ((index = ${#ORDER[@]} - 1; index >= 0; index--)); do
    stop_daemon "${ORDER[$index]}"
  done
}

status() {
  local name pid code=0
  for name in "${ORDER[@]}"; do
    if pid=$(pid_of "$name"); then echo "$name running (pid $pid)"; else echo "$name not running"; code=1; fi
  done
  return $code
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  logs) logs ;;
  *) echo "usage: $0 up|down|status|logs" >&2; exit 2 ;;
esac
