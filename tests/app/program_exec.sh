#!/bin/sh
# fetta compile + fetta exec reproduce fetta run (and fetta compile --json predicts its end to end
# and where its intermediates go): the same instruction and write streams (their
# digests), the same cycles and results per contraction. A program is refused on another
# configuration's top; --inputs replaces the seed's tensors (the dumps of a run read back give the
# same results under another seed, and another seed alone does not).
#   program_exec.sh <fetta> <work dir> <cache dir>
set -eu
fetta=$1 work=$2 cache=$3
rm -rf "$work" && mkdir -p "$work"
cfg=configs/ce2x4_x8.yaml
layers="--layer configs/layers/tt_small.yaml --layer configs/layers/bt_small.yaml"
# shellcheck disable=SC2086  # $layers is a list of options
"$fetta" compile --config $cfg $layers --out "$work/prog"
# shellcheck disable=SC2086
"$fetta" compile --config $cfg $layers --out "$work/prog-json" --json > "$work/compile.json"
"$fetta" exec --program "$work/prog" --cache-dir "$cache" --json > "$work/exec.json"
# shellcheck disable=SC2086
"$fetta" run --config $cfg $layers --cache-dir "$cache" --json > "$work/run.json"
python3 - "$work/run.json" "$work/exec.json" "$work/compile.json" <<'PY'
import json, sys
run, ex, comp = (json.load(open(f)) for f in sys.argv[1:4])
# fetta compile --json predicts what the run reports: the model's end to end, the bound, the fates.
for k in ("model_cycles", "bound_cycles", "least_dram_bytes"):
    assert comp["end_to_end"][k] == run["end_to_end"][k], (k, comp["end_to_end"][k], run["end_to_end"][k])
assert comp["intermediates"] == run["intermediates"], (comp["intermediates"], run["intermediates"])
assert comp["intermediates"]["count"] == sum(1 for s in run["steps"] if s["fate"] != "result") > 0
assert comp["intermediates"]["on_chip"] == sum(1 for s in run["steps"] if s["kept_on_chip"])
assert comp["contractions"] == len(run["steps"])
assert run["streams"] == ex["streams"], (run["streams"], ex["streams"])
keys = ("mapping", "cycles", "host_cycles", "store_cycles", "dram_cycles", "dram_bytes", "mismatches", "kept_on_chip")
assert len(run["steps"]) == len(ex["steps"]) > 0
for a, b in zip(run["steps"], ex["steps"]):
    for k in keys:
        assert a[k] == b[k], (k, a[k], b[k])
assert sum(s["mismatches"] + s["stored_mismatches"] for s in ex["steps"]) == 0
print(f"compile + exec = run: {len(ex['steps'])} contractions, streams {ex['streams']['instructions_fnv1a']}")
PY
# Another configuration's top: refused before anything is built, naming both hw_ids.
if "$fetta" exec --program "$work/prog" --config configs/ce4x4_x4.yaml --cache-dir "$work/no-cache" 2> "$work/other.err"; then
  echo "FAIL: the program ran on another configuration"; exit 1
fi
grep -q "hw_id" "$work/other.err" || { cat "$work/other.err"; exit 1; }
test ! -e "$work/no-cache" || { echo "FAIL: a model was built for a refused program"; exit 1; }
# --inputs: seed 1's dumped inputs under seed 7 give seed 1's results.
"$fetta" exec --program "$work/prog" --cache-dir "$cache" --json --dump-dir "$work/d1" > /dev/null
"$fetta" exec --program "$work/prog" --cache-dir "$cache" --json --seed 7 --inputs "$work/d1" --dump-dir "$work/d2" > /dev/null
"$fetta" exec --program "$work/prog" --cache-dir "$cache" --json --seed 7 --dump-dir "$work/d3" > /dev/null
n=0
for f in "$work"/d1/*.npy; do
  cmp -s "$f" "$work/d2/$(basename "$f")" || { echo "FAIL: $(basename "$f") differs with --inputs"; exit 1; }
  cmp -s "$f" "$work/d3/$(basename "$f")" || n=$((n + 1))
done
test "$n" -gt 0 || { echo "FAIL: seed 7 gave seed 1's tensors: --inputs is not what made them equal"; exit 1; }
echo "--inputs: $(ls "$work"/d1/*.npy | wc -l) tensors equal to seed 1's; $n differ under seed 7 alone"
# --inputs is checked whole before anything simulates: a file of layer 2 (bt_small) with another
# tensor's shape is refused, naming it, before layer 1 runs.
mkdir -p "$work/d4"
cp "$work"/d1/*.npy "$work/d4/"
cp "$work/d1/tt_small_in_X.npy" "$work/d4/bt_small_in_X.npy"
if "$fetta" exec --program "$work/prog" --cache-dir "$cache" --inputs "$work/d4" > "$work/d4.out" 2> "$work/d4.err"; then
  echo "FAIL: a wrong-shaped input of layer 2 was accepted"; exit 1
fi
grep -q "bt_small_in_X.npy holds <u2 of shape" "$work/d4.err" || { cat "$work/d4.err"; exit 1; }
if grep -q "tt_small fp" "$work/d4.err"; then echo "FAIL: layer 1 simulated before the bad input was found"; exit 1; fi
# Two layers with different contents whose file names collide ("tt small" and "tt_small") are
# refused with --dump-dir instead of overwriting each other's dumps.
sed 's/^name: tt_small/name: tt small/; s/^batch: .*/batch: 3/' configs/layers/tt_small.yaml > "$work/tt_space.yaml"
if "$fetta" run --config $cfg --layer configs/layers/tt_small.yaml --layer "$work/tt_space.yaml" --phases fp --cache-dir "$cache" \
    --dump-dir "$work/d5" > /dev/null 2> "$work/d5.err"; then
  echo "FAIL: colliding dump names were accepted"; exit 1
fi
grep -q "both name their files tt_small_\*.npy" "$work/d5.err" || { cat "$work/d5.err"; exit 1; }
echo "--inputs checked whole before simulating; colliding dump names refused"
