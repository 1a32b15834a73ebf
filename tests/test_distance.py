"""Exactness of the CPU SeqDist kernel and the distance stage's outputs."""
import dataclasses
import gzip

import numpy as np
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import squareform

import reference
import reference_affine
from seqpairs import backends, scoring
from seqpairs.formats.distances import (
    LAYOUTS,
    pair_from_index,
    pair_index,
    read_edges,
    read_seqdist_text,
)
from seqpairs.formats.fasta import read_unique_fasta
from seqpairs.pairs import distance
from seqpairs.pairs import tiling as binning
from seqpairs.scoring.alphabet import encode_all as encode

CPU = backends.select("cpu")
SEQDIST = scoring.get("seqdist")

# docs/seqdist.md's public vectors, computed by SeqDist itself.
VECTOR_SEQS = ["ACGTACGTACGT", "ACGTAGGTACGT", "AACGTACGTACGT", "ACGTACGACGT",
               "ACGTACGTACGTAA", "TTTTGGGGCCCCAAAA", "GATTACA"]
VECTOR_TEXT = """
1.07104683e+00 3.07692308e-01 1.29635092e+00 1.25000000e+00 2.32104683e+00
1.46153846e+00 0.00000000e+00 1.07104683e+00 3.07692308e-01 1.25000000e+00
7.68426850e+00 6.75682150e+00 8.24701708e+00 7.19088509e+00 6.70960143e+00
5.44007900e+00 7.10522286e+00 4.76461288e+00 5.44007900e+00 5.44007900e+00
7.28683714e+00
""".split()


def align_pairs(codes, offsets, pa, pb, threads=None):
    """The CPU backend's SeqDist kernel on the pairs (pa[k] as A, pb[k] as B)."""
    return CPU.seqdist(codes, offsets, SEQDIST, threads)(pa, pb)


def compute(seqset, bins, tiles, backend=CPU, **options):
    """pairs.distance.compute under the registered SeqDist scheme (CPU backend by default)."""
    return distance.compute(seqset, bins, tiles, backend=backend, scheme=SEQDIST, **options)


def kernel(pairs, family=CPU.seqdist):
    """Run a CPU kernel family (the full SeqDist kernel by default) on a list of (A, B)
    strings."""
    seqs = [s for pair in pairs for s in pair]
    codes, offsets = encode(seqs)
    idx = np.arange(len(pairs))
    return family(codes, offsets, SEQDIST, None)(2 * idx, 2 * idx + 1)


def check_against_reference(pairs):
    """The full kernel's cost, length and matches and the dense outputs' kernel's cost and
    length equal the reference's."""
    cost, length, matches, _, _ = kernel(pairs)
    dense_cost, dense_length = kernel(pairs, CPU.seqdist_dense)
    for k, (a, b) in enumerate(pairs):
        ref_cost, ref_len, ref_matches, _ = reference.seqdist(a, b)
        assert cost[k] == ref_cost == dense_cost[k], (a, b)  # bit-exact, no tolerance
        assert length[k] == ref_len == dense_length[k], (a, b)
        assert matches[k] == ref_matches, (a, b)


def write_fasta(path, seqs):
    path.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    return str(path)


def test_seqdist_vectors_via_cli(tmp_path):
    from seqpairs.cli import main

    fasta = write_fasta(tmp_path / "v.fasta", VECTOR_SEQS)
    out = tmp_path / "v.dist"
    assert main(["distance", "-i", fasta, "-o", str(out), "--format", "seqdist",
                 "--backend", "cpu"]) == 0
    lines = out.read_text().split("\n")
    assert lines[0] == "7"
    assert lines[1:-1] == VECTOR_TEXT


def test_seqdist_text_with_ids(tmp_path):
    from seqpairs.cli import main

    fasta = write_fasta(tmp_path / "v.fasta", VECTOR_SEQS)
    out = tmp_path / "v.dist"
    assert main(["distance", "-i", fasta, "--seqdist", str(out), "--ids"]) == 0
    n, ids, d = read_seqdist_text(out)
    assert n == 7 and ids == [f"s{k}" for k in range(7)]
    assert [f"{x:.8e}" for x in d] == VECTOR_TEXT


