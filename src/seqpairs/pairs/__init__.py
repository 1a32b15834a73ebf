"""Engines of the pair space: tiling.py (length bins and tiles: the binning stage),
distance.py (all-pairs distances through a backend), identity.py (vsearch's identity
definitions and bounds from the kernels' counts), filter.py (the identity filter)."""
