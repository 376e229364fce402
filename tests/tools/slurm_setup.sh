#!/bin/bash
# slurm_setup.sh DIR: a real single-node Slurm for the fleet tests and benchmark.
# Installs slurm-wlm and munge with apt-get when they are missing, starts munged (unless
# one already answers), then slurmctld and slurmd with a configuration, state and logs in
# DIR on free ports, and waits until the node is idle. Writes DIR/env.sh (source it: it
# exports SLURM_CONF). Stop everything it started with tests/tools/slurm_stop.sh DIR.
# On failure it prints the daemon's own error (log tail) and exits 1.
set -u
DIR=${1:?usage: slurm_setup.sh DIR}
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd) || exit 1
die() {
	echo "slurm_setup: $*" >&2
	for f in /var/log/munge/munged.log "$DIR/slurmctld.log" "$DIR/slurmd.log"; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
	done
	exit 1
}

if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null ||
   ! command -v sbatch > /dev/null || ! command -v munged > /dev/null; then
	[ "$(id -u)" = 0 ] || die "slurm-wlm and munge are not installed and we are not root"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y slurm-wlm munge > "$DIR/apt.log" 2>&1 ||
		{ apt-get update > /dev/null 2>&1 &&
		  apt-get install -y slurm-wlm munge > "$DIR/apt.log" 2>&1; } ||
		die "apt-get install slurm-wlm munge failed: $(tail -n 3 "$DIR/apt.log")"
fi

[ -c /dev/null ] || die "/dev/null is not a character device (something replaced it), so munged cannot start; restore it: rm /dev/null && mknod -m 666 /dev/null c 1 3"

# munge: reuse a running daemon, else start one (as the munge user, as Debian does).
if ! munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
	[ -s /etc/munge/munge.key ] || die "no /etc/munge/munge.key (the munge package creates it)"
	mkdir -p /run/munge && chown munge:munge /run/munge 2> /dev/null
	runuser -u munge -- munged > "$DIR/munged.out" 2>&1 ||
		die "munged did not start: $(cat "$DIR/munged.out")"
	for _ in $(seq 50); do munge -n 2> /dev/null | unmunge > /dev/null 2>&1 && break; sleep 0.1; done
	munge -n | unmunge > /dev/null 2>&1 || die "munge does not answer"
	pid=$(cat /run/munge/munged.pid 2> /dev/null || pgrep -u munge -n -x munged)
	echo "$pid" > "$DIR/munged.started"
fi

free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		ss -ltn 2> /dev/null | awk '{print $4}' | grep -q ":$p\$" || { echo "$p"; return; }
	done
	die "no free port"
}
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ { m = int($2 / 1024 * 0.8); print (m > 20000 ? 20000 : m) }' /proc/meminfo)
CP=$(free_port)
DP=$(free_port)
[ "$CP" != "$DP" ] || DP=$((CP + 1))
mkdir -p "$DIR/state" "$DIR/spool"
cat > "$DIR/slurm.conf" <<EOF
ClusterName=nx
SlurmctldHost=$HOST
SlurmctldPort=$CP
SlurmdPort=$DP
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MaxArraySize=100001
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$DIR/slurm.conf
echo "export SLURM_CONF='$DIR/slurm.conf'" > "$DIR/env.sh"
slurmctld -i > "$DIR/slurmctld.out" 2>&1 || die "slurmctld did not start: $(cat "$DIR/slurmctld.out")"
slurmd > "$DIR/slurmd.out" 2>&1 || die "slurmd did not start: $(cat "$DIR/slurmd.out")"
for _ in $(seq 150); do
	st=$(sinfo -h -o %t 2> /dev/null | head -n 1)
	[ "$st" = idle ] && exit 0
	sleep 0.2
done
die "the node did not become idle within 30 s (sinfo says '${st:-nothing}')"
