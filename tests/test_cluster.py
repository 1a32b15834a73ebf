"""The cluster stage: FCluster-exact hierarchical clustering, greedy clustering, tables."""
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from Bio import Phylo
from scipy.cluster.hierarchy import fcluster, linkage

from seqpairs.cli import main
from seqpairs.cluster import fcluster as hierarchical
from seqpairs.cluster.inputs import as_fcluster_float
from seqpairs.formats.distances import (
    Edges,
    pair_from_index,
    read_seqdist_text,
    seqdist_to_condensed,
    write_edges,
    write_seqdist_text,
)


def text(path):
    return Path(path).read_text()


def npairs(n):
    return n * (n - 1) // 2


def write_dense(path, d, ids=None):
    write_seqdist_text(path, np.asarray(d, dtype=np.float64), ids)
    return str(path)


def write_sparse(path, n, i, j, d, max_distance, ids=None):
    ids = [f"s{k}" for k in range(n)] if ids is None else ids
    m = len(i)
    zeros = np.zeros(m, np.int32)
    values = {"cost": np.asarray(d, np.float64), "length": np.ones(m, np.int32),
              "matches": zeros, "aligned": zeros, "leading": zeros}
    write_edges(path, Edges(n=n, ids=np.asarray(ids), i=np.asarray(i), j=np.asarray(j),
                            values=values, max_distance=max_distance))
    return str(path)


def read_list(path):
    """.list lines -> [(threshold, count, partition as a set of frozensets)]."""
    out = []
    for line in text(path).splitlines():
        fields = line.split(" ")
        assert fields[-1] == ""  # FCluster ends every cluster, the last one too, with a space
        clusters = [frozenset(c.split(",")) for c in fields[2:-1]]
        assert len(clusters) == int(fields[1])
        out.append((float(fields[0]), int(fields[1]), set(clusters)))
    return out


def scipy_partitions(condensed, method, threshold, names):
    labels = fcluster(linkage(condensed, method), threshold, criterion="distance")
    groups = {}
    for name, label in zip(names, labels):
        groups.setdefault(label, set()).add(name)
    return {frozenset(g) for g in groups.values()}


def fcluster_reference(d, weight, average):
    """FCluster as docs/seqdist.md states it, plainly: full scans, explicit slot moves.

    d: float32 distances in SeqDist order. Returns (left, right, height) like the kernel.
    """
    n0 = len(weight)
    full = np.zeros((n0, n0), np.float32)
    i, j = pair_from_index(np.arange(npairs(n0)))
    full[i, j] = d
    node, w = list(range(n0)), [np.float32(x) for x in weight]
    merges = []
    for step in range(n0 - 1):
        n = n0 - step
        best = None
        for r in range(1, n):
            for c in range(r):
                if best is None or full[r, c] < best[0]:
                    best = (full[r, c], r, c)
        v, hi, lo = best
        merges.append((node[hi], node[lo], v))
        for k in range(n):
            if k in (hi, lo):
                continue
            a, b = full[max(hi, k), min(hi, k)], full[max(lo, k), min(lo, k)]
            new = (a * w[hi] + b * w[lo]) / (w[hi] + w[lo]) if average else max(a, b)
            full[max(lo, k), min(lo, k)] = new
        last = n - 1
        for k in range(last):
            if k != hi:
                full[max(hi, k), min(hi, k)] = full[last, k]
        node[lo], node[hi] = n0 + step, node[last]
        w[lo], w[hi] = w[hi] + w[lo], w[last]
    left, right, height = zip(*merges) if merges else ((), (), ())
    return list(left), list(right), [float(h) for h in height]


# ---------------------------------------------------------------- FCluster exactness


