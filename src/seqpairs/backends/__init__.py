"""Compute backends for the pairwise kernels: `cpu` (Numba) and `gpu` (CUDA through CuPy).

SeqDist scoring (cpu.py, gpu.aligner): per pair (A, B) the alignment's cost (float64)
and counts (SeqDist's length, matches, aligned columns, leading end gaps), bit-identical
to the pure-Python reference in tests/reference.py; on the GPU also a screen
(gpu.screener: cost, length, matches, aligned pairs) that the distance stage runs first
when its filter drops pairs. Integer affine scoring
(cpu_affine.py, gpu.affine_aligner, seqpairs.affine): score and length, identical to
tests/reference_affine.py. Each backend module offers `array_module()` and `to_host()`
so that the distance stage keeps pairs in the backend's own arrays.
"""
