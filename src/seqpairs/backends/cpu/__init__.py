"""The CPU backend: Numba kernels on the CPU cores (the contract: backends/__init__.py)."""
from __future__ import annotations

import numpy as np

from .. import Backend
from . import affine, local, seqdist, trace_affine, trace_seqdist

BACKEND = Backend(
    name="cpu",
    xp=np,
    to_host=np.asarray,
    pairs_per_batch=250_000,
    seqdist=seqdist.aligner,
    seqdist_screen=None,
    affine=affine.aligner,
    local_scores=local.local_scores,
    trace_seqdist=trace_seqdist.trace_pairs,
    trace_affine=trace_affine.trace_pairs,
)
