"""Outputs for other tools: mothur column distances, PHYLIP matrix, BIOM OTU table with
the centroids FASTA, mothur .shared, vsearch .uc.

The BIOM file is read back with the biom-format package (the reference implementation
QIIME uses); the distance files are checked against the edge list and condensed matrix.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from Bio import SeqIO
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
    prefix, _ = clustered(tmp_path, cli, "greedy")

    tsv = pd.read_csv(f"{prefix}.otu_table.tsv", sep="\t", index_col="cluster",
                      dtype={"otu": str, "centroid": str})
    with open(f"{prefix}.otu_table.biom") as fh:
        table = parse_biom_table(fh)
    assert list(table.ids(axis="observation")) == list(tsv["otu"]) == list(tsv["centroid"])
    assert list(table.ids(axis="sample")) == ["gut", "skin", "soil"]
    assert np.array_equal(table.matrix_data.toarray(), tsv[["gut", "skin", "soil"]].to_numpy())
    centroids = [table.metadata(otu, axis="observation")["centroid"] for otu in tsv["otu"]]
    assert centroids == list(tsv["centroid"])
    assert table.create_date.isoformat() == "2023-11-14T22:13:20"
    # QIIME 2 joins the table and the representative sequences by id
    assert [r.id for r in SeqIO.parse(f"{prefix}.centroids.fasta", "fasta")] == list(tsv["otu"])


def clustered(tmp_path, cli, linkage, *options):
    """Greedy or complete-linkage OTUs of a family with three samples."""
    rng = np.random.default_rng(9)
    fasta = family_fasta(tmp_path / "in.fasta")
    ids = [f"r{k}" for k in range(30)]
    counts = pd.DataFrame(rng.integers(0, 5, (30, 3)), index=pd.Index(ids, name="id"),
                          columns=["gut", "skin", "soil"])
    counts["total"] = counts.sum(axis=1)
    counts.to_csv(tmp_path / "abundance.tsv", sep="\t")
    prefix = tmp_path / f"otus_{linkage}"
    if linkage == "greedy":
        kept = tmp_path / "kept.tsv"
        assert cli("-q", "filter", "-i", fasta, "--identity", "0.9", "-o", kept)[0] == 0
        source = ["--identity", "0.9", "--pairs", kept]
    else:
        edges = tmp_path / "edges.npz"
        assert cli("-q", "distance", "-i", fasta, "--max-distance", "2", "--edges", edges)[0] == 0
        source = ["-i", edges, "--cutoff", "1.5"]
    code, _, err = cli("-q", "cluster", "--linkage", linkage, *source, "--fasta", fasta,
                       "--abundance", tmp_path / "abundance.tsv", "-o", prefix, *options)
    assert code == 0, err
    return prefix, counts


@pytest.mark.parametrize("linkage", ["greedy", "complete"])
def test_relabelled_otus_have_one_name_everywhere(tmp_path, cli, linkage):
    from biom import load_table

    prefix, counts = clustered(tmp_path, cli, linkage, "--relabel", "OTU_", "--sizeout")
    members = pd.read_csv(f"{prefix}.membership.tsv", sep="\t", dtype=str)
    otus = [f"OTU_{k}" for k in range(1, members["cluster"].astype(int).max() + 1)]
    assert sorted(set(members["otu"]), key=lambda o: int(o[4:])) == otus
    assert list(load_table(f"{prefix}.otu_table.biom").ids(axis="observation")) == otus
    headers = [r.id for r in SeqIO.parse(f"{prefix}.centroids.fasta", "fasta")]
    sizes = members.assign(n=counts["total"].loc[members["id"]].to_numpy()).groupby("otu")["n"]
    assert headers == [f"{otu};size={sizes.sum()[otu]}" for otu in otus]  # --sizeout


@pytest.mark.parametrize("linkage", ["greedy", "complete"])
def test_mothur_shared_and_vsearch_uc(tmp_path, cli, linkage):
    prefix, counts = clustered(tmp_path, cli, linkage)
    members = pd.read_csv(f"{prefix}.membership.tsv", sep="\t", dtype=str)
    # mothur's shared: a row per sample, a column per OTU, counts that add up per sample
    shared = pd.read_csv(f"{prefix}.shared", sep="\t", dtype={"label": str})
    otus = list(shared.columns[3:])
    assert list(shared["Group"]) == ["gut", "skin", "soil"]
    assert set(shared["label"]) == {"0.1" if linkage == "greedy" else "1.5"}
    assert (shared["numOtus"] == len(otus)).all() and otus == list(dict.fromkeys(
        members.sort_values("cluster", key=lambda c: c.astype(int))["otu"]))
    for sample in ("gut", "skin", "soil"):
        by_otu = counts[sample].groupby(members.set_index("id")["otu"]).sum()
        assert shared.set_index("Group").loc[sample, otus].tolist() == by_otu[otus].tolist()
    # vsearch's .uc: every sequence once as S or H, C sizes add up, H to its own centroid
    uc = pd.read_csv(f"{prefix}.uc", sep="\t", header=None, dtype=str)
    assert uc.shape[1] == 10 and set(uc[0]) <= {"S", "H", "C"}
    seen = uc[uc[0] != "C"][8]
    assert sorted(seen) == sorted(members["id"])
    assert uc[uc[0] == "C"][2].astype(int).sum() == len(members)
    centroid = members.set_index("id")["centroid"]
    hits = uc[uc[0] == "H"]
    assert (hits[9] == centroid.loc[hits[8]].to_numpy()).all()
    if linkage == "greedy":  # identities of the kept pairs
        assert hits[3].astype(float).between(90, 100).all() and len(hits)
    else:
        assert (hits[3] == "*").all()