def test_tie_rule_follows_slots_hand_example(tmp_path):
    # (1,0)=0.5 merges first; sequence 4 then moves into slot 1, so the tie at 1.0
    # between {2,4} (slots 2,1) and {2,3} (slots 3,2) goes to {2,4}: input order would
    # have picked {2,3}.
    d = {(1, 0): 0.5, (3, 2): 1.0, (4, 2): 1.0}
    dist = [d.get(tuple(int(x) for x in pair_from_index(k)), 5.0) for k in range(npairs(5))]
    ids = [f"s{k}" for k in range(5)]
    path = write_dense(tmp_path / "d.dist", dist, ids)
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", path, "--linkage", "complete", "--resolution", "0.5", "--cutoff", "3", "-o", prefix]) == 0
    singles = "s0 s1 s2 s3 s4 \n"
    expected = [f"0.000000 5 {singles}", f"0.500000 5 {singles}", "1.000000 4 s0,s1 s2 s3 s4 \n"]
    expected += [f"{k * 0.5:f} 3 s0,s1 s2,s4 s3 \n" for k in range(3, 10)]
    assert text(prefix + ".list") == "".join(expected)
    otu = ["0.000000 5 1 1 1 1 1 \n", "0.500000 5 1 1 1 1 1 \n", "1.000000 4 2 1 1 1 \n"]
    otu += [f"{k * 0.5:f} 3 2 2 1 \n" for k in range(3, 10)]
    assert text(prefix + ".otu") == "".join(otu)
    assert text(prefix + ".tree") == (
        "(s3:5.000,((s2:1.000,s4:1.000):4.000,(s1:0.500,s0:0.500):4.500):0.000);\n")
    membership = pd.read_csv(prefix + ".membership.tsv", sep="\t")
    assert membership.to_dict("list") == {
        "id": ids, "cluster": [1, 1, 2, 3, 2], "otu": ["s0", "s0", "s2", "s3", "s2"],
        "centroid": ["s0", "s0", "s2", "s3", "s2"]}


def test_list_member_order_and_index_names(tmp_path):
    # {0,3} and {1,2} merge at 0.75: the cluster at the lower index comes first, as a block.
    d = {(3, 0): 0.25, (2, 1): 0.5, (1, 0): 0.75, (2, 0): 0.75, (3, 1): 0.75, (3, 2): 0.75}
    dist = [d.get(tuple(int(x) for x in pair_from_index(k)), 1.5) for k in range(npairs(5))]
    path = write_dense(tmp_path / "d.dist", dist)  # no ids: names are 0-based indices
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", path, "--linkage", "complete", "--resolution", "0.25", "-o", prefix]) == 0
    lines = text(prefix + ".list").splitlines(keepends=True)
    assert len(lines) == 6  # floor(1.5 / 0.25): the last merge never shows
    assert lines[2] == "0.500000 4 0,3 1 2 4 \n"
    assert lines[3] == "0.750000 3 0,3 1,2 4 \n"
    assert lines[4] == "1.000000 2 0,3,1,2 4 \n"
    assert text(prefix + ".otu").splitlines()[4] == "1.000000 2 4 1 "


def test_tree_quotes_the_labels_newick_reserves(tmp_path):
    # FCluster prints ids as they are; Newick readers need quotes around these. Ids
    # without reserved characters stay as FCluster writes them (the test above).
    ids = ["a;tax=x:y", "it's", "(b)", "[c]", "plain_1", "NA"]
    rng = np.random.default_rng(3)
    d = rng.integers(1, 9, npairs(len(ids))) / 8
    path = write_dense(tmp_path / "d.dist", d, ids)
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", path, "--linkage", "complete", "--cutoff", "0.5", "-o", prefix]) == 0
    tree = text(prefix + ".tree")
    assert "'a;tax=x:y'" in tree and "'it''s'" in tree and "'(b)'" in tree and "'[c]'" in tree
    assert ",plain_1:" in tree or "(plain_1:" in tree
    parsed = Phylo.read(io.StringIO(tree), "newick")  # an independent Newick reader
    assert sorted(leaf.name for leaf in parsed.get_terminals()) == sorted(ids)
    # the structure survives the quotes: every leaf lies at the root's height (distances
    # in eighths print exactly with "%.3f")
    depths = [parsed.distance(leaf) for leaf in parsed.get_terminals()]
    assert max(depths) - min(depths) < 1e-9


