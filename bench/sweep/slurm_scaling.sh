#!/usr/bin/env bash
# Wall time of one grid swept on this machine (--jobs 1, 2) and through a throwaway single-node
# Slurm cluster declared with 2, 4 and 8 CPUs (8 oversubscribes a 2-core machine: it shows the
# overhead), then the scaling table (bench/sweep/scaling.py): per-task scheduler overhead and the
# wall time expected on N nodes from the per-point times. Needs root and the Slurm packages.
#   bench/sweep/slurm_scaling.sh [grid] [out-dir]    (defaults: scripts/grids/paper.yaml, out/slurm_scaling)
# Run it from a build tree of its own (FETTA=/path/to/fetta from a git worktree): it takes hours on
# paper.yaml in RTL. Finished runs are kept (OUT/<run>/time.json) and skipped when it is run again.
set -euo pipefail
grid=${1:-scripts/grids/paper.yaml}
out=$(realpath -m "${2:-out/slurm_scaling}")
fetta=$(realpath "${FETTA:-./build/fetta}")
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export FETTA_CACHE_DIR=$out/cache   # one model cache for every run: the first run builds the models
timed() {  # name, then the sweep's own options
  local name=$1; shift
  [ -s "$out/$name/time.json" ] && { echo "== $name: done before"; return; }
  rm -rf "$out/$name"
  local t0 t1
  t0=$(date +%s.%N)
  "$fetta" sweep --grid "$grid" --out "$out/$name" "$@" 2> "$out/$name.log"
  t1=$(date +%s.%N)
  local wall
  wall=$(/usr/bin/python3 -c "print(round($t1 - $t0, 3))")
  echo "{\"run\": \"$name\", \"wall_s\": $wall}" > "$out/$name/time.json"
  echo "== $name: $wall s"
}
# Warm the model cache first, so no run pays the Verilator builds the others do not: the same
# points on the grid's first layer and fp only (the cache is keyed by the RTL, not the layers).
[ -s "$out/warmup/results.jsonl" ] || {
  /usr/bin/python3 - "$grid" "$out/warmup_grid.yaml" <<'PY'
import sys, yaml
g = yaml.safe_load(open(sys.argv[1]))
g["layers"] = g["layers"][:1]
g["phases"] = ["fp"]
yaml.safe_dump(g, open(sys.argv[2], "w"), sort_keys=False)
PY
  "$fetta" sweep --grid "$out/warmup_grid.yaml" --out "$out/warmup" --jobs 2 2> "$out/warmup.log"
}
timed local_j1 --jobs 1
timed local_j2 --jobs 2
for cpus in 2 4 8; do
  [ -s "$out/slurm_c$cpus/time.json" ] && { echo "== slurm_c$cpus: done before"; continue; }
  export D=$out/cluster_c$cpus
  rm -rf "$D"
  trap '"$src/scripts/slurm/down.sh"' EXIT
  CPUS=$cpus "$src/scripts/slurm/up.sh"
  SLURM_CONF=$D/etc/slurm.conf timed "slurm_c$cpus" --backend slurm
  "$src/scripts/slurm/down.sh"
  trap - EXIT
done
/usr/bin/python3 "$src/bench/sweep/scaling.py" "$out"