def random_seq(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


def mutate(rng, s, rate):
    out = []
    for c in s:
        r = rng.random()
        if r < rate / 3:
            continue  # deletion
        if r < 2 * rate / 3:
            out.append(c + c)  # homopolymer-style insertion
        elif r < rate:
            out.append(rng.choice(list("ACGT")))
        else:
            out.append(c)
    return "".join(out) or s


def test_random_pairs_match_reference():
    rng = np.random.default_rng(7)
    pairs = []
    for _ in range(300):
        a = random_seq(rng, int(rng.integers(1, 60)))
        b = mutate(rng, a, 0.1) if rng.random() < 0.6 else random_seq(rng, int(rng.integers(1, 60)))
        pairs.append((a, b))
    check_against_reference(pairs)


@pytest.mark.parametrize("count", [1, 63, 64, 65, 200])
def test_lockstep_groups_of_any_lengths_match_reference(count):
    """The kernel runs LANES pairs in lockstep, sorted by length: groups that are full,
    short by one or over by one, and whose pairs differ in length from 1 to 90 letters
    (shorter pairs' cells past their end are computed and never read)."""
    from seqpairs.backends.cpu.seqdist import LANES

    assert LANES == 64
    rng = np.random.default_rng(count)
    pairs = []
    for _ in range(count):
        a = random_seq(rng, int(rng.integers(1, 90)))
        b = mutate(rng, a, 0.15) if rng.random() < 0.5 else random_seq(rng, int(rng.integers(1, 90)))
        pairs.append((a, b) if rng.random() < 0.5 else (b, "A" * int(rng.integers(1, 4))))
    check_against_reference(pairs)


@settings(max_examples=200, deadline=None)
@given(st.text("ACGT", min_size=1, max_size=40), st.text("ACGT", min_size=1, max_size=40))
def test_property_kernel_equals_reference(a, b):
    check_against_reference([(a, b), (b, a)])


@settings(max_examples=100, deadline=None)
@given(st.text("AT", min_size=1, max_size=30), st.text("AT", min_size=1, max_size=30))
def test_property_homopolymer_rich(a, b):
    # two letters only: long homopolymers exercise the 4.0 gap cost and move ties
    check_against_reference([(a, b)])


def c005_reads(shared_data, n):
    with gzip.open(shared_data / "C005_454.fa.gz", "rt") as fh:
        return [str(r.seq) for _, r in zip(range(n), SeqIO.parse(fh, "fasta"))]


def test_c005_pairs_match_reference(shared_data):
    seqs = c005_reads(shared_data, 2094)
    rng = np.random.default_rng(3)
    idx = rng.choice(len(seqs), size=(40, 2), replace=True)
    check_against_reference([(seqs[i], seqs[j]) for i, j in idx if i != j])


@pytest.mark.slow
def test_c005_all_pairs_of_a_subset(shared_data, tmp_path):
    """Every pair of 40 C005 reads through the CLI equals the reference, in SeqDist order."""
    from seqpairs.cli import main

    seqs = c005_reads(shared_data, 40)
    fasta = write_fasta(tmp_path / "c.fasta", seqs)
    out = tmp_path / "c.dist"
    assert main(["distance", "-i", fasta, "--seqdist", str(out)]) == 0
    _, _, d = read_seqdist_text(out)
    expected = reference.all_pairs(seqs)
    assert [f"{x:.8e}" for x in d] == [f"{x:.8e}" for x in expected]


def test_tiles_cover_every_pair_once():
    rng = np.random.default_rng(1)
    lengths = rng.integers(50, 400, size=137)
    bins = binning.make_bins(lengths, 40)
    assert bins["count"].sum() == 137
    tiles = binning.make_tiles(lengths, bins, tile_pairs=200)
    members = binning.bin_members(lengths, bins)
    seen = np.concatenate([pair_index(*binning.tile_pairs(t, members))
                           for t in tiles])
    assert np.array_equal(np.sort(seen), np.arange(137 * 136 // 2))
    # cost estimate is exact: the cells of the tile's pairs
    t = tiles[len(tiles) // 2]
    i, j = binning.tile_pairs(t, members)
    assert t["cells"] == (lengths[i] * lengths[j]).sum()
    for row in bins:  # bins hold the lengths they claim
        assert lengths[members[row["bin"]]].min() >= row["min"]
        assert lengths[members[row["bin"]]].max() <= row["max"]


def test_pair_index_roundtrip():
    k = np.arange(200_000)
    i, j = pair_from_index(k)
    assert np.all(i > j) and np.all(j >= 0)
    assert np.array_equal(pair_index(i, j), k)


def test_outputs_agree(tmp_path):
    """Edge list, SeqDist text and condensed matrix hold the same numbers."""
    from seqpairs.cli import main

    rng = np.random.default_rng(5)
    base = random_seq(rng, 80)
    seqs = [mutate(rng, base, 0.08) for _ in range(25)]
    fasta = write_fasta(tmp_path / "m.fasta", seqs)
    paths = {k: str(tmp_path / f"out.{k}") for k in ("npz", "txt", "npy")}
    assert main(["distance", "-i", fasta, "--edges", paths["npz"], "--seqdist", paths["txt"],
                 "--condensed", paths["npy"], "--max-distance", "1.0"]) == 0
    n, _, text = read_seqdist_text(paths["txt"])
    square = squareform(np.load(paths["npy"]))
    edges = read_edges(paths["npz"])
    assert n == 25 and edges.n == 25 and list(edges.ids) == [f"s{k}" for k in range(25)]
    i, j = pair_from_index(np.arange(len(text)))
    assert np.allclose(square[i, j], text, rtol=1e-8, atol=0)
    keep = text <= 1.0
    assert np.array_equal(edges.i, i[keep]) and np.array_equal(edges.j, j[keep])
    assert np.array_equal(edges.distance, square[i, j][keep])  # both from the same doubles
    assert 0 < len(edges) < len(text)


def family_and_strangers(tmp_path, seed, length, related, unrelated, rate, bin_width):
    """Sequences (related mutated copies of one root, then unrelated ones) with bins and
    tiles of 100 pairs: (SequenceSet, bins, tiles)."""
    rng = np.random.default_rng(seed)
    base = random_seq(rng, length)
    seqs = ([mutate(rng, base, rate) for _ in range(related)]
            + [random_seq(rng, length) for _ in range(unrelated)])
    seqset = read_unique_fasta(write_fasta(tmp_path / "s.fasta", seqs))
    bins = binning.make_bins(seqset.lengths, bin_width)
    return seqset, bins, binning.make_tiles(seqset.lengths, bins, 100)


def test_candidate_identity_keeps_bound_pairs(tmp_path):
    seqset, bins, tiles = family_and_strangers(tmp_path, 9, 100, 20, 5, 0.05, 25)
    edges, _ = compute(seqset, bins, tiles, max_distance=-np.inf, candidate_identity=0.9,
                       iddef=2)
    # iddef 2 is exact from the counts: every kept pair has matches/aligned >= 0.9, others not
    all_edges, _ = compute(seqset, bins, tiles)
    ident = all_edges.matches / all_edges.aligned
    assert len(all_edges) == seqset.n * (seqset.n - 1) // 2
    assert set(zip(edges.i, edges.j)) == set(zip(all_edges.i[ident >= 0.9], all_edges.j[ident >= 0.9]))


def test_text_before_the_first_record_is_one_line_error(tmp_path, cli):
    fasta = tmp_path / "x.fasta"
    fasta.write_text("ACGT\n>r1\nACGT\n>r2\nACGA\n")
    code, out, err = cli("distance", "-i", fasta, "--edges", tmp_path / "e.npz")
    assert (code, out) == (2, "")
    assert err == (f"seqpairs: error: {fasta}: not a FASTA file (This FASTA file contains "
                   "comments at the beginning of the file, which are not allowed by the 'fasta' "
                   "parser)\n")


def test_bad_letter_is_one_line_error(tmp_path, capsys):
    from seqpairs.cli import main

    fasta = tmp_path / "bad.fasta"
    fasta.write_text(">a\nACGT\n>b\nACNT\n")
    assert main(["distance", "-i", str(fasta), "-o", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"seqpairs: error: {fasta}:b: letter 'N' is not in the ACGT alphabet"]


def test_more_threads_than_cores_is_capped():
    # a workflow asking for more threads than this machine has must not crash
    seqs = ["ACGTACGT", "ACGTTCGT"]
    codes, offsets = encode(seqs)
    capped, *_ = align_pairs(codes, offsets, [1], [0], threads=10_000)
    assert capped[0] == reference.seqdist("ACGTTCGT", "ACGTACGT")[0]


def test_shards_merge_to_the_unsharded_edge_list(tmp_path, cli):
    rng = np.random.default_rng(14)
    base = random_seq(rng, 70)
    fasta = write_fasta(tmp_path / "s.fasta", [mutate(rng, base, 0.1) for _ in range(40)])
    bins, tiles = tmp_path / "bins.tsv", tmp_path / "tiles.tsv"
    assert cli("bin", "-i", fasta, "--bins", bins, "--tiles", tiles, "--bin-width", "3",
               "--tile-pairs", "40")[0] == 0
    common = ["distance", "-i", fasta, "--bins", bins, "--tiles", tiles, "--max-distance", "2",
              "--candidate-identity", "0.9"]
    assert cli(*common, "--edges", tmp_path / "all.npz")[0] == 0
    shards = [tmp_path / f"shard{k}.npz" for k in range(3)]
    for k, path in enumerate(shards):
        assert cli(*common, "--shard", f"{k}/3", "--edges", path)[0] == 0
    sizes = [len(read_edges(path)) for path in shards]
    assert all(sizes) and sum(sizes) == len(read_edges(tmp_path / "all.npz"))
    assert cli("merge", "-i", *shards, "--edges", tmp_path / "merged.npz")[0] == 0
    assert (tmp_path / "merged.npz").read_bytes() == (tmp_path / "all.npz").read_bytes()
    # anything but shards 0..2 of 3, each once, is refused with one line and no output
    for chosen, problem in (([0, 0, 1, 2], f"{shards[0]}: shard 0 of 3 is given twice"),
                            ([0, 1], "lack shard 2 of 3"), ([2], "lack shards 0, 1 of 3")):
        code, _, err = cli("merge", "-i", *[shards[k] for k in chosen], "--edges",
                           tmp_path / "x.npz")
        assert (code, err.count("\n")) == (2, 1) and problem in err, err
    assert not (tmp_path / "x.npz").exists()


def reference_screen(codes, offsets, seqs):
    """A screen with the GPU screen's outputs from the CPU kernel and the reference traceback."""
    def screen(pa, pb):
        cost, length, matches, _, _ = align_pairs(codes, offsets, pa, pb)
        cols = (reference.seqdist(seqs[x], seqs[y])[3] for x, y in zip(pa, pb))
        pairs = np.array([sum(x != "-" != y for x, y in c) for c in cols], dtype=np.int32)
        return cost, length, matches, pairs
    return screen


@pytest.mark.parametrize("iddef", [0, 1, 2, 3, 4])
def test_screen_bound_is_above_upper_bound(iddef):
    from seqpairs.pairs.identity import screen_bound, upper_bound

    rng = np.random.default_rng(21)
    base = random_seq(rng, 60)
    seqs = [mutate(rng, base, 0.1) for _ in range(15)] + [random_seq(rng, 50) for _ in range(5)]
    codes, offsets = encode(seqs)
    pa, pb = np.tril_indices(len(seqs), -1)
    la, lb = np.diff(offsets)[pa], np.diff(offsets)[pb]
    cost, length, matches, pairs = reference_screen(codes, offsets, seqs)(pa, pb)
    _, _, _, aligned, leading = align_pairs(codes, offsets, pa, pb)
    assert np.all(pairs <= aligned) and np.all(matches <= pairs)
    loose = screen_bound(iddef, la, lb, length, matches, pairs)
    tight = upper_bound(iddef, la, lb, length, matches, aligned, leading)
    assert np.all(loose >= tight)
    assert np.mean(loose < 0.9) > 0.1 if iddef != 3 else True  # the screen drops pairs


@pytest.mark.parametrize("options", [dict(max_distance=0.5), dict(max_distance=-np.inf, candidate_identity=0.9, iddef=2),
                                     dict(max_distance=0.3, candidate_identity=0.8, iddef=1),
                                     dict(max_distance=1.0, dense=True)])
def test_screened_distance_stage_equals_the_one_pass(tmp_path, options):
    """compute() with a screen (as on the GPU without pruning) keeps exactly the pairs and
    columns it keeps without (and, the plain run, with pruning)."""
    seqset, bins, tiles = family_and_strangers(tmp_path, 22, 80, 25, 10, 0.08, 10)
    plain, plain_dense = compute(seqset, bins, tiles, **options)

    made = []

    def screener(codes, offsets, scheme, threads=None):
        made.append(scheme)
        return reference_screen(codes, offsets, list(seqset.seqs))

    # the CPU backend with a screen
    screened_backend = dataclasses.replace(CPU, seqdist_screen=screener)
    screened, screened_dense = compute(seqset, bins, tiles, backend=screened_backend,
                                       prune=False, **options)
    assert made == [SEQDIST]  # the screen was used
    assert 0 < len(plain) < seqset.n * (seqset.n - 1) // 2
    for column in ("i", "j", "cost", "length", "matches", "aligned", "leading"):
        assert np.array_equal(getattr(screened, column), getattr(plain, column)), column
    if options.get("dense"):
        assert np.array_equal(screened_dense, plain_dense)


def counting_screener(seqset, screened_pairs):
    """A backend's seqdist_screen made on the CPU (reference_screen), which appends the
    number of pairs of each call to screened_pairs."""
    def screener(codes, offsets, scheme, threads=None):
        screen = reference_screen(codes, offsets, list(seqset.seqs))

        def counted(i, j):
            screened_pairs.append(len(i))
            return screen(i, j)

        return counted

    return screener


@pytest.mark.parametrize("full_pairs_per_call", [1, 40, 10**9])
def test_the_pairs_left_to_the_full_kernel_wait_for_one_call(tmp_path, full_pairs_per_call):
    """The pairs that pruning leaves to the full kernel gathered over batches (until
    backend.full_pairs_per_call of them, or a batch's worth of pairs held): the same kept
    pairs, columns and order as each batch's aligned with it, in fewer calls."""
    seqset, bins, _ = family_and_strangers(tmp_path, 26, 300, 20, 30, 0.01, 40)
    tiles = binning.make_tiles(seqset.lengths, bins, 60)
    calls = []

    def seqdist(codes, offsets, scheme, threads=None):
        align = CPU.seqdist(codes, offsets, scheme, threads)

        def counted(i, j):
            calls.append(len(i))
            return align(i, j)
        return counted

    options = dict(max_distance=0.3)
    # a band without its lower band for every pair past the counting filter: each batch
    # has pairs settled by it and pairs left to align
    each = dataclasses.replace(CPU, pairs_per_batch=60, seqdist=seqdist, band_shared=0.0,
                               band_lower={})
    unpruned, _ = compute(seqset, bins, tiles, backend=each, prune=False, **options)
    calls.clear()
    plain, _ = compute(seqset, bins, tiles, backend=each, **options)
    batch_calls = sum(1 for n in calls if n)
    calls.clear()
    waited, _ = compute(seqset, bins, tiles, **options, backend=dataclasses.replace(
        each, full_pairs_per_call=full_pairs_per_call))
    assert 0 < len(unpruned) < seqset.n * (seqset.n - 1) // 2
    for column in ("i", "j", "cost", "length", "matches", "aligned", "leading"):
        assert np.array_equal(getattr(plain, column), getattr(unpruned, column)), column
        assert np.array_equal(getattr(waited, column), getattr(unpruned, column)), column
    if full_pairs_per_call == 1:
        assert sum(1 for n in calls if n) == batch_calls
    else:
        assert 0 < sum(1 for n in calls if n) < batch_calls
    # handed to `kept` (no order asked for): the same pairs and columns
    handed = []
    compute(seqset, bins, tiles, **options, kept=lambda *columns: handed.append(columns),
            backend=dataclasses.replace(each, full_pairs_per_call=full_pairs_per_call))
    i, j, *values = (np.concatenate(c) for c in zip(*handed))
    order = np.lexsort((j, i))
    want = np.lexsort((unpruned.j, unpruned.i))
    assert np.array_equal(i[order], unpruned.i[want])
    assert np.array_equal(j[order], unpruned.j[want])
    for got, column in zip(values, ("cost", "length", "matches", "aligned", "leading")):
        assert np.array_equal(got[order], getattr(unpruned, column)[want]), column


@pytest.mark.parametrize("screen_cost", [0.0, 1e9])
@pytest.mark.parametrize("options", [dict(max_distance=0.3, candidate_identity=0.8, iddef=2),
                                     dict(max_distance=1.0, dense=True)])
def test_the_screen_runs_past_its_sample_only_where_it_pays(tmp_path, options, screen_cost):
    """Batches large enough go through the screen on a sample first, and their other pairs
    only where it paid there (never at an immense screen_cost, always at none): the same
    kept pairs, columns and distances either way, as without a screen."""
    from seqpairs.pairs import prune

    seqset, bins, _ = family_and_strangers(tmp_path, 24, 120, 40, 20, 0.08, 40)
    tiles = binning.make_tiles(seqset.lengths, bins, 1 << 20)  # batches of a sample's size
    pairs = seqset.n * (seqset.n - 1) // 2
    assert pairs >= prune.SAMPLE * prune.MIN_SAMPLE
    plain, plain_dense = compute(seqset, bins, tiles, **options)
    screened_pairs = []
    screener = counting_screener(seqset, screened_pairs)

    backend = dataclasses.replace(CPU, seqdist_screen=screener, screen_cost=screen_cost)
    screened, screened_dense = compute(seqset, bins, tiles, backend=backend, prune=False,
                                       **options)
    assert 0 < len(plain) < pairs
    for column in ("i", "j", "cost", "length", "matches", "aligned", "leading"):
        assert np.array_equal(getattr(screened, column), getattr(plain, column)), column
    if options.get("dense"):
        assert np.array_equal(screened_dense.view(np.int64), plain_dense.view(np.int64))
    if screen_cost:
        assert sum(screened_pairs) <= -(-pairs // prune.SAMPLE)
    else:
        assert sum(screened_pairs) == pairs


def test_dense_only_takes_every_distance_from_the_dense_kernel(tmp_path):
    """compute(edges=False): every pair through the backend's seqdist_dense alone (cost and
    length are all a distance needs), none through the full kernel nor the screen; the
    same distances as the one pass of the full kernel, and no edge list."""
    seqset, bins, tiles = family_and_strangers(tmp_path, 22, 80, 25, 10, 0.08, 10)
    _, plain_dense = compute(seqset, bins, tiles, dense=True)
    screened_pairs = []
    screener = counting_screener(seqset, screened_pairs)

    def dense_kernel(*args):
        screen = screener(*args)
        return lambda i, j: screen(i, j)[:2]  # cost and length

    def no_kernel(*args):
        raise AssertionError("the full kernel or the screen ran for a dense-only output")

    backend = dataclasses.replace(CPU, seqdist_dense=dense_kernel,
                                  seqdist=lambda *a: no_kernel, seqdist_screen=no_kernel)
    edges, dense = compute(seqset, bins, tiles, backend=backend, dense=True, edges=False)
    assert edges is None
    assert sum(screened_pairs) == seqset.n * (seqset.n - 1) // 2
    assert np.array_equal(dense.view(np.int64), plain_dense.view(np.int64))
    with pytest.raises(ValueError):
        compute(seqset, bins, tiles, dense=False, edges=False)


def test_a_dense_sink_takes_every_distance_once(tmp_path):
    """compute(dense_sink=...): each pair's distance handed to the sink once, batch by
    batch, the same bits as the dense array, no array returned; with edges too, the same
    edge list as without a sink."""
    seqset, bins, tiles = family_and_strangers(tmp_path, 23, 80, 25, 10, 0.08, 10)
    edges_plain, plain_dense = compute(seqset, bins, tiles, dense=True, max_distance=0.5)
    assert 0 < len(edges_plain.i) < len(plain_dense)

    class Sink:
        def __init__(self):
            self.got = np.full(len(plain_dense), np.nan)
            self.times = np.zeros(len(plain_dense), np.int64)
            self.batches = 0

        def __setitem__(self, index, values):
            self.got[index] = values
            np.add.at(self.times, index, 1)
            self.batches += 1

    for edges in (False, True):
        sink = Sink()
        got_edges, dense = compute(seqset, bins, tiles, dense_sink=sink, edges=edges,
                                   max_distance=0.5)
        assert dense is None and (got_edges is None) == (not edges)
        assert np.all(sink.times == 1) and sink.batches >= 1
        assert np.array_equal(sink.got.view(np.int64), plain_dense.view(np.int64))
        if edges:
            assert np.array_equal(got_edges.i, edges_plain.i)
            assert np.array_equal(got_edges.distance.view(np.int64),
                                  edges_plain.distance.view(np.int64))


@pytest.mark.parametrize("options", [dict(max_distance=0.1),
                                     dict(max_distance=0.05, candidate_identity=0.9, iddef=0),
                                     dict(max_distance=0.15, iddef=3),
                                     dict(max_distance=0.2, iddef=1)])
def test_affine_screen_keeps_exactly_the_unscreened_pairs(tmp_path, options):
    """compute() under the vsearch preset with an affine screen (the GPU's, here the
    reference's on the CPU) keeps exactly the pairs and columns it keeps without; with
    --no-prune (prune=False) the screen is not asked for."""
    seqset, bins, tiles = family_and_strangers(tmp_path, 23, 40, 18, 7, 0.08, 10)
    scheme = scoring.get("vsearch")
    plain, _ = distance.compute(seqset, bins, tiles, backend=CPU, scheme=scheme, **options)
    screened_pairs = []
    screener = reference_affine.screener(list(seqset.seqs), screened_pairs)
    backend = dataclasses.replace(CPU, affine_screen=screener)
    screened, _ = distance.compute(seqset, bins, tiles, backend=backend, scheme=scheme,
                                   **options)
    assert len(screened_pairs) == seqset.n * (seqset.n - 1) // 2
    assert 0 < len(plain) < len(screened_pairs)
    for column in ("i", "j", *LAYOUTS["affine"].columns):
        assert np.array_equal(getattr(screened, column), getattr(plain, column)), column
    screened_pairs.clear()
    distance.compute(seqset, bins, tiles, backend=backend, scheme=scheme, prune=False,
                     **options)
    assert not screened_pairs


@pytest.mark.parametrize("tasks", [0, 1, 5, 997])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_cpu_kernels_in_parallel_take_every_task_once(tasks, threads, monkeypatch):
    """backends/cpu/batch.in_parallel (the distance stage's and the filter's CPU kernels
    on threads): the chunks cover every task once, the kernel's arguments passed on, and
    a kernel's error reaches the caller."""
    import numba

    from seqpairs.backends.cpu import batch

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 4)
    done = np.zeros(tasks, dtype=np.int64)

    def kernel(first, stop, out, value):
        out[first:stop] += value

    batch.in_parallel(kernel, tasks, threads, done, 1)
    assert np.array_equal(done, np.ones(tasks))

    def failing(first, stop):
        raise ValueError("kernel failed")

    if tasks:
        with pytest.raises(ValueError, match="kernel failed"):
            batch.in_parallel(failing, tasks, threads)
