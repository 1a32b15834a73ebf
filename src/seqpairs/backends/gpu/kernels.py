"""The CUDA kernels of gpu_kernels/ and their variants, as data: one row per compiled
variant (source file, entry point, -D options over the shared code, register cap), the
dispatch table every GPU kernel family builds from. CuPy compiles a variant with NVRTC
the first time it is used; `python -m seqpairs.backends.gpu.kernels` compiles every row
with nvcc for Hopper (CI does, without a GPU).

Sources: the package data seqpairs.gpu_kernels of an install (pyproject.toml), or
gpu_kernels/ of the source tree when the package runs from src/ (the workflow's jobs).
"""
from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path

from ...scoring import get as scheme
from ...scoring.seqdist import LOWER_SHRINK, LOWER_UNITS

BLOCK = 128  # threads per block of the one-thread-per-pair kernels


@dataclass(frozen=True)
class Variant:
    source: str  # a file of gpu_kernels/
    function: str  # its extern "C" entry point
    defines: dict = field(default_factory=dict)  # -DNAME=VALUE
    max_registers: int | None = None  # per thread; None: the compiler's choice

    def tuned(self, **knobs) -> Variant:
        """This variant with some of its defines (keywords: their names in lower case) or its
        register cap (max_registers; None: the compiler's choice) changed."""
        cap = knobs.pop("max_registers", self.max_registers)
        unknown = [k for k in knobs if k.upper() not in self.defines]
        if unknown:
            raise TypeError(f"{self.function} has no define {', '.join(unknown)}")
        return self.with_defines(**knobs).with_cap(cap)

    def with_defines(self, **defines) -> Variant:
        """This variant with more defines (keywords: their names in lower case)."""
        return replace(self, defines={**self.defines,
                                      **{k.upper(): v for k, v in defines.items()}})

    def with_cap(self, max_registers: int | None) -> Variant:
        return replace(self, max_registers=max_registers)

    def options(self) -> tuple[str, ...]:
        cap = (f"--maxrregcount={self.max_registers}",) if self.max_registers else ()
        return ("--std=c++17", *(f"-D{k}={v}" for k, v in self.defines.items()), *cap)

    def function_handle(self):
        """The compiled entry point (cupy.RawKernel), compiled once per variant."""
        return _compile(self.source, self.function, self.options())


def seqdist_defines(seqdist_scheme) -> dict:
    """The gap costs of a SeqDistScheme as seqdist.cu's and band.cu's defines (repr: the
    exact double), with the banded kernel's lower bound per gap, its lower band's weights
    (the scheme's lower_weights: its gaps, and what makes its substitutions) and the upper
    bounds' gaps (upper_weights)."""
    plain_gap, least_gap = seqdist_scheme.lower_weights[1]
    upper_gap, upper_dear = seqdist_scheme.upper_weights[1]
    return {"gap": repr(seqdist_scheme.gap),
            "homopolymer_gap": repr(seqdist_scheme.homopolymer_gap),
            "cheapest_gap_shrunk": repr(seqdist_scheme.cheapest_gap_shrunk),
            "lower_plain_gap": plain_gap, "lower_least_gap": least_gap,
            "lower_shrink": repr(LOWER_SHRINK), "lower_units": LOWER_UNITS,
            "upper_gap": upper_gap, "upper_dear": upper_dear}