@pytest.mark.parametrize("name", ["a,b", "a b"])
def test_list_refuses_ids_that_hold_its_separators(tmp_path, capsys, name):
    path = write_dense(tmp_path / "d.dist", [0.1, 0.2, 0.3], ["x", name, "y"])
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", path, "--linkage", "complete", "-o", prefix]) == 2
    assert f"{path}:{name}: FCluster's .list cannot hold this id" in one_error_line(capsys)
    assert not list(tmp_path.glob("o.*"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["complete", "average", "weighted"])
def test_kernel_matches_plain_reference_with_ties(seed, mode):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 24))
    d = rng.integers(1, 5, npairs(n)).astype(np.float32) / 4  # many exact ties
    weight = rng.integers(1, 9, n).astype(np.float32) if mode == "weighted" else np.ones(n, np.float32)
    left, right, height = hierarchical._fcluster_dense(d.copy(), weight, mode != "complete")
    ref = fcluster_reference(d, weight, mode != "complete")
    assert (left.tolist(), right.tolist(), height.astype(float).tolist()) == ref


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("method", ["complete", "average"])
def test_list_matches_scipy(tmp_path, seed, method):
    rng = np.random.default_rng(seed)
    n = 40
    ids = [f"r{k}" for k in range(n)]
    path = write_dense(tmp_path / "d.dist", rng.uniform(0.0, 0.6, npairs(n)), ids)
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", path, "--linkage", method, "-o", prefix]) == 0
    _, _, d = read_seqdist_text(path)
    condensed = seqdist_to_condensed(n, d.astype(np.float32).astype(np.float64))
    heights = linkage(condensed, method)[:, 2]
    lines = read_list(prefix + ".list")
    assert len(lines) == math.floor(heights.max() / 0.01 + 1e-7)
    compared = 0
    for threshold, _, partition in lines:
        if np.min(np.abs(heights - threshold)) > 1e-5:  # away from merge heights
            assert partition == scipy_partitions(condensed, method, threshold, ids), threshold
            compared += 1
    assert compared > len(lines) // 2


def test_large_dense_complete_matches_scipy_heights():
    rng = np.random.default_rng(7)
    n = 1500
    d = rng.random(npairs(n)).astype(np.float32)
    _, _, height = hierarchical._fcluster_dense(d.copy(), np.ones(n, np.float32), False)
    scipy_heights = linkage(seqdist_to_condensed(n, d.astype(np.float64)), "complete")[:, 2]
    assert np.array_equal(np.sort(height.astype(np.float64)), np.sort(scipy_heights))


# ---------------------------------------------------------------- edge lists


def tied_distances(rng, n):
    return rng.integers(1, 30, npairs(n)) / 100.0


