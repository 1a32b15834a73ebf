"""The GPU backend: the CUDA kernels of gpu_kernels/ through CuPy (RawModule, NVRTC), the
same results bit for bit as the CPU backend (the contract: backends/__init__.py). CuPy is
imported only when a GPU is asked for, so this package imports without it."""
from __future__ import annotations

from .. import Backend


def available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU"
        return False


def backend(device: int = 0) -> Backend:
    """The GPU backend on GPU `device` modulo the GPUs visible, which becomes this process's
    current device (one worker, one GPU)."""
    import cupy

    from . import affine, align, band, local, qgrams, scan, seqdist

    cupy.cuda.Device(device % cupy.cuda.runtime.getDeviceCount()).use()
    return Backend(
        name="gpu",
        xp=cupy,
        to_host=cupy.asnumpy,
        pairs_per_batch=16_000_000,  # per batch the pruner's host work is ~50 ms
        full_pairs_per_call=1 << 21,  # the full kernel's resident pairs many times over
        seqdist=seqdist.aligner,
        seqdist_screen=seqdist.screener,
        seqdist_dense=seqdist.dense_aligner,
        seqdist_band=band.aligner,
        seqdist_upper=band.upper,
        qgram_shared=qgrams.QGramCounts,
        band_cost=band.COST,
        band_lower=band.LOWER,
        band_shared=band.SHARED,
        upper_cost=band.UPPER_COST,
        qgram_memory=qgrams.MEMORY,
        screen_cost=seqdist.SCREEN_COST,
        affine=affine.aligner,
        affine_counts=affine.counter,
        affine_screen=affine.screener,
        trace_affine=affine.tracer,
        local_scores=local.local_scores,
        align_ends=align.ends,
        align_starts=align.starts,
        trace_windows=align.trace_windows,
        trace_cells=align.TRACE_CELLS,
        scan_rows=scan.rows,
        scan_peaks=scan.peaks,
        scan_slots=scan.slots,
        scan_rows_per_call=scan.ROWS_PER_CALL,
    )
