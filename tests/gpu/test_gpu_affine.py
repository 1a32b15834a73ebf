"""GPU affine integer kernel against the CPU backend: scores and lengths equal.

Marked `gpu`; skipped where CuPy sees no CUDA device.
"""
import numpy as np
import pytest

from seqpairs.backends import gpu
from seqpairs.backends.cpu import affine as cpu_affine
from seqpairs.backends.gpu import affine as gpu_affine
from seqpairs.cli import main
from seqpairs.errors import UserError
from seqpairs.scoring import AffineScheme
from seqpairs.scoring.alphabet import DNA
from seqpairs.scoring.alphabet import encode_all as encode

from .test_gpu_distance import random_pairs, read_acgt

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason="no CUDA GPU visible to CuPy"),
]

SCHEMES = {
    "linear": AffineScheme.dna(1, -1, 0, 1, 0, 1),
    "affine": AffineScheme.dna(2, -4, 20, 2),
    "cheap ends": AffineScheme.dna(2, -4, 20, 2, 2, 1),
    "dear ends": AffineScheme.dna(5, -4, 10, 1, 30, 3),
    "free ends": AffineScheme.dna(2, -3, 5, 2, 0, 0),
    # many optimal paths of different lengths: the shortest-length rule decides
    "ties": AffineScheme.dna(1, -2, 0, 1),
    "zero": AffineScheme.dna(0, 0, 0, 0),
    # rows and columns A, C, G, T
    "asymmetric": AffineScheme(DNA, ((3, -2, -1, -5), (-4, 2, -6, -1), (-2, -5, 4, -4),
                                     (-6, 0, -3, 1)), 4, 1, 2, 2),
    # scores beyond 16 bits at these lengths: the 64-bit kernel
    "wide": AffineScheme.dna(100, -100, 50, 10, 60, 20),
}


def compare(seqs, pa, pb, scheme, max_batch=None, **tuning):
    codes, offsets = encode(seqs)
    want = cpu_affine.aligner(codes, offsets, scheme)(pa, pb)
    got = gpu_affine.aligner(codes, offsets, scheme, max_batch=max_batch, **tuning)(pa, pb)
    assert np.array_equal(got[0], want[0]), "scores differ"
    assert np.array_equal(got[1], want[1]), "lengths differ"


def test_both_kernel_widths_are_tested():
    widths = {name: gpu_affine.packed_width(scheme, 3000) for name, scheme in SCHEMES.items()}
    assert widths["wide"] == 64 and widths["cheap ends"] == 32


@pytest.mark.parametrize("name", list(SCHEMES))
def test_mixed_lengths_1_to_3000(name):
    rng = np.random.default_rng(21)
    lengths = np.concatenate([np.arange(1, 40), rng.integers(40, 3001, 60)])
    base = "".join(rng.choice(list("ACGT"), 3000))
    seqs = [base[:n] if rng.random() < 0.5 else "".join(rng.choice(list("ACGT"), n))
            for n in lengths]
    pa, pb = random_pairs(rng, len(seqs), 1500)
    compare(seqs, pa, pb, SCHEMES[name], max_batch=512)


@pytest.mark.parametrize("strip", sorted(gpu_affine.CELL_TIME))
@pytest.mark.parametrize("name", ["affine", "wide"])
def test_every_strip_of_the_dispatch_gives_the_cpu_results(name, strip):
    # lengths around 250 (where the narrow strip is taken) and up to 1,000: full strips,
    # a last strip of every width, sequences shorter than one strip
    rng = np.random.default_rng(23)
    lengths = np.concatenate([np.arange(1, 80), rng.integers(230, 290, 80),
                              rng.integers(290, 1001, 40)])
    base = "".join(rng.choice(list("ACGT"), 1000))
    seqs = [base[:n] if rng.random() < 0.5 else "".join(rng.choice(list("ACGT"), n))
            for n in lengths]
    pa, pb = random_pairs(rng, len(seqs), 1500)
    compare(seqs, pa, pb, SCHEMES[name], strip=strip)


@pytest.mark.parametrize("kernel", ["aligner", "counter", "tracer"])
def test_scores_outside_int8_are_refused(kernel):
    codes, offsets = encode(["ACGT", "ACGA"])
    with pytest.raises(UserError, match="-128 and 127"):
        getattr(gpu_affine, kernel)(codes, offsets, AffineScheme.dna(200, -4, 20, 2))


