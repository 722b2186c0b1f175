#!/usr/bin/env bash
# Submits a p4ctl experiment study to Slurm: N shards as a job array and a
# merge job that runs when all of them have succeeded.
#
#   deploy/slurm/submit.sh -n SHARDS -d STUDY_DIR [-p P4CTL] [-- SBATCH_OPTIONS...] -- EXPERIMENT_ARGS...
#
# STUDY_DIR must be on a file system every node sees; the shards write
# STUDY_DIR/parts/<i> and the merge STUDY_DIR/study. P4CTL is the p4ctl
# binary the nodes run (default: p4ctl on their PATH). Options for sbatch
# (partition, account, time) go between the first -- and the second.
# Prints the array job's and the merge job's IDs.
set -euo pipefail

usage() {
	echo "usage: $0 -n SHARDS -d STUDY_DIR [-p P4CTL] [-- SBATCH_OPTIONS... ] -- EXPERIMENT_ARGS..." >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
shards= dir= p4ctl=${P4CTL:-p4ctl}
while getopts "n:d:p:" opt; do
	case $opt in
	n) shards=$OPTARG ;;
	d) dir=$OPTARG ;;
	p) p4ctl=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1)) # getopts has taken the first --, if given
case $shards in '' | *[!0-9]* | 0) echo "$0: -n wants a number of shards, 1 or more" >&2; usage ;; esac
[ -n "$dir" ] || usage
[ $# -gt 0 ] || usage
# With a second --, what comes before it is for sbatch.
sbatch_opts=()
for a in "$@"; do
	if [ "$a" = -- ]; then
		while [ "$1" != -- ]; do
			sbatch_opts+=("$1")
			shift
		done
		shift
		break
	fi
done

mkdir -p "$dir/parts"
dir=$(cd "$dir" && pwd)
# The study is checked before anything is queued: a bad argument fails
# here, not in every task.
"$p4ctl" experiment "$@" --shard "0/$shards" --list-runs >/dev/null

export STUDY_DIR=$dir P4CTL=$p4ctl
array=$(sbatch --parsable --array="0-$((shards - 1))" --chdir="$dir" --export=ALL "${sbatch_opts[@]}" "$here/shard.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --chdir="$dir" --export=ALL "${sbatch_opts[@]}" "$here/merge.sbatch")
merge=${merge%%;*}
echo "$array $merge"