@pytest.mark.parametrize("seed", range(5))
def test_edge_list_gives_dense_list_up_to_max_distance(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n, max_distance = 60, 0.12
    d = tied_distances(rng, n)
    dense = write_dense(tmp_path / "d.dist", d, [f"s{k}" for k in range(n)])
    # also some pairs beyond max_distance, as the distance stage keeps identity candidates
    keep = (d <= max_distance) | (rng.random(d.size) < 0.1)
    i, j = pair_from_index(np.flatnonzero(keep))
    sparse = write_sparse(tmp_path / "e.npz", n, i, j, d[keep], max_distance)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert main(["cluster", "-i", dense, "--linkage", "complete", "--cutoff", "0.1", "-o", a]) == 0
    assert main(["cluster", "-i", sparse, "--linkage", "complete", "--cutoff", "0.1", "-o", b]) == 0
    sparse_lines = text(b + ".list").splitlines()
    assert len(sparse_lines) == 13  # thresholds 0.00 .. 0.12
    dense_lines = text(a + ".list").splitlines()
    assert sparse_lines == dense_lines[:len(sparse_lines)]
    assert text(a + ".membership.tsv") == text(b + ".membership.tsv")


def test_list_lines_are_bounded(tmp_path, capsys):
    """An incomplete edge list up to a huge max_distance at the finest resolution would be
    millions of .list lines: one error line, nothing written."""
    rng = np.random.default_rng(5)
    d = tied_distances(rng, 10)
    i, j = pair_from_index(np.arange(d.size - 1))  # one pair missing: not a full matrix
    edges = write_sparse(tmp_path / "e.npz", 10, i, j, d[:-1], max_distance=150.0)
    out = tmp_path / "out" / "otus"
    assert main(["cluster", "-i", edges, "--linkage", "complete", "--resolution", "0.0001", "--cutoff", "0.1",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "1,500,001 lines of the .list (at most 1,000,000)" in err[0], err
    assert not out.parent.exists() or not any(out.parent.iterdir())
    # a coarser resolution is written: 15,001 lines
    assert main(["cluster", "-i", edges, "--linkage", "complete", "--resolution", "0.01", "--cutoff", "0.1",
                 "-o", str(out)]) == 0
    assert len(text(f"{out}.list").splitlines()) == 15_001


def test_complete_edge_list_is_a_full_matrix(tmp_path):
    rng = np.random.default_rng(3)
    n = 30
    d = tied_distances(rng, n)
    dense = write_dense(tmp_path / "d.dist", d, [f"s{k}" for k in range(n)])
    i, j = pair_from_index(np.arange(d.size))
    full = write_sparse(tmp_path / "e.npz", n, i, j, d, max_distance=0.1)
    for linkage_ in ("complete", "average"):
        a, b = str(tmp_path / f"a{linkage_}"), str(tmp_path / f"b{linkage_}")
        assert main(["cluster", "-i", dense, "--linkage", linkage_, "--cutoff", "0.2", "-o", a]) == 0
        assert main(["cluster", "-i", full, "--linkage", linkage_, "--cutoff", "0.2", "-o", b]) == 0
        for suffix in (".list", ".otu", ".tree", ".membership.tsv"):
            assert text(a + suffix) == text(b + suffix)


def test_edge_distances_read_as_seqdist_text_would_give_them():
    rng = np.random.default_rng(0)
    f = rng.random(20000).astype(np.float32)
    # float32 rounding midpoints and values a print-rounding away from them
    mid = (f.astype(np.float64) + np.nextafter(f, np.float32(2)).astype(np.float64)) / 2
    x = np.concatenate([mid, mid * (1 + 3e-9), mid * (1 - 3e-9), rng.random(20000) * 10, [0.0, 1.0, 10.0]])
    printed = np.array([float(f"{v:.8e}") for v in x]).astype(np.float32)
    assert np.array_equal(as_fcluster_float(x), printed)


# ---------------------------------------------------------------- greedy and tables


def write_fasta(path, records):
    path.write_text("".join(f">{name};size={size}\n{seq}\n" for name, size, seq in records))
    return str(path)


def write_pairs(path, rows):
    pairs = pd.DataFrame(rows, columns=["query", "target", "id"])  # id in percent
    pairs.insert(2, "cigar", "250M")  # other columns are allowed
    pairs.to_csv(path, sep="\t", index=False)
    return str(path)


GREEDY_FASTA = [("e", 1, "ACGTA"), ("a", 10, "ACGTC"), ("c", 5, "ACGTG"), ("b", 8, "ACGTT"),
                ("d", 5, "ACGAA")]
GREEDY_PAIRS = [
    ("b", "a", 98.0),   # b joins a
    ("a", "c", 96.0),   # below 97: c cannot join a
    ("c", "b", 97.5),   # b is no centroid: c becomes one
    ("d", "a", 97.0),   # d reaches a and c: c has the higher identity
    ("c", "d", 99.0),
    ("e", "a", 98.0),   # e ties between a and c: the earlier centroid, a
    ("e", "c", 98.0),
]


def test_greedy_hand_example(tmp_path):
    fasta = write_fasta(tmp_path / "u.fasta", GREEDY_FASTA)
    pairs = write_pairs(tmp_path / "kept.tsv", GREEDY_PAIRS)
    prefix = str(tmp_path / "g")
    assert main(["cluster", "--linkage", "greedy", "--pairs", pairs, "--identity", "0.97",
                "--fasta", fasta, "-o", prefix]) == 0
    membership = pd.read_csv(prefix + ".membership.tsv", sep="\t")
    assert membership.to_dict("list") == {
        "id": ["e", "a", "c", "b", "d"], "cluster": [1, 1, 2, 1, 2],
        "otu": ["a", "a", "c", "a", "c"], "centroid": ["a", "a", "c", "a", "c"]}
    assert text(prefix + ".centroids.fasta") == ">a\nACGTC\n>c\nACGTG\n"


def write_psse(path, pairs, significant):
    """A `seqpairs psse` table (the columns cluster reads, and others) of `pairs`."""
    table = pd.DataFrame([(q, t) for q, t, _ in pairs], columns=["query", "target"])
    table["pvalue"] = [1e-9 if flag else 0.5 for flag in significant]
    table["significant"] = significant
    table.to_csv(path, sep="\t", index=False)
    return str(path)


def greedy_run(tmp_path, name, *extra):
    fasta = write_fasta(tmp_path / "u.fasta", GREEDY_FASTA)
    pairs = write_pairs(tmp_path / "kept.tsv", GREEDY_PAIRS)
    prefix = str(tmp_path / name)
    assert main(["cluster", "--linkage", "greedy", "--pairs", pairs, "--identity", "0.97",
                 "--fasta", fasta, *extra, "-o", prefix]) == 0
    return prefix


def test_greedy_with_psse_uses_only_significant_pairs(tmp_path):
    # (b, a) not significant: b cannot join a and becomes a centroid; c (its pair with a
    # is below 97%) joins b; d's best pair (c, 99%) is with a member now, so d joins a.
    flags = [pair[:2] != ("b", "a") for pair in GREEDY_PAIRS]
    psse = write_psse(tmp_path / "psse.tsv", GREEDY_PAIRS, flags)
    prefix = greedy_run(tmp_path, "g", "--psse", psse)
    membership = pd.read_csv(prefix + ".membership.tsv", sep="\t")
    assert membership.to_dict("list") == {
        "id": ["e", "a", "c", "b", "d"], "cluster": [1, 1, 2, 2, 1],
        "otu": ["a", "a", "b", "b", "a"], "centroid": ["a", "a", "b", "b", "a"]}
    assert text(prefix + ".centroids.fasta") == ">a\nACGTC\n>b\nACGTT\n"


def test_greedy_with_every_pair_significant_is_greedy_without_psse(tmp_path):
    psse = write_psse(tmp_path / "psse.tsv", GREEDY_PAIRS, [True] * len(GREEDY_PAIRS))
    with_psse = greedy_run(tmp_path, "with", "--psse", psse)
    without = greedy_run(tmp_path, "without")
    for ext in (".membership.tsv", ".centroids.fasta"):
        assert text(with_psse + ext) == text(without + ext)
    # and none significant: every sequence its own cluster
    psse = write_psse(tmp_path / "none.tsv", GREEDY_PAIRS, [False] * len(GREEDY_PAIRS))
    alone = pd.read_csv(greedy_run(tmp_path, "alone", "--psse", psse) + ".membership.tsv",
                        sep="\t")
    assert list(alone["centroid"]) == list(alone["id"])


def test_otu_table_sums_equal_abundances(tmp_path):
    rng = np.random.default_rng(11)
    n = 50
    ids = [f"u{k}" for k in range(n)]
    counts = pd.DataFrame(rng.integers(0, 20, (n, 3)), columns=["soil", "lake", "gut"],
                          index=pd.Index(ids, name="id"))
    counts["total"] = counts.sum(axis=1)
    counts.to_csv(tmp_path / "abundance.tsv", sep="\t")
    seqs = ["".join(rng.choice(list("ACGT"), 12)) for _ in range(n)]
    fasta = write_fasta(tmp_path / "u.fasta", zip(ids, counts["total"], seqs))
    dist = write_dense(tmp_path / "d.dist", rng.uniform(0, 0.1, npairs(n)), ids)
    prefix = str(tmp_path / "o")
    assert main(["cluster", "-i", dist, "--linkage", "complete", "--fasta", fasta, "--abundance", str(tmp_path / "abundance.tsv"),
                "--cutoff", "0.05", "--sizeout", "-o", prefix]) == 0
    membership = pd.read_csv(prefix + ".membership.tsv", sep="\t", index_col="id")
    table = pd.read_csv(prefix + ".otu_table.tsv", sep="\t", index_col="cluster")
    assert list(table.columns) == ["otu", "centroid", "soil", "lake", "gut", "total"]
    assert 1 < len(table) < n
    assert table.drop(columns=["otu", "centroid"]).sum().to_dict() == counts.sum().to_dict()
    by_cluster = counts.groupby(membership.loc[counts.index, "cluster"]).sum()
    assert (table.drop(columns=["otu", "centroid"]) == by_cluster).all().all()
    totals = counts["total"]
    for number, row in table.iterrows():
        members = membership.index[membership["cluster"] == number]
        assert totals[row["centroid"]] == totals[members].max()  # most abundant member
    centroid_totals = totals[table["centroid"]].to_numpy()
    assert (np.diff(centroid_totals) <= 0).all()  # numbered by decreasing centroid abundance
    centroid_sizes = [int(h.split("=")[1]) for h in text(prefix + ".centroids.fasta").split()[::2]]
    assert centroid_sizes == list(table["total"])


def test_weighted_average_uses_abundance(tmp_path):
    rng = np.random.default_rng(5)
    n = 20
    ids = [f"u{k}" for k in range(n)]
    sizes = rng.integers(1, 50, n)
    fasta = write_fasta(tmp_path / "u.fasta", zip(ids, sizes, ["ACGT"] * n))
    d = rng.integers(1, 9, npairs(n)) / 8
    dist = write_dense(tmp_path / "d.dist", d, ids)
    prefix = str(tmp_path / "w")
    assert main(["cluster", "-i", dist, "--linkage", "average", "--weighted", "--fasta", fasta,
                "--resolution", "0.125", "-o", prefix]) == 0
    left, right, height = fcluster_reference(d.astype(np.float32), sizes.astype(np.float32), True)
    tree = hierarchical.Tree(n, np.array(left), np.array(right), np.array(height), dense=True)
    assert text(prefix + ".tree") == hierarchical.newick(tree, ids)


# ---------------------------------------------------------------- errors


def one_error_line(capsys):
    err = capsys.readouterr().err
    assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err
    return err


def test_errors(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 6
    ids = [f"s{k}" for k in range(n)]
    d = rng.uniform(0, 0.2, npairs(n))
    dense = write_dense(tmp_path / "d.dist", d, ids)
    keep = d <= 0.1
    i, j = pair_from_index(np.flatnonzero(keep))
    sparse = write_sparse(tmp_path / "e.npz", n, i, j, d[keep], 0.1)
    out = str(tmp_path / "o")

    assert main(["cluster", "-i", str(tmp_path / "missing.dist"), "--linkage", "complete",
                 "-o", out]) == 2
    assert "missing.dist: no such file" in one_error_line(capsys)
    # the default method (greedy) clusters on the identity of kept pairs, not on -i
    assert main(["cluster", "-i", dense, "-o", out]) == 2
    assert "greedy clusters on identity distances only: give --pairs" in one_error_line(capsys)
    assert main(["cluster", "--pairs", "p.tsv", "-i", dense, "-o", out]) == 2
    assert "one of them" in one_error_line(capsys)
    assert main(["cluster", "-i", sparse, "--linkage", "average", "-o", out]) == 2
    assert "average linkage needs every pair" in one_error_line(capsys)
    assert main(["cluster", "-i", sparse, "--linkage", "complete", "--cutoff", "0.2", "-o", out]) == 2
    assert "above the edge list's max_distance" in one_error_line(capsys)
    assert main(["cluster", "--linkage", "greedy", "-o", out]) == 2
    assert "give --pairs" in one_error_line(capsys)
    assert main(["cluster", "--linkage", "opti", "--pairs", "p.tsv", "-o", out]) == 2
    assert "needs --fasta or --abundance" in one_error_line(capsys)
    assert main(["cluster", "-i", dense, "--linkage", "complete", "--weighted", "-o", out]) == 2
    one_error_line(capsys)

    fasta = write_fasta(tmp_path / "u.fasta", [(name, 1, "ACGT") for name in ids[:-1] + ["zz"]])
    assert main(["cluster", "-i", dense, "--linkage", "complete", "--fasta", fasta, "-o", out]) == 2
    assert "'s5'" in one_error_line(capsys)

    good = write_fasta(tmp_path / "g.fasta", [(name, 1, "ACGT") for name in ids])
    pairs = write_pairs(tmp_path / "p.tsv", [("s0", "s1", 99.0), ("s2", "nope", 99.0)])
    assert main(["cluster", "--linkage", "greedy", "--pairs", pairs, "--fasta", good, "-o", out]) == 2
    assert f"{pairs}:3: target 'nope'" in one_error_line(capsys)
    fractions = write_pairs(tmp_path / "f.tsv", [("s0", "s1", 0.99)])
    assert main(["cluster", "--linkage", "greedy", "--pairs", fractions, "--fasta", good, "-o", out]) == 2
    assert "in percent" in one_error_line(capsys)

    # --psse: the same pairs in the same order as --pairs, a True/False significant column
    kept = [("s0", "s1", 99.0), ("s2", "s3", 98.0), ("s4", "s5", 97.5)]
    pairs = write_pairs(tmp_path / "k.tsv", kept)
    greedy = ["cluster", "--linkage", "greedy", "--pairs", pairs, "--fasta", good, "-o", out]
    swapped = write_psse(tmp_path / "swapped.tsv", [kept[0], kept[2], kept[1]], [True] * 3)
    assert main([*greedy, "--psse", swapped]) == 2
    assert (f"{swapped}:3: pair s4 s5, but {pairs}:3 has s2 s3; --psse must be seqpairs "
            "psse's table of the --pairs file") in one_error_line(capsys)
    reversed_pair = write_psse(tmp_path / "reversed.tsv", [kept[0], ("s3", "s2", 0), kept[2]],
                               [True] * 3)
    assert main([*greedy, "--psse", reversed_pair]) == 2
    assert f"{reversed_pair}:3: pair s3 s2" in one_error_line(capsys)
    short = write_psse(tmp_path / "short.tsv", kept[:2], [True] * 2)
    assert main([*greedy, "--psse", short]) == 2
    assert f"{short}: 2 pairs, but {pairs} has 3" in one_error_line(capsys)
    words = write_psse(tmp_path / "words.tsv", kept, ["yes", "no", "yes"])
    assert main([*greedy, "--psse", words]) == 2
    assert f"{words}:2: significant must be True or False, not 'yes'" in one_error_line(capsys)
    columns = tmp_path / "columns.tsv"
    columns.write_text("query\ttarget\tpvalue\ns0\ts1\t0.01\n")
    assert main([*greedy, "--psse", str(columns)]) == 2
    assert f"{columns}:1: no column significant in the header" in one_error_line(capsys)
    assert main([*greedy, "--psse", str(tmp_path / "absent.tsv")]) == 2
    assert "absent.tsv: no such file" in one_error_line(capsys)
    assert main(["cluster", "-i", dense, "--linkage", "complete", "--psse", swapped, "-o", out]) == 2
    assert "--psse is for --linkage greedy only" in one_error_line(capsys)

    bad = tmp_path / "abundance.tsv"
    bad.write_text("id\tx\ttotal\n" + "".join(f"{name}\t1\t1\n" for name in ids[:3])
                   + f"{ids[3]}\t1\t2\n" + "".join(f"{name}\t1\t1\n" for name in ids[4:]))
    assert main(["cluster", "-i", dense, "--linkage", "complete", "--abundance", str(bad), "-o", out]) == 2
    assert f"{bad}:5: total is not the sum" in one_error_line(capsys)
    assert not list(tmp_path.glob("o.*"))  # nothing written by a failed run


# ---------------------------------------------------------------- identity distance, opti


def membership_partition(prefix):
    table = pd.read_csv(prefix + ".membership.tsv", sep="\t", dtype=str)
    return {frozenset(g["id"]) for _, g in table.groupby("cluster")}


def random_kept_pairs(rng, n, identity):
    """Distinct identities (no ties) for a random sparse set of pairs, some below
    `identity` (the method must skip them), as the filter would keep them."""
    i, j = np.triu_indices(n, 1)
    chosen = rng.random(len(i)) < 0.3
    ident = 100 * (1 - rng.permutation(np.arange(chosen.sum()) + 1) / (chosen.sum() * 8))
    ident = ident.round(8)
    return [(f"s{a}", f"s{b}", v) for a, b, v in zip(i[chosen], j[chosen], ident)]


@pytest.mark.parametrize("seed", range(4))
def test_complete_on_identity_matches_scipy(tmp_path, seed):
    """Complete linkage on 1 - identity, every pair not in the file farther than the cutoff:
    SciPy's complete linkage of that full matrix (missing pairs at 1), cut at 1 - id."""
    rng = np.random.default_rng(seed)
    n, identity = 40, 0.97
    rows = random_kept_pairs(rng, n, identity)
    ids = [f"s{k}" for k in range(n)]
    fasta = write_fasta(tmp_path / "u.fasta", [(name, 1, "ACGT") for name in ids])
    pairs = write_pairs(tmp_path / "kept.tsv", rows)
    prefix = str(tmp_path / "c")
    assert main(["cluster", "--linkage", "complete", "--pairs", pairs, "--id", str(identity),
                 "--fasta", fasta, "-o", prefix]) == 0
    full = np.ones((n, n))
    for a, b, v in rows:
        full[int(a[1:]), int(b[1:])] = full[int(b[1:]), int(a[1:])] = 1 - v / 100
    np.fill_diagonal(full, 0)
    condensed = full[np.triu_indices(n, 1)]
    expected = scipy_partitions(condensed, "complete", 1 - identity + 1e-12, ids)
    assert membership_partition(prefix) == expected
    assert len(expected) < n - 3  # the test clusters something


def test_identity_methods_write_the_identity_to_the_centroid(tmp_path):
    fasta = write_fasta(tmp_path / "u.fasta", GREEDY_FASTA)
    pairs = write_pairs(tmp_path / "kept.tsv", GREEDY_PAIRS)
    for method in ("complete", "opti"):
        prefix = str(tmp_path / method)
        assert main(["cluster", "--linkage", method, "--pairs", pairs, "--fasta", fasta,
                     "-o", prefix]) == 0
        known = {frozenset((a, b)): v for a, b, v in GREEDY_PAIRS}
        for line in Path(prefix + ".uc").read_text().splitlines():
            fields = line.split("\t")
            if fields[0] == "H":
                pair = frozenset((fields[8], fields[9]))
                assert fields[3] == (f"{known[pair]:.1f}" if pair in known else "*"), line


def planted_cliques(rng, sizes):
    """Ids and kept pairs of disjoint cliques (every pair inside at >= 97%), shuffled."""
    names = [f"q{k}" for k in rng.permutation(sum(sizes))]
    rows, start = [], 0
    for size in sizes:
        members = names[start:start + size]
        rows += [(a, b, 97 + 3 * rng.random()) for x, a in enumerate(members)
                 for b in members[x + 1:]]
        start += size
    return names, rows, {frozenset(names[s - z:s]) for s, z in
                         zip(np.cumsum(sizes), sizes)}


def read_sensspec(prefix):
    table = pd.read_csv(prefix + ".sensspec", sep="\t")
    assert list(table.columns) == ["label", "cutoff", "numotus", "tp", "tn", "fp", "fn",
                                   "sensitivity", "specificity", "ppv", "npv", "fdr",
                                   "accuracy", "mcc", "f1score"]
    return table.iloc[0]


def test_opti_finds_planted_otus_and_reports_their_mcc(tmp_path):
    rng = np.random.default_rng(3)
    names, rows, truth = planted_cliques(rng, [1, 2, 5, 9, 3, 7])
    rows.append((rows[0][0], next(n for n in names if n not in {rows[0][0], rows[0][1]}),
                 50.0))  # below --id: not a close pair
    fasta = write_fasta(tmp_path / "u.fasta", [(name, 1, "ACGT") for name in names])
    pairs = write_pairs(tmp_path / "kept.tsv", rows)
    prefix = str(tmp_path / "o")
    assert main(["cluster", "--linkage", "opti", "--pairs", pairs, "--fasta", fasta,
                 "-o", prefix]) == 0
    assert membership_partition(prefix) == truth
    stats = read_sensspec(prefix)
    n = len(names)
    close = sum(z * (z - 1) // 2 for z in [1, 2, 5, 9, 3, 7])
    assert (stats["tp"], stats["fp"], stats["fn"], stats["tn"]) == \
        (close, 0, 0, n * (n - 1) // 2 - close)
    assert stats["mcc"] == 1.0 and stats["numotus"] == len(truth) and stats["label"] == 0.03


def test_opti_on_seqdist_reads_edge_list_and_matrix_alike(tmp_path):
    """The close pairs of -i are those within --cutoff, from SeqDist text or an edge list;
    the sensspec's counts are those of the written partition."""
    rng = np.random.default_rng(5)
    n = 50
    ids = [f"s{k}" for k in range(n)]
    d = rng.uniform(0, 1, npairs(n)) ** 3
    dense = write_dense(tmp_path / "d.dist", d, ids)
    keep = d <= 0.2
    i, j = pair_from_index(np.flatnonzero(keep))
    sparse = write_sparse(tmp_path / "e.npz", n, i, j, d[keep], 0.2, ids)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for source, prefix in ((dense, a), (sparse, b)):
        assert main(["cluster", "-i", source, "--linkage", "opti", "--cutoff", "0.05",
                     "-o", prefix]) == 0
    assert membership_partition(a) == membership_partition(b)
    close = {frozenset((f"s{x}", f"s{y}"))
             for x, y in zip(*pair_from_index(np.flatnonzero(as_fcluster_float(d) <= 0.05)))}
    same = {frozenset((x, y)) for group in membership_partition(a) for x in group for y in group
            if x != y}
    stats = read_sensspec(a)
    assert (stats["tp"], stats["fp"], stats["fn"]) == \
        (len(close & same), len(same - close), len(close - same))
    assert stats["tp"] > 0 and 0 < stats["mcc"] <= 1
    assert main(["cluster", "-i", sparse, "--linkage", "opti", "--cutoff", "0.3",
                 "-o", a]) == 2  # above the edge list's max_distance
