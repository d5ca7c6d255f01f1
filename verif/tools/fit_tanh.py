#!/usr/bin/python3
"""Derives the vector unit's tanh segments (docs/vector.md, "tanh"): on |x| in [2^-4, 4), cut
into 4 equal pieces per binade, tanh(t) ~ c0 + t*(c1 + t*c2), each quadratic a least-squares fit
on Chebyshev nodes of its piece, the coefficients rounded to binary32. Prints the C++ table that
verif/src/vector.cpp and hw/src/vector/vector_unit.cpp hold (the golden model and the RTL each
state it; ctest -L vector checks every bf16 input through both).

Run: /usr/bin/python3 verif/tools/fit_tanh.py
"""
import numpy as np

SUB = 4            # pieces per binade (the top two mantissa bits)
EXP_LO, EXP_HI = -4, 2  # binades 2^-4 .. 2^1: |x| in [1/16, 4)


def f32_bits(v):
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


def main():
    rows = []
    for e in range(EXP_LO, EXP_HI):
        for s in range(SUB):
            lo = 2.0 ** e * (1 + s / SUB)
            hi = 2.0 ** e * (1 + (s + 1) / SUB)
            k = np.arange(64)
            t = (lo + hi) / 2 + (hi - lo) / 2 * np.cos((2 * k + 1) * np.pi / 128)
            c2, c1, c0 = np.polyfit(t, np.tanh(t), 2)
            rows.append((e, s, f32_bits(c0), f32_bits(c1), f32_bits(c2)))
    print("// exponent, piece: c0, c1, c2 (binary32 bits)")
    for e, s, c0, c1, c2 in rows:
        print(f"    {{0x{c0:08X}u, 0x{c1:08X}u, 0x{c2:08X}u}},  // 2^{e} x (1 + {s}/4)")


if __name__ == "__main__":
    main()
