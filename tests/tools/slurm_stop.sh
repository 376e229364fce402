#!/bin/bash
# slurm_stop.sh DIR: stops what tests/tools/slurm_setup.sh DIR started: slurmd and
# slurmctld by the PIDs in their pid files, and munged only when setup started it.
set -u
DIR=${1:?usage: slurm_stop.sh DIR}
stop() { # pidfile
	local pid
	pid=$(cat "$1" 2> /dev/null) || return 0
	[ -n "$pid" ] || return 0
	kill "$pid" 2> /dev/null || return 0
	for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || return 0; sleep 0.1; done
	kill -9 "$pid" 2> /dev/null
}
stop "$DIR/slurmd.pid"
stop "$DIR/slurmctld.pid"
stop "$DIR/munged.started"
exit 0
