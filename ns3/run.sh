#!/usr/bin/env bash
# run.sh DEST CONFIG: runs the ns-3 RDMA simulator built by build.sh in
# DEST on one configuration (a path under DEST/simulation, e.g.
# mix/config_fat320_ws30_hp95.txt), then prints its wall time, peak RSS
# and FCT slowdown percentiles: the sorted fct/ideal of its fct.txt at
# index floor(p n), as p4rcm's tests and docs take them.
set -euo pipefail
dest=${1:?usage: run.sh DEST CONFIG}
config=${2:?usage: run.sh DEST CONFIG}
cd "$dest/simulation"
name=$(basename "$config" .txt)
LD_LIBRARY_PATH=$PWD/build /usr/bin/time -f '%e %M' -o "$name.time" ./build/scratch/third "$config" >"$name.log" 2>&1
read -r wall rss <"$name.time"
echo "$config: wall $wall s, peak RSS $((rss / 1024)) MiB"
fct=$(awk '$1 == "FCT_OUTPUT_FILE" {print $2}' "$config")
awk '{printf "%.12g\n", $7 / $8}' "$fct" | sort -g | awk '
	{ s[NR - 1] = $1 }
	END {
		n = NR
		printf "flows %d, slowdown p50 %.4f p95 %.4f p99 %.4f\n", n, s[int(0.5 * n)], s[int(0.95 * n)], s[int(0.99 * n)]
	}'