# --- the traced alignment's counts (affine_trace.cu's affine_trace_counts) against the
# CPU's traceback ---

COUNT_SCHEMES = {**SCHEMES, "vsearch": AffineScheme.usearch(2, -4, 20, 2, 2, 1)}


def compare_counts(seqs, pa, pb, scheme, **options):
    from seqpairs.backends.common import AFFINE_COUNTS
    from seqpairs.backends.cpu import trace_affine

    codes, offsets = encode(seqs, scheme.alphabet)
    want = trace_affine.counter(codes, offsets, scheme)(pa, pb)
    got = gpu_affine.counter(codes, offsets, scheme, **options)(pa, pb)
    for name, g, w in zip(AFFINE_COUNTS, got, want):
        assert g.dtype == np.int32 and np.array_equal(g, w), f"{name} differs"


# --- the traced alignments (affine_trace.cu) against the CPU's traceback ---

TRACE_SCHEMES = COUNT_SCHEMES


def compare_traces(seqs, pa, pb, scheme, **options):
    from seqpairs.backends.cpu import trace_affine

    codes, offsets = encode(seqs, scheme.alphabet)
    want = trace_affine.trace_pairs(codes, offsets, pa, pb, scheme)
    got = gpu_affine.tracer(codes, offsets, scheme, **options)(pa, pb)
    assert np.array_equal(got.score, want.score), "scores differ"
    assert got.counts.dtype == np.int32 and np.array_equal(got.counts, want.counts)
    assert np.array_equal(got.run_offsets, want.run_offsets), "run counts differ"
    assert got.runs.dtype == np.int32 and np.array_equal(got.runs, want.runs)
    assert np.array_equal(got.la, want.la) and np.array_equal(got.lb, want.lb)


def mixed_sequences(rng):
    """Lengths 1-40 (within one strip of 8 and across) and 40 longer ones; related,
    unrelated and two-letter sequences (long homopolymers, many equal-scoring paths)."""
    lengths = np.concatenate([np.arange(1, 41), rng.integers(41, 400, 40)])
    base = "".join(rng.choice(list("ACGT"), 400))
    return [base[:n] if rng.random() < 0.4 else
            "".join(rng.choice(list("AC" if rng.random() < 0.5 else "ACGT"), n))
            for n in lengths]


@pytest.mark.parametrize("name", list(TRACE_SCHEMES))
def test_counts_and_traces_on_mixed_and_homopolymer_pairs(name):
    rng = np.random.default_rng(41)
    seqs = mixed_sequences(rng)
    pa, pb = random_pairs(rng, len(seqs), 2000)
    compare_counts(seqs, pa, pb, TRACE_SCHEMES[name])
    compare_traces(seqs, pa, pb, TRACE_SCHEMES[name])


def test_counts_and_traces_over_several_launches():
    rng = np.random.default_rng(42)
    seqs = ["".join(rng.choice(list("ACGT"), n)) for n in rng.integers(1, 300, 60)]
    pa, pb = random_pairs(rng, len(seqs), 1000)
    compare_counts(seqs, pa, pb, TRACE_SCHEMES["vsearch"], max_batch=128)
    compare_traces(seqs, pa, pb, TRACE_SCHEMES["vsearch"], max_batch=128)


@pytest.mark.parametrize("name", ["C005_454.fa.gz", "samPB.fastq.gz"])
def test_real_datasets(shared_data, name):
    """Scores and lengths, counts and traces of real reads' pairs: the CPU's."""
    seqs = read_acgt(shared_data / name, 300)
    rng = np.random.default_rng(22)
    pa, pb = random_pairs(rng, len(seqs), 800)
    compare(seqs, pa, pb, SCHEMES["cheap ends"])
    compare_counts(seqs, pa, pb, TRACE_SCHEMES["vsearch"])
    compare_traces(seqs, pa, pb, TRACE_SCHEMES["vsearch"])


