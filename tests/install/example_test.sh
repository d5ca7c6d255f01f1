#!/usr/bin/env bash
# example_test.sh BUILD_DIR EXAMPLE_DIR FETTA: install the package, build the example against it
# (nothing from the source tree on its include path), emit its RTL twice and lint it.
set -euo pipefail
build=$1 example=$2 fetta=$3
work=$(mktemp -d /tmp/fetta_install_test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in lib/cmake/fetta/fettaConfig.cmake lib/cmake/fetta/fettaTargets.cmake include/rtl_gen/rtl.hpp \
         include/hw/ce/delay_line.hpp include/arch/config.hpp include/mapper include/verif; do
  [ -e "$work/prefix/$f" ] || fail "the package lacks $f"
done
for lib in rtl_gen arch hw verif mapper; do
  ls "$work/prefix"/lib*/libfetta_$lib.a > /dev/null 2>&1 || ls "$work/prefix"/lib/*/libfetta_$lib.a > /dev/null 2>&1 \
    || fail "the package lacks libfetta_$lib.a"
done

cmake -S "$example" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configuring the example against the package"; }
cmake --build "$work/build" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the example"; }
# The example must not have seen the source tree's headers.
if grep -q -- "-I$(cd "$example/../.." && pwd)/" "$work/build/compile_commands.json" 2>/dev/null; then
  fail "the example compiled against the source tree"
fi

top=$("$work/build/custom_pe" "$work/rtl_a" 4)
"$work/build/custom_pe" "$work/rtl_b" 4 > /dev/null
[ "$top" = int8_pe_row_n4 ] || fail "top is '$top', expected int8_pe_row_n4"
diff -r "$work/rtl_a" "$work/rtl_b" > /dev/null || fail "two emissions differ"
grep -q "^// generator  : custom::Int8Pe (custom_pe.cpp:" "$work/rtl_a/int8_pe_p24.sv" \
  || fail "the generator's source line is not relative to the example: $(grep '^// generator' "$work/rtl_a/int8_pe_p24.sv")"
grep -q "delay_w8_d2" "$work/rtl_a/filelist.f" || fail "fetta::hw's DelayLine is not in the design"
"$fetta" lint --dir "$work/rtl_a" --top "$top" || fail "lint"
# Bad input gets a message, not a crash.
if "$work/build/custom_pe" "$work/rtl_c" 0 2> "$work/err.txt"; then fail "N = 0 was accepted"; fi
grep -q "allowed: 1..64" "$work/err.txt" || fail "N = 0: $(cat "$work/err.txt")"
echo "PASS: installed to $work/prefix, built examples/custom_pe against it, emitted $top, lint clean"