# Strips and register caps: the best measured on an H100 (benchmarks/RESULTS.md).
VARIANTS = {
    "seqdist": Variant("seqdist.cu", "seqdist_pairs", {"STRIP": 16, "ROWS": 2}, 168),
    "seqdist_screen": Variant("seqdist.cu", "seqdist_screen", {"STRIP": 24, "ROWS": 2}, 168),
    # the screen without matches: the dense outputs' cost and length
    "seqdist_dense": Variant("seqdist.cu", "seqdist_screen", {"STRIP": 24, "ROWS": 2,
                                                             "MATCHES": 0}, 168),
    # exact pruning (band.cu): the band's half-widths the GPU runs (registers per slot),
    # alone and with a lower band (seqdist_band_W_LOWER, after seqdist_lower_W_LOWER), and
    # the q-gram counts
    # (the band of 8 with a lower band of 48 capped at 128 registers: 4 blocks an SM, 56
    # bytes spilled, 6% faster than 140 unspilled at 3 (H200); its lower band at 168)
    "seqdist_band_8": Variant("band.cu", "seqdist_band", {"WIDTH": 8}, 168),
    "seqdist_band_12": Variant("band.cu", "seqdist_band", {"WIDTH": 12}),
    **{f"seqdist_{part}_{w}_{lower}": Variant("band.cu", f"seqdist_{part}",
                                               {"WIDTH": w, "LOWER": lower}, cap)
       for part, w, lower, cap in (("band", 8, 24, 168), ("lower", 8, 24, None),
                                   ("band", 8, 48, 128), ("lower", 8, 48, 168),
                                   ("band", 12, 32, None), ("lower", 12, 32, None))},
    "seqdist_upper_4": Variant("band.cu", "seqdist_upper", {"WIDTH": 4}),
    "seqdist_upper_8": Variant("band.cu", "seqdist_upper", {"WIDTH": 8}),
    "qgram_bitsets": Variant("qgrams.cu", "qgram_bitsets"),
    "qgram_shared": Variant("qgrams.cu", "qgram_shared"),
    "qgram_densest": Variant("qgrams.cu", "qgram_densest"),
    # affine: a launch takes the strip of these that pads its pairs' columns least
    # (backends/gpu/affine.py): 36 for ~250 bp (7 x 36 = 252 columns, 40 pads to 280).
    # AHEAD: rows whose left boundary is read before they are computed (1: the row
    # before), the best of a sweep on an H200 for each 32-bit strip (benchmarks/RESULTS.md);
    # the 64-bit builds, not swept, take 2 (their states hold twice the registers)
    "affine_32": Variant("affine.cu", "affine_pairs_32", {"STRIP": 40, "AHEAD": 4}, 168),
    "affine_32_narrow": Variant("affine.cu", "affine_pairs_32", {"STRIP": 36, "AHEAD": 2}, 168),
    "affine_64": Variant("affine.cu", "affine_pairs_64", {"STRIP": 40, "AHEAD": 2}, 168),
    "affine_64_narrow": Variant("affine.cu", "affine_pairs_64", {"STRIP": 36, "AHEAD": 2}, 168),
    # the exact screen of affine passes (any alphabet of up to 32 letters), a block's
    # pairs sharing B and its profile (read LOAD bytes at a time)
    "affine_screen": Variant("affine_screen.cu", "affine_screen",
                             {"STRIP": 32, "LOAD": 16, "AHEAD": 4}, 168),
    # vsearch's traced alignment (4-bit moves, a word per 8 columns): the kept pairs'
    # alignments, and every pair's counts alone (affine_counts); four letters' scores
    # packed in a word per column, or (_table) any alphabet's table in shared memory
    **{f"affine_trace{counts}{table}": Variant(
        "affine_trace.cu", f"affine_trace{counts}",
        {"STRIP": 8, "TABLE": int(table == "_table"), "AHEAD": 4}, 128)
       for counts in ("", "_counts") for table in ("", "_table")},
    # seqpairs align, one thread per pair: score and end, then the start (reverse pass);
    # a column's scores in a word (alphabets of up to 4 letters) or a shared table. Strips
    # and caps: the fastest forward pass of a sweep on ADEPT's shapes (H200, RESULTS.md)
    "align_ends_word": Variant("align.cu", "align_pairs", {"STRIP": 20, "WORD": 1,
                                                          "REVERSE": 0}, 112),
    "align_ends_table": Variant("align.cu", "align_pairs", {"STRIP": 28, "WORD": 0,
                                                           "REVERSE": 0}, 128),
    # the local passes, two pairs a thread in 16-bit halves (scores < 2^15)
    "align_ends_pairs": Variant("align.cu", "align_local_pairs", {"STRIP": 24, "WORD": 1,
                                                                 "REVERSE": 0, "TWO": 1}, 168),
    "align_starts_pairs": Variant("align.cu", "align_local_pairs", {"STRIP": 24, "WORD": 1,
                                                                   "REVERSE": 1, "TWO": 1}, 168),
    # the alignment of each window between start and end, a thread a window
    "align_trace": Variant("align.cu", "align_trace", {"TRACE": 1, "WORD": 0}),
    # long pairs, a warp a pair (32 lanes x COLS columns a tile), 32 bits, every mode
    **{f"align_{name}_long_{fetch}": Variant(
        "align.cu", "align_long", {"COLS": 8, "WORD": int(fetch == "word"),
                                   "REVERSE": int(name == "starts"), "LONG": 1})
       for name in ("ends", "starts") for fetch in ("word", "table")},
    # seqpairs scan: every row's best along a block of a long target, a thread block of
    # SCAN_WARPS warps a block (a tile of 32 x COLS query columns each, in a wavefront);
    # backends/gpu/scan.py picks the warps by the query's tiles; keys of 32 bits where
    # the scores allow (_key32). COLS 16 against 8: 1,325 / 1,160 GCUPS at 4,096 query
    # letters, 1,210 / 1,126 at 1,024 (H100, benchmarks/RESULTS.md)
    # (_anchored: kernel 2's reverse pass, borders that pay and no floor)
    **{f"scan_rows_{fetch}_{warps}{'_key32' if key32 else ''}{'_anchored' if anchored else ''}":
       Variant("align.cu", "scan_rows", {"COLS": 16, "WORD": int(fetch == "word"),
                                         "REVERSE": 0, "LONG": 1, "SCAN_WARPS": warps,
                                         "KEY32": key32, "ANCHORED": anchored})
       for fetch in ("word", "table") for warps in (2, 4, 8, 16) for key32 in (0, 1)
       for anchored in (0, 1)},
    # scan's peaks from the row keys (32 or 64 bits): segment maxima, then a thread a row
    **{f"{function}{'_key32' if key32 else ''}": Variant("scan_peaks.cu", function,
                                                       {"KEY32": key32})
       for function in ("scan_segments", "scan_peaks") for key32 in (0, 1)},
    # the windows' alignments, a thread block a window (scan_rows' wavefront, 4-bit moves)
    **{f"trace_long_{fetch}_{warps}": Variant(
        "align.cu", "trace_long", {"COLS": 16, "WORD": int(fetch == "word"), "REVERSE": 0,
                                   "LONG": 1, "SCAN_WARPS": warps})
       for fetch in ("word", "table") for warps in (1, 2, 4, 8, 16)},
    # the same for larger alphabets (protein), a profile per thread in shared memory
    "align_ends_pairs_profile": Variant("align.cu", "align_local_pairs",
                                        {"STRIP": 16, "WORD": 0, "REVERSE": 0, "TWO": 1}, 168),
    "align_starts_pairs_profile": Variant("align.cu", "align_local_pairs",
                                          {"STRIP": 16, "WORD": 0, "REVERSE": 1, "TWO": 1}, 168),
    "align_starts_word": Variant("align.cu", "align_pairs", {"STRIP": 20, "WORD": 1,
                                                            "REVERSE": 1}, 112),
    "align_starts_table": Variant("align.cu", "align_pairs", {"STRIP": 28, "WORD": 0,
                                                             "REVERSE": 1}, 128),
    # PSSE, one block per group of pairs sharing a target: two shuffles per thread in
    # 16-bit lanes with a score word per letter pair (small alphabets) or an int8 profile,
    # or one shuffle in 32 bits; each also with the queries' PSSMs (_pssm)
    **{f"{name}{suffix}": Variant("local.cu", "psse_local",
                                  {"STRIP": strip, "LANES": lanes, "WORD_PROFILE": word,
                                   "BLOCK": BLOCK, "PSSM": pssm}, 128)
       for name, strip, lanes, word in (("local_16_word", 28, 2, 1),
                                        ("local_16_int8", 32, 2, 0), ("local_32", 24, 1, 1))
       for suffix, pssm in (("", 0), ("_pssm", 1))},
}