def test_filter_on_the_gpu_is_the_cpus(shared_data):
    """The vsearch preset's table, counted and traced on the GPU, is the CPU's."""
    import pandas as pd

    from seqpairs import backends, scoring
    from seqpairs.formats.fasta import SequenceSet
    from seqpairs.pairs import filter as seqfilter

    seqs = list(dict.fromkeys(read_acgt(shared_data / "C005_454.fa.gz", 400)))[:300]
    codes, offsets = encode(seqs)
    s = SequenceSet([f"s{k}" for k in range(len(seqs))], seqs,
                    np.ones(len(seqs), dtype=np.int64), codes, offsets)
    vsearch = scoring.get("vsearch")
    cpu, gpu_backend = backends.select("cpu"), backends.select("gpu")
    want = seqfilter.filter_affine(s, vsearch, cpu, 0.9, 2)
    assert len(want) > 1000
    pd.testing.assert_frame_equal(seqfilter.filter_affine(s, vsearch, gpu_backend, 0.9, 2),
                                  want)


# --- protein: BLOSUM62's 24 letters in affine_trace.cu's shared table ---


def test_protein_traces_and_counts_are_the_cpus():
    from proteins import proteins
    from seqpairs import scoring

    scheme = scoring.get("blosum62")
    seqs = proteins(seed=44, n=120, max_len=400)
    rng = np.random.default_rng(44)
    pa, pb = random_pairs(rng, len(seqs), 3000)
    compare_counts(seqs, pa, pb, scheme)
    compare_traces(seqs, pa, pb, scheme, max_batch=1024)
    codes, offsets = encode(seqs, scheme.alphabet)
    with pytest.raises(UserError, match="four letters"):
        gpu_affine.aligner(codes, offsets, scheme)


def test_protein_distance_stage_cpu_equals_gpu(tmp_path):
    from proteins import proteins

    seqs = proteins(seed=45, n=200, max_len=300)
    fasta = tmp_path / "p.fasta"
    fasta.write_text("".join(f">p{k}\n{s}\n" for k, s in enumerate(seqs)))
    outputs = {}
    for backend in ("cpu", "gpu"):
        edges, kept = tmp_path / f"{backend}.npz", tmp_path / f"{backend}.tsv"
        assert main(["-q", "distance", "-i", str(fasta), "--scoring", "blosum62", "--backend",
                     backend, "--max-distance", "0.5", "--edges", str(edges)]) == 0
        assert main(["-q", "filter", "-i", str(fasta), "--scoring", "blosum62", "--backend",
                     backend, "--identity", "0.5", "-o", str(kept)]) == 0
        outputs[backend] = (edges.read_bytes(), kept.read_bytes())
    assert outputs["cpu"] == outputs["gpu"]


# --- the exact screen of affine passes (affine_screen.cu) against the reference ---

SCREEN_SCHEMES = {name: s for name, s in COUNT_SCHEMES.items() if name != "wide"}


def compare_screen(seqs, pa, pb, scheme, weights, **options):
    """affine_screen's score and weight of each pair: the reference's."""
    import reference_affine

    codes, offsets = encode(seqs, scheme.alphabet)
    got = gpu_affine.screener(codes, offsets, scheme, **options)(pa, pb, *weights)
    want = np.array([reference_affine.screen(seqs[x], seqs[y], scheme, *weights)
                     for x, y in zip(pa, pb)], dtype=np.int32).reshape(-1, 2)
    assert got[0].dtype == got[1].dtype == np.int32
    assert np.array_equal(got[0], want[:, 0]), "scores differ"
    assert np.array_equal(got[1], want[:, 1]), "weights differ"


def screen_pairs(rng, seqs):
    """Random pairs (B's groups mostly under a block: padding) and one B with 300 As
    (groups of whole blocks and a part)."""
    pa, pb = random_pairs(rng, len(seqs), 300)
    return np.r_[pa, rng.integers(0, len(seqs), 300)], np.r_[pb, np.full(300, len(seqs) - 1)]


@pytest.mark.parametrize("name", list(SCREEN_SCHEMES))
def test_screen_is_the_reference_on_mixed_and_homopolymer_pairs(name):
    rng = np.random.default_rng(43)
    seqs = [s[:int(rng.integers(1, 90))] for s in mixed_sequences(rng)]
    pa, pb = screen_pairs(rng, seqs)
    compare_screen(seqs, pa, pb, SCREEN_SCHEMES[name], (3, 7))
    compare_screen(seqs, pa, pb, SCREEN_SCHEMES[name], (0, 1), max_batch=128)


# the kernel's variants: profile loads of 4, 8 and 16 bytes, strips of 4 to 32 columns
SCREEN_VARIANTS = [dict(load=4), dict(load=8), dict(strip=4), dict(strip=16)]


