"""Compute backends for the pairwise kernels: `cpu` (Numba) now, `gpu` (CuPy) later.

Every backend computes, for each pair (A, B), the SeqDist alignment's
cost (float64), length (SeqDist's normalising length), matches (identical columns)
and aligned (columns from the first aligned pair on, trailing end gaps excluded), all
bit-identical to the pure-Python reference in tests/reference.py.
"""
