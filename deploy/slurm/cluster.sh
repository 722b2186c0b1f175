#!/usr/bin/env bash
# Starts and stops a one-node Slurm cluster on this machine, for trying
# submit.sh without a real cluster: munged, slurmctld and slurmd, with a
# key, sockets, ports, state and logs of their own, all under DIR.
#
#   deploy/slurm/cluster.sh start DIR   # prints the SLURM_CONF to export
#   deploy/slurm/cluster.sh stop DIR    # stops the three daemons by PID
#
# Needs root (slurmd starts jobs as their user) and Debian's slurm-wlm and
# munge packages (apt-get install slurm-wlm munge). DIR is made if it does
# not exist; munged refuses a DIR that everyone cannot search into.
# deploy_test.go's TestSlurmStudy starts and stops its cluster with this
# script.
set -euo pipefail

usage() {
	echo "usage: $0 start|stop DIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
action=$1
dir=$2

# stop_pid ends the process whose PID file is $1 (TERM, then KILL after
# 10 s) and removes the file.
stop_pid() {
	local file=$1 pid i
	[ -s "$file" ] || return 0
	pid=$(cat "$file")
	if kill -TERM "$pid" 2>/dev/null; then
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$file"
}

# free_port prints a TCP port on which nothing listens on loopback.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (: >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

stop() {
	stop_pid "$dir/slurmd.pid"
	stop_pid "$dir/slurmctld.pid"
	stop_pid "$dir/munge-sock/munged.pid"
}

start() {
	if [ "$(id -u)" != 0 ]; then
		echo "$0: needs root: slurmd starts jobs as the user who submitted them" >&2
		exit 1
	fi
	local cmd
	for cmd in munged slurmctld slurmd sinfo; do
		if ! command -v "$cmd" >/dev/null; then
			echo "$0: $cmd is not installed (Debian: apt-get install slurm-wlm munge)" >&2
			exit 1
		fi
	done
	if ! id munge >/dev/null 2>&1; then
		echo "$0: no munge user (Debian's munge package makes it)" >&2
		exit 1
	fi
	if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
		echo "$0: $dir holds a running cluster; stop it first, or give another directory" >&2
		exit 1
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	chmod 755 "$dir"
	# munged checks that every directory above its socket is searchable
	# by all.
	local d=$dir
	while [ "$d" != / ]; do
		d=$(dirname "$d")
		if [ "$(stat -c %A "$d" | cut -c10)" != x ] && [ "$(stat -c %A "$d" | cut -c10)" != t ]; then
			echo "$0: $d is not searchable by all, which munged needs; give a directory elsewhere (or chmod o+x $d)" >&2
			exit 1
		fi
	done

	# munged, as the munge user, with a key and socket of its own.
	install -d -m 700 -o munge -g munge "$dir/munge-key"
	install -d -m 755 -o munge -g munge "$dir/munge-sock"
	head -c 1024 /dev/urandom >"$dir/munge-key/munge.key"
	chown munge:munge "$dir/munge-key/munge.key"
	chmod 400 "$dir/munge-key/munge.key"
	local socket=$dir/munge-sock/munge.sock
	runuser -u munge -- munged --socket="$socket" --key-file="$dir/munge-key/munge.key" \
		--pid-file="$dir/munge-sock/munged.pid" --log-file="$dir/munge-key/munged.log" \
		--seed-file="$dir/munge-key/munged.seed"
	wait_for "munged's socket" 50 test -S "$socket"

	mkdir -p "$dir/state" "$dir/spool" "$dir/log"
	cat >"$dir/slurm.conf" <<EOF
ClusterName=p4rcmtest
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=600
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=p4rcm Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF=$dir/slurm.conf
	# -c: start afresh, whatever state an earlier cluster left in DIR.
	slurmctld -c -f "$SLURM_CONF"
	slurmd -N localhost -f "$SLURM_CONF"
	wait_for "the node to be idle" 150 node_idle
	echo "export SLURM_CONF=$SLURM_CONF"
}

node_idle() {
	[ "$(sinfo -h -o %T 2>/dev/null)" = idle ]
}

# wait_for WHAT TRIES COMMAND... runs COMMAND every 0.2 s until it
# succeeds, or stops the cluster and fails after TRIES tries.
wait_for() {
	local what=$1 tries=$2 i
	shift 2
	for i in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.2
	done
	echo "$0: waited $((tries / 5)) s for $what; logs in $dir/log and $dir/munge-key" >&2
	stop
	exit 1
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