SEQDIST_SOURCES = ("seqdist.cu", "band.cu")  # the files that take seqdist_defines


def source(name: str) -> str:
    """The text of gpu_kernels/<name>."""
    try:
        return files("seqpairs.gpu_kernels").joinpath(name).read_text()
    except ModuleNotFoundError:  # the package runs from the source tree (src/ on the path)
        return (Path(__file__).resolve().parents[4] / "gpu_kernels" / name).read_text()


@functools.cache
def _compile(name: str, function: str, options: tuple[str, ...]):
    import cupy

    return cupy.RawModule(code=source(name), options=options).get_function(function)


def check_all(arch: str = "sm_90") -> None:
    """Compile every variant with nvcc (PTX for `arch`), as the backend compiles it; the
    SeqDist variants with the registered SeqDist scheme's costs."""
    for name, variant in VARIANTS.items():
        if variant.source in SEQDIST_SOURCES:
            variant = variant.with_defines(**seqdist_defines(scheme("seqdist")))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / variant.source
            path.write_text(source(variant.source))
            subprocess.run(["nvcc", "-ptx", f"-arch={arch}", *variant.options(), "-o",
                            "/dev/null", str(path)], check=True)
        print(f"compiled {name}: {variant.source} {variant.function} {' '.join(variant.options())}")


if __name__ == "__main__":
    check_all(*sys.argv[1:])
