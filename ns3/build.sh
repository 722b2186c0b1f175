#!/usr/bin/env bash
# build.sh SRC DEST: builds the ns-3 RDMA simulator of the HPCC paper for
# side-by-side runs with p4rcm, and gives it the benchmark's inputs.
#
# SRC is a checkout or a git directory of the public repository
# alibaba-edu/High-Precision-Congestion-Control (commit 9f4be2a was used
# for every figure in docs/ns3.md); DEST a directory outside this
# repository, e.g. /opt/ns3-rdma. Its waf and run.py need Python 2:
# python2 on the PATH, PYENV_VERSION naming a pyenv 2.7, or PY2=/path.
# About 10-15 minutes on 2 idle cores.
set -euo pipefail
src=${1:?usage: build.sh SRC DEST}
dest=${2:?usage: build.sh SRC DEST}
repo=$(cd "$(dirname "$0")/.." && pwd)

py2=${PY2:-}
if [ -z "$py2" ]; then
	if command -v python2 >/dev/null 2>&1; then
		py2=python2
	elif command -v pyenv >/dev/null 2>&1 && v=$(pyenv versions --bare | grep -m1 '^2\.7'); then
		export PYENV_VERSION=$v
		py2=python2
	else
		echo "build.sh: no Python 2 (install one with pyenv, or give PY2=/path/to/python2)" >&2
		exit 2
	fi
fi

mkdir -p "$dest"
if [ -d "$src/.git" ] || git --git-dir="$src" rev-parse >/dev/null 2>&1; then
	gitdir=$src
	[ -d "$src/.git" ] && gitdir=$src/.git
	git --git-dir="$gitdir" archive HEAD | tar -x -C "$dest"
else
	cp -r "$src"/. "$dest"
fi

cd "$dest/simulation"
# The optimised profile compiles with -O3; a CXXFLAGS in the environment
# would replace its flags and halve the simulator's speed.
unset CXXFLAGS
nice "$py2" ./waf configure --build-profile=optimized --disable-python --disable-examples --disable-tests
nice "$py2" ./waf build -j"$(nproc)"

# The benchmark: p4rcm's bench-fat320 preset's topology and flows, and
# the four reference configurations, under the names they give.
cp "$repo/sim/scenario/data/fat320.topo.txt" mix/fat320.txt
cp "$repo/sim/scenario/data/websearch30_10ms.flows.txt" mix/ws30.txt
cp "$repo"/sim/scenario/testdata/ns3/config_fat320_ws30_*.txt mix/
ls mix/config_fat320_ws30_*.txt
