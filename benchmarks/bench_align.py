"""`seqpairs align`'s passes on ADEPT's dataset shapes (issue 17), GPU against the CPU
cores of the same machine, one process, one run:

  DNA: queries of 150-300 bp against references of 99-1,131 bp, +6/-4, gaps as ADEPT's
       G_init 4 + G_ext 1 (the first gap letter costs 4, each further one 1): here
       gap-open 3, gap-extend 1;
  protein: 20-600 against 200-1,664 aa, BLOSUM62, ADEPT's open 6 / extend 1: here
       gap-open 5, gap-extend 1.

Each query is a piece of its reference with 5% substitutions and a few indels, so that
alignments end and start inside both. GCUPS as ADEPT counts them: the forward pass's
cells (query x reference letters) over the forward pass's time; end to end adds the
reverse pass (starts). parasail (sw_striped_16: score and ends) runs on all cores of the
machine over a sample of the pairs, and the GPU's results are checked equal to the Numba
CPU backend's on another sample.

    python benchmarks/bench_align.py --pairs 2000000 --kind dna --cpu-pairs 20000
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time

import numpy as np
from numba import njit, prange

from seqpairs.scoring import LocalScheme
from seqpairs.scoring.local import MODES

SHAPES = {
    "dna": {"letters": 4, "query": (150, 300), "target": (99, 1131),
            "scheme": lambda: LocalScheme.dna(6, -4, 3, 1)},
    "protein": {"letters": 20, "query": (20, 600), "target": (200, 1664),
                "scheme": lambda: LocalScheme.from_matrix("BLOSUM62", 5, 1)},
}


def dataset(kind: str, pairs: int, seed: int = 1):
    """(codes, offsets) of `pairs` queries then their `pairs` targets, ADEPT's shape."""
    shape = SHAPES[kind]
    rng = np.random.default_rng(seed)
    k = shape["letters"]
    tl = rng.integers(shape["target"][0], shape["target"][1] + 1, pairs)
    ql = rng.integers(shape["query"][0], shape["query"][1] + 1, pairs)
    t_off = np.r_[0, np.cumsum(tl)]
    t_codes = rng.integers(0, k, t_off[-1]).astype(np.uint8)
    lo = (rng.random(pairs) * np.maximum(1, tl - ql // 2)).astype(np.int64)
    pair = np.repeat(np.arange(pairs), ql)
    within = np.arange(ql.sum()) - np.repeat(np.r_[0, np.cumsum(ql)[:-1]], ql)
    at = lo[pair] + within
    q_codes = np.where(at < tl[pair], t_codes[np.minimum(t_off[pair] + at, t_off[-1] - 1)],
                       rng.integers(0, k, len(at))).astype(np.uint8)
    hit = rng.random(len(q_codes)) < 0.05
    q_codes[hit] = rng.integers(0, k, hit.sum())
    kept = rng.random(len(q_codes)) >= 0.005  # a few deletions
    q_len = np.bincount(pair[kept], minlength=pairs)
    codes = np.concatenate([q_codes[kept], t_codes])
    offsets = np.r_[0, np.cumsum(np.concatenate([q_len, tl]))].astype(np.int64)
    return codes, offsets


def _parasail_chunk(args):
    import parasail

    kind, alphabet, gap_open, gap_extend, pairs = args
    matrix = parasail.blosum62 if kind == "protein" else parasail.matrix_create("ACGT", 6, -4)
    out = []
    for q, t in pairs:
        qs = "".join(alphabet[c] for c in q)
        ts = "".join(alphabet[c] for c in t)
        r = parasail.sw_striped_16(qs, ts, gap_open + gap_extend, gap_extend, matrix)
        out.append((r.score, r.end_query + 1, r.end_ref + 1))
    return out


@njit(parallel=True)
def _fasta(codes, offsets, first, count, repeats, letters, prefix, digits, starts, out):
    """Records first .. first + count - 1, `repeats` times, as ">{prefix}{number}\n{letters}\n"
    with numbers 0.. zero-padded to `digits`, record k of repeat r at starts[r * count + k]."""
    for x in prange(repeats * count):
        k = first + x % count
        o = starts[x]
        out[o] = 62
        out[o + 1] = prefix
        number = x + 0  # a copy: the loop index itself cannot change
        for d in range(digits):
            out[o + 1 + digits - d] = 48 + number % 10
            number //= 10
        o += 2 + digits
        out[o] = 10
        o += 1
        for y in range(offsets[k], offsets[k + 1]):
            out[o] = letters[codes[y]]
            o += 1
        out[o] = 10


def write_fasta(path, codes, offsets, first, count, repeats, alphabet, prefix):
    """The records, `repeats` times with distinct ids, written at all cores' speed."""
    digits = len(str(repeats * count))
    lengths = np.tile(np.diff(offsets[first:first + count + 1]), repeats) + digits + 4
    starts = np.r_[0, np.cumsum(lengths)]
    out = np.empty(int(starts[-1]), np.uint8)
    _fasta(codes, offsets, first, count, repeats, np.frombuffer(alphabet.encode(), np.uint8),
           ord(prefix), digits, starts, out)
    out.tofile(path)


def command(args, scheme, codes, offsets, record, repeats=1, columns=None) -> None:
    """`seqpairs align --one-to-one` on the pairs written as two FASTA files (`repeats`
    times over, ids distinct), timed as a whole process (start-up, reading, the passes'
    kernels, writing the table)."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for name, lo in (("q.fa", 0), ("t.fa", args.pairs)):
            write_fasta(f"{tmp}/{name}", codes, offsets, lo, args.pairs, repeats,
                        scheme.alphabet, name[0])
        profile = ["-m", "cProfile", "-s", "cumtime"] if args.cli_profile else []
        argv = [sys.executable, *profile, "-m", "seqpairs", "align", "-q", f"{tmp}/q.fa", "-t",
                f"{tmp}/t.fa", "--one-to-one", "--alphabet", args.kind,
                "--gap-open", str(scheme.gap_open), "--gap-extend", str(scheme.gap_extend),
                "-o", f"{tmp}/hits.tsv", "--backend", "gpu"]
        if args.kind == "dna":
            argv += ["--match", "6", "--mismatch", "-4"]
        if columns:
            argv += ["--columns", columns]
        t0 = time.perf_counter()
        done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - t0
        print("\n".join(done.stdout.splitlines()[:40]), file=sys.stderr)  # cProfile's top
        with open(f"{tmp}/hits.tsv", "rb") as fh:
            rows = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b"")) - 1
    record(step="seqpairs align --one-to-one --backend gpu (whole process)",
           pairs_aligned=args.pairs * repeats, distinct=args.pairs, columns=columns or "default",
           seconds=round(seconds, 2), rows=rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kind", choices=tuple(SHAPES), default="dna")
    p.add_argument("--pairs", type=int, default=1_000_000)
    p.add_argument("--cpu-pairs", type=int, default=20_000, help="pairs for the CPU peers")
    p.add_argument("--repeats", type=int, default=3, help="GPU passes timed (median)")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--out", default=None, help="JSON lines file")
    p.add_argument("--cli", action="store_true", help="also time the whole command, "
                   "seqpairs align --one-to-one on the pairs as FASTA files, reading and "
                   "writing included")
    p.add_argument("--cli-repeats", type=int, default=1, help="with --cli, time the command "
                   "again on the pairs this many times over (ids distinct): 30 with 1M pairs "
                   "is ADEPT's 30M-pair set's size")
    p.add_argument("--cli-traced", default="", help="with --cli, time the command again "
                   "with these --columns (e.g. qseqid,sseqid,score,pident,cigar)")
    p.add_argument("--cli-profile", action="store_true", help="run the commands under "
                   "cProfile (its slowest calls on standard error)")
    p.add_argument("--sweep", default="", help="both passes again with other strips and "
                   "register caps, e.g. 16:96,24:128 (STRIP:max_registers, 0: no cap)")
    args = p.parse_args()

    from seqpairs.backends import cpu, gpu
    from seqpairs.backends.gpu import align as gpu_align

    shape = SHAPES[args.kind]
    scheme = shape["scheme"]()
    mode = MODES["local"]
    t0 = time.perf_counter()
    codes, offsets = dataset(args.kind, args.pairs)
    made = time.perf_counter() - t0
    pa = np.arange(args.pairs)
    pb = pa + args.pairs
    lengths = np.diff(offsets)
    cells = int((lengths[pa] * lengths[pb]).sum())
    rows = []

    def record(**row):
        row = {"kind": args.kind, "pairs": args.pairs, **row}
        print(json.dumps(row), flush=True)
        rows.append(row)

    record(step="dataset", seconds=round(made, 2), cells=cells)
    backend = gpu.backend(0)
    ends = backend.align_ends(codes, offsets, scheme, mode)
    starts = backend.align_starts(codes, offsets, scheme, mode)
    starts(pa, pb, *ends(pa, pb))  # compile, and grow CuPy's memory pool
    import cupy

    cupy.cuda.Device().synchronize()
    forwards, reverses = [], []
    for _ in range(args.repeats):  # the median of each pass
        t0 = time.perf_counter()
        score, qend, tend = ends(pa, pb)
        forwards.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        qstart, tstart = starts(pa, pb, score, qend, tend)
        reverses.append(time.perf_counter() - t0)
    forward, reverse = float(np.median(forwards)), float(np.median(reverses))
    record(step="gpu", device=cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
           forward_s=round(forward, 3), reverse_s=round(reverse, 3),
           forward_gcups=round(cells / forward / 1e9, 1),
           end_to_end_gcups=round(cells / (forward + reverse) / 1e9, 1))

    for setting in filter(None, args.sweep.split(",")):
        strip, cap = map(int, setting.split(":"))
        knobs = {"strip": strip, "max_registers": cap or None}
        tuned = gpu_align.ends(codes, offsets, scheme, mode, **knobs)
        tuned_starts = gpu_align.starts(codes, offsets, scheme, mode, **knobs)
        tuned_starts(pa, pb, *tuned(pa, pb))
        cupy.cuda.Device().synchronize()
        times, reverse_times = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            again = tuned(pa, pb)
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            again_starts = tuned_starts(pa, pb, *again)
            reverse_times.append(time.perf_counter() - t0)
        seconds, back = float(np.median(times)), float(np.median(reverse_times))
        record(step="gpu sweep", strip=strip, max_registers=cap,
               forward_s=round(seconds, 3), reverse_s=round(back, 3),
               forward_gcups=round(cells / seconds / 1e9, 1),
               end_to_end_gcups=round(cells / (seconds + back) / 1e9, 1),
               same=all(np.array_equal(a, b) for a, b in zip(
                   (*again, *again_starts), (score, qend, tend, qstart, tstart))))

    # the CPU peers and the exactness check on a sample
    sample = np.random.default_rng(2).choice(args.pairs, min(args.cpu_pairs, args.pairs),
                                             replace=False)
    sample_cells = int((lengths[pa[sample]] * lengths[pb[sample]]).sum())
    cpu_ends = cpu.BACKEND.align_ends(codes, offsets, scheme, mode, args.threads)
    cpu_starts = cpu.BACKEND.align_starts(codes, offsets, scheme, mode, args.threads)
    cpu_starts(pa[sample[:100]], pb[sample[:100]],
               *cpu_ends(pa[sample[:100]], pb[sample[:100]]))  # compile both
    t0 = time.perf_counter()
    c_score, c_qend, c_tend = cpu_ends(pa[sample], pb[sample])
    c_forward = time.perf_counter() - t0
    t0 = time.perf_counter()
    c_qstart, c_tstart = cpu_starts(pa[sample], pb[sample], c_score, c_qend, c_tend)
    c_reverse = time.perf_counter() - t0
    equal = all(np.array_equal(a[sample], b) for a, b in (
        (score, c_score), (qend, c_qend), (tend, c_tend), (qstart, c_qstart),
        (tstart, c_tstart)))
    record(step="cpu numba", threads=args.threads, sample=len(sample),
           forward_gcups=round(sample_cells / c_forward / 1e9, 2),
           end_to_end_gcups=round(sample_cells / (c_forward + c_reverse) / 1e9, 2),
           gpu_equal=equal)
    try:
        import parasail  # noqa: F401
    except ImportError:
        record(step="parasail", skipped="parasail not installed")
    else:
        chunks = np.array_split(sample, args.threads * 4)
        work = [(args.kind, scheme.alphabet, scheme.gap_open, scheme.gap_extend,
                 [(codes[offsets[k]:offsets[k + 1]], codes[offsets[k + args.pairs]:
                                                           offsets[k + args.pairs + 1]])
                  for k in chunk]) for chunk in chunks]
        with multiprocessing.Pool(args.threads) as pool:
            pool.map(_parasail_chunk, work[:args.threads])  # start the workers
            t0 = time.perf_counter()
            results = [r for part in pool.map(_parasail_chunk, work) for r in part]
            seconds = time.perf_counter() - t0
        same = [tuple(map(int, (score[k], qend[k], tend[k]))) == r
                for k, r in zip(np.concatenate(chunks), results)]
        record(step="parasail sw_striped_16", threads=args.threads, sample=len(sample),
               gcups=round(sample_cells / seconds / 1e9, 2),
               same_score_and_end=round(float(np.mean(same)), 4))
    if args.cli:
        command(args, scheme, codes, offsets, record)
        if args.cli_traced:  # the alignments too: the CPU traceback of each window
            command(args, scheme, codes, offsets, record, columns=args.cli_traced)
        if args.cli_repeats > 1:
            command(args, scheme, codes, offsets, record, args.cli_repeats)
    if args.out:
        with open(args.out, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
