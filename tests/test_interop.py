"""Outputs for other tools: mothur column distances, PHYLIP matrix, BIOM OTU table.

The BIOM file is read back with the biom-format package (the reference implementation
QIIME uses); the distance files are checked against the edge list and condensed matrix.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial.distance import squareform


def family_fasta(path, n=30, length=80, seed=3):
    rng = np.random.default_rng(seed)
    roots = rng.choice(list("ACGT"), (3, length))
    with open(path, "w") as fh:
        for k in range(n):
            s = roots[k % 3].copy()
            hit = rng.random(length) < 0.04
            s[hit] = rng.choice(list("ACGT"), hit.sum())
            fh.write(f">r{k};size={n - k}\n{''.join(s)}\n")
    return path


def test_mothur_column_is_the_edge_list_within_max_distance(tmp_path, cli):
    from seqpairs.formats.distances import read_edges

    fasta = family_fasta(tmp_path / "in.fasta")
    edges, mothur = tmp_path / "e.npz", tmp_path / "d.dist"
    code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu", "--max-distance",
                       "0.8", "--candidate-identity", "0.9", "--edges", edges, "--mothur", mothur)
    assert code == 0, err
    e = read_edges(edges)
    within = e.distance <= 0.8
    assert 0 < within.sum() < len(e)  # some candidate-identity pairs lie beyond max_distance
    want = [f"{e.ids[i]}\t{e.ids[j]}\t{d:.8e}"
            for i, j, d in zip(e.i[within], e.j[within], e.distance[within])]
    assert mothur.read_text().splitlines() == want


def test_phylip_is_the_lower_triangle_of_the_matrix(tmp_path, cli):
    fasta = family_fasta(tmp_path / "in.fasta", n=12)
    condensed, phylip = tmp_path / "c.npy", tmp_path / "d.phylip"
    code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu",
                       "--condensed", condensed, "--phylip", phylip)
    assert code == 0, err
    square = squareform(np.load(condensed))
    lines = phylip.read_text().splitlines()
    assert lines[0] == "12"
    for i, line in enumerate(lines[1:]):
        name, *values = line.split("\t")
        assert name == f"r{i}"
        assert values == [f"{d:.8e}" for d in square[i, :i]]


def test_mothur_needs_a_cutoff(tmp_path, cli):
    fasta = family_fasta(tmp_path / "in.fasta", n=5)
    code, _, err = cli("distance", "-i", fasta, "--mothur", tmp_path / "d.dist")
    assert code == 2 and err.startswith("seqpairs: error: --mothur writes the pairs within")


def test_biom_table_equals_the_tsv_table(tmp_path, cli, monkeypatch):
    from biom.parse import parse_biom_table

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    rng = np.random.default_rng(5)
    fasta = family_fasta(tmp_path / "in.fasta")
    ids = [f"r{k}" for k in range(30)]
    counts = pd.DataFrame(rng.integers(0, 4, (30, 3)), index=pd.Index(ids, name="id"),
                          columns=["gut", "skin", "soil"])
    counts["total"] = counts.sum(axis=1)
    abundance = tmp_path / "abundance.tsv"
    counts.to_csv(abundance, sep="\t")
    kept = tmp_path / "kept.tsv"
    assert cli("-q", "filter", "-i", fasta, "--identity", "0.9", "-o", kept)[0] == 0
    prefix = tmp_path / "otus"
    code, _, err = cli("-q", "cluster", "--linkage", "greedy", "--identity", "0.9", "--pairs",
                       kept, "--fasta", fasta, "--abundance", abundance, "-o", prefix)
    assert code == 0, err

    tsv = pd.read_csv(f"{prefix}.otu_table.tsv", sep="\t", index_col="cluster")
    with open(f"{prefix}.otu_table.biom") as fh:
        table = parse_biom_table(fh)
    assert list(table.ids(axis="observation")) == [f"OTU{c}" for c in tsv.index]
    assert list(table.ids(axis="sample")) == ["gut", "skin", "soil"]
    assert np.array_equal(table.matrix_data.toarray(), tsv[["gut", "skin", "soil"]].to_numpy())
    centroids = [table.metadata(f"OTU{c}", axis="observation")["centroid"] for c in tsv.index]
    assert centroids == list(tsv["centroid"])
    assert table.create_date.isoformat() == "2023-11-14T22:13:20"