@pytest.mark.parametrize("tuning", SCREEN_VARIANTS)
def test_protein_screen_is_the_reference(tuning):
    from proteins import proteins
    from seqpairs import scoring

    rng = np.random.default_rng(46)
    seqs = proteins(seed=46, n=80, max_len=90)
    pa, pb = screen_pairs(rng, seqs)
    compare_screen(seqs, pa, pb, scoring.get("blosum62"), (1, 0))
    compare_screen(seqs, pa, pb, scoring.get("blosum62"), (2, 17), max_batch=256, **tuning)


def test_screen_of_real_reads_bounds_their_traced_alignments(shared_data):
    """Long pairs (many strips): the screen's score is the affine kernel's, and its weight
    at least the traced alignment's (the one the distance stage counts)."""
    from seqpairs.backends.common import AFFINE_COUNTS
    from seqpairs.backends.cpu import trace_affine

    seqs = read_acgt(shared_data / "C005_454.fa.gz", 300)
    scheme = COUNT_SCHEMES["vsearch"]
    pa, pb = random_pairs(np.random.default_rng(47), len(seqs), 3000)
    codes, offsets = encode(seqs)
    score, weight = gpu_affine.screener(codes, offsets, scheme)(pa, pb, 2, 61)
    counts = dict(zip(AFFINE_COUNTS, trace_affine.counter(codes, offsets, scheme)(pa, pb)))
    assert np.array_equal(score, counts["score"])
    traced = 2 * counts["matches"] - 61 * counts["mismatches"]
    assert (weight >= traced).all() and (weight > traced).any()


def test_screen_refuses_what_the_kernel_cannot_hold():
    seqs = ["ACGT" * 100, "ACG" * 90]
    codes, offsets = encode(seqs)
    assert gpu_affine.screener(codes, offsets, SCHEMES["wide"]) is None  # 64-bit scores
    screen = gpu_affine.screener(codes, offsets, SCHEMES["affine"])
    with pytest.raises(ValueError, match="16 bits"):
        screen(np.array([0]), np.array([1]), 1, 82)  # 82 x 400 >= 2^15


@pytest.mark.parametrize("thresholds", [dict(max_distance=0.03, candidate_identity=0.97),
                                        dict(max_distance=0.05, candidate_identity=0.9,
                                             iddef=0),
                                        dict(max_distance=0.1, iddef=3)])
def test_screened_distance_stage_is_the_unscreened(shared_data, tmp_path, thresholds):
    """The vsearch preset's distance stage on the GPU, screened, keeps exactly the pairs
    and columns of the CPU's (no screen) and of the GPU's with prune=False."""
    import dataclasses

    from seqpairs import backends, scoring
    from seqpairs.formats.distances import LAYOUTS
    from seqpairs.formats.fasta import read_unique_fasta
    from seqpairs.pairs import distance
    from seqpairs.pairs import tiling as binning

    seqs = list(dict.fromkeys(read_acgt(shared_data / "C005_454.fa.gz", 500)))[:400]
    fasta = tmp_path / "c.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    seqset = read_unique_fasta(fasta)
    bins = binning.make_bins(seqset.lengths, 25)
    tiles = binning.make_tiles(seqset.lengths, bins, 5000)
    scheme = scoring.get("vsearch")
    gpu_backend = backends.select("gpu")
    screened_pairs = []

    def screener(*args, **kwargs):
        screen = gpu_affine.screener(*args, **kwargs)

        def counted(pa, pb, alpha, beta):
            screened_pairs.append(len(pa))
            return screen(pa, pb, alpha, beta)

        return counted

    options = dict(scheme=scheme, **thresholds)
    runs = {name: distance.compute(seqset, bins, tiles, backend=backend, **extra, **options)[0]
            for name, backend, extra in (
                ("cpu", backends.select("cpu"), {}),
                ("gpu", dataclasses.replace(gpu_backend, affine_screen=screener), {}),
                ("gpu unscreened", gpu_backend, {"prune": False}))}
    assert sum(screened_pairs) == seqset.n * (seqset.n - 1) // 2
    assert 0 < len(runs["cpu"]) < sum(screened_pairs)
    for name in ("gpu", "gpu unscreened"):
        for column in ("i", "j", *LAYOUTS["affine"].columns):
            assert np.array_equal(getattr(runs[name], column), getattr(runs["cpu"], column)), \
                (name, column)
