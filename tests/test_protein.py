"""Protein under an affine scheme (the registry's `blosum62`: BLOSUM62, gaps 11 + k,
end gaps too): the CPU traceback and score kernels against the plain reference
(tests/reference_affine.py), scores against parasail's nw, and `seqpairs distance` and
`seqpairs filter` on protein FASTA."""
import random

import numpy as np
import pandas as pd
import parasail
import pytest
from Bio.Align import substitution_matrices

import reference_affine
from proteins import proteins
from seqpairs import backends, scoring
from seqpairs.backends.cpu.affine import aligner
from seqpairs.backends.cpu.trace_affine import trace_pairs
from seqpairs.cli import main
from seqpairs.formats.distances import read_edges
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import filter as seqfilter
from seqpairs.scoring import AffineScheme
from seqpairs.scoring.alphabet import AMINO_ACIDS, PROTEIN, encode_all
from test_vsearch import COUNTS, vsearch_counts

BLOSUM62 = scoring.get("blosum62")
CPU = backends.select("cpu")


def test_blosum62_scheme_is_biopythons_matrix():
    table = substitution_matrices.load("BLOSUM62")
    assert BLOSUM62.alphabet == AMINO_ACIDS + "BZX*"
    assert all(BLOSUM62.subst[x][y] == table[a, b]
               for x, a in enumerate(BLOSUM62.alphabet) for y, b in enumerate(BLOSUM62.alphabet))
    assert (BLOSUM62.gap_open, BLOSUM62.gap_extend, BLOSUM62.end_open,
            BLOSUM62.end_extend) == (11, 1, 11, 1)
    assert AffineScheme.from_matrix("PAM250", 10, 2).alphabet.startswith(AMINO_ACIDS)


def test_traceback_equals_the_reference():
    seqs = proteins(seed=1)
    rng = random.Random(2)
    pairs = [(rng.choice(seqs), rng.choice(seqs)) for _ in range(150)]
    codes, offsets = encode_all([s for pair in pairs for s in pair], BLOSUM62.alphabet)
    idx = np.arange(len(pairs))
    al = trace_pairs(codes, offsets, 2 * idx, 2 * idx + 1, BLOSUM62)
    score, length = aligner(codes, offsets, BLOSUM62)(2 * idx, 2 * idx + 1)
    assert np.array_equal(al.score, score)
    for k, (a, b) in enumerate(pairs):
        ref_score, cols = reference_affine.vsearch_traceback(a, b, BLOSUM62)
        assert al.score[k] == ref_score == reference_affine.column_score(cols, BLOSUM62)
        assert (score[k], length[k]) == reference_affine.align(a, b, BLOSUM62), (a, b)
        assert {name: int(al[name][k]) for name in COUNTS} == vsearch_counts(a, b, cols)


def test_scores_equal_parasail_nw():
    """parasail's nw with BLOSUM62, open 12 and extend 1 (its opening includes the first
    column: NCBI's 11 + k), every pair of 60 proteins."""
    seqs = proteins(seed=3, n=60, max_len=200)
    codes, offsets = encode_all(seqs, BLOSUM62.alphabet)
    q, t = np.triu_indices(len(seqs), 1)
    al = CPU.trace_affine(codes, offsets, BLOSUM62)(q, t)
    theirs = [parasail.nw(seqs[a], seqs[b], 12, 1, parasail.blosum62).score
              for a, b in zip(q.tolist(), t.tolist())]
    assert al.score.tolist() == theirs


def write_fasta(path, seqs):
    path.write_text("".join(f">p{k}\n{s}\n" for k, s in enumerate(seqs)))
    return str(path)


def test_distance_and_filter_on_protein_fasta(tmp_path):
    seqs = proteins(seed=4, n=50)
    fasta = write_fasta(tmp_path / "p.fasta", seqs)
    npz = tmp_path / "e.npz"
    assert main(["-q", "distance", "-i", fasta, "--scoring", "blosum62", "--backend", "cpu",
                 "--max-distance", "0", "--candidate-identity", "0.6", "--edges",
                 str(npz)]) == 0
    edges = read_edges(npz)
    assert edges.scoring == "blosum62" and len(edges) > 10
    codes, offsets = encode_all(seqs, BLOSUM62.alphabet)
    s = SequenceSet([f"p{k}" for k in range(len(seqs))], seqs,
                    np.ones(len(seqs), dtype=np.int64), codes, offsets)
    every = seqfilter.filter_affine(s, BLOSUM62, CPU, 0.6, 2)
    assert main(["-q", "filter", "-i", fasta, "--scoring", "blosum62", "--distances",
                 str(npz), "--identity", "0.6", "-o", str(tmp_path / "k.tsv")]) == 0
    kept = pd.read_csv(tmp_path / "k.tsv", sep="\t")
    assert len(kept) == len(every) == (edges.distance <= 0.4).sum() > 0
    assert list(kept["raw"]) == list(every["raw"])


def test_a_letter_outside_the_matrix_is_one_line(tmp_path, capsys):
    fasta = write_fasta(tmp_path / "p.fasta", ["MKVLA", "MKVJA"])
    assert main(["-q", "distance", "-i", fasta, "--scoring", "blosum62", "--edges",
                 str(tmp_path / "e.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "p.fasta:p1: letter 'J' is not in the" in err


@pytest.mark.parametrize("name", ["blosum62", "blastp"])
def test_protein_schemes_say_what_they_score(name):
    assert scoring.REGISTRY[name].letters == "protein"
    assert set(scoring.get(name).alphabet) >= set(AMINO_ACIDS)


def test_protein_samples_through_every_stage(tmp_path):
    """ingest --alphabet protein, binning, distance and filter under blosum62, psse with
    BLOSUM62 (blastp's scores), greedy clustering with centroids: every stage reads the
    protein FASTA."""
    families = proteins(seed=6, n=12, max_len=150)
    reads = [(f"r{k}", f) for k, f in enumerate(families * 3)]  # each protein three times
    reads += [("lower", families[0].lower()), ("gapped", families[1][:5] + "-" + families[1][5:])]
    sample = tmp_path / "s1.fasta"
    sample.write_text("".join(f">{name}\n{seq}\n" for name, seq in reads))
    u, b, t, e, k, p = (str(tmp_path / name) for name in
                        ("u.fasta", "bins.tsv", "tiles.tsv", "e.npz", "k.tsv", "p.tsv"))
    stages = [
        ["ingest", "-i", str(sample), "--alphabet", "protein", "-o", u, "--abundance",
         str(tmp_path / "a.tsv"), "--report", str(tmp_path / "r.tsv")],
        ["binning", "-i", u, "--alphabet", "protein", "--bins", b, "--tiles", t],
        ["distance", "-i", u, "--scoring", "blosum62", "--bins", b, "--tiles", t,
         "--max-distance", "0.6", "--candidate-identity", "0.5", "--edges", e],
        ["filter", "-i", u, "--scoring", "blosum62", "--distances", e, "--identity", "0.5",
         "-o", k],
        ["psse", "-i", u, "--alphabet", "protein", "--pairs", k, "--shuffles", "50", "-o", p],
        ["cluster", "--pairs", k, "--linkage", "greedy", "--identity", "0.5", "--fasta", u,
         "--alphabet", "protein", "-o", str(tmp_path / "otus")],
    ]
    for argv in stages:
        assert main(["-q", *argv]) == 0, argv[0]
    unique = (tmp_path / "u.fasta").read_text().split("\n")[1::2]
    assert sorted(filter(None, unique)) == sorted(set(families))  # lower case and gaps undone
    kept = pd.read_csv(k, sep="\t")
    assert len(kept) > 0 and (kept["id"] >= 50).all()
    assert len(pd.read_csv(p, sep="\t")) == len(kept)
    centroids = (tmp_path / "otus.centroids.fasta").read_text()
    assert centroids.count(">") < len(families) and set(centroids.replace("\n", "")) - set(
        ">;=0123456789abcdefghijklmnopqrstuvwxyz_") <= set(PROTEIN)


@pytest.mark.parametrize("letters, problem", [
    ("MKV*L", "'*' at position 4 is not an amino acid code"),
    ("MKVJL", "'J' at position 4 is not an amino acid code"),
    ("MKV1L", "'1' at position 4 is not an amino acid code"),
])
def test_protein_ingest_refuses_other_letters(tmp_path, capsys, letters, problem):
    sample = tmp_path / "s1.fasta"
    sample.write_text(f">ok\nMKVLA\n>bad\n{letters}\n")
    assert main(["-q", "ingest", "-i", str(sample), "--alphabet", "protein", "-o",
                 str(tmp_path / "u.fasta"), "--abundance", str(tmp_path / "a.tsv"),
                 "--report", str(tmp_path / "r.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"s1.fasta:bad: {problem}" in err, err
