"""Simulate: determinism, truth table, the error model, and ingest of the result."""
from __future__ import annotations

import gzip
from itertools import groupby

import pandas as pd
import pytest
from Bio import SeqIO

import seqpairs.cli
from seqpairs.reads.simulate import Params, make_community, text

FILES = ["references.fasta", "sample1.fastq.gz", "sample2.fastq.gz", "sample3.fastq.gz", "truth.tsv"]


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default community, written through the CLI."""
    out = tmp_path_factory.mktemp("sim")
    assert seqpairs.cli.main(["simulate", "-o", str(out)]) == 0
    return out


def load(out):
    with open(out / "references.fasta") as handle:
        references = {r.id: str(r.seq) for r in SeqIO.parse(handle, "fasta")}
    reads = {}
    for path in sorted(out.glob("*.fastq.gz")):
        with gzip.open(path, "rt") as handle:
            reads.update({r.id: str(r.seq) for r in SeqIO.parse(handle, "fastq")})
    truth = pd.read_csv(out / "truth.tsv", sep="\t")
    return references, reads, truth


def hamming(a, b):
    return sum(x != y for x, y in zip(a, b))


def runs(seq):
    return [(letter, len(list(group))) for letter, group in groupby(seq)]


# ---------------------------------------------------------------- files


def test_same_seed_same_bytes(tmp_path, cli):
    args = ["--references", 4, "--reads", 50, "--samples", 3]
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        assert cli("simulate", "-o", tmp_path / name, "--seed", seed, *args) == (0, "", "")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(FILES)
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "truth.tsv").read_bytes() != (tmp_path / "c" / "truth.tsv").read_bytes()


def test_truth_table_matches_reads(default_run):
    references, reads, truth = load(default_run)
    assert list(truth.columns) == ["read_id", "sample", "reference", "n_errors"]
    assert len(references) == 8
    assert truth["sample"].value_counts().to_dict() == {"sample1": 300, "sample2": 300, "sample3": 300}
    assert list(truth["read_id"]) == list(reads)
    assert set(truth["reference"]) <= set(references)
    exact = truth[truth["n_errors"] == 0]
    assert all(reads[r] == references[ref] for r, ref in zip(exact["read_id"], exact["reference"]))
    # Reads with errors almost never equal their reference (only if two errors cancel out).
    noisy = truth[truth["n_errors"] > 0]
    same = sum(reads[r] == references[ref] for r, ref in zip(noisy["read_id"], noisy["reference"]))
    assert same <= 0.02 * len(noisy)


def test_references_form_a_tree_at_the_divergence(default_run):
    references, _, _ = load(default_run)
    with open(default_run / "references.fasta") as handle:
        headers = [line[1:].split() for line in handle if line.startswith(">")]
    copies = [h for h in headers if len(h) > 1]
    assert 0 < len(copies) < len(headers)
    for name, parent, substitutions in copies:
        parent, n = parent.removeprefix("parent="), int(substitutions.removeprefix("substitutions="))
        assert n == round(Params().divergence * len(references[parent]))
        assert len(references[name]) == len(references[parent])
        assert hamming(references[name], references[parent]) == n
    assert all(245 <= len(seq) <= 255 for seq in references.values())


def test_default_community_is_small_but_needs_dereplication(default_run):
    references, reads, truth = load(default_run)
    error_free = (truth["n_errors"] == 0).mean()
    assert 0.3 < error_free < 0.7
    # Sized for a quick downstream run: a few hundred unique sequences.
    assert 300 <= len(set(reads.values())) <= 600
    # Abundance profiles are skewed: one reference dominates each sample.
    for _, picks in truth.groupby("sample")["reference"]:
        assert picks.value_counts().iloc[0] > 2 * len(picks) / len(references)


# ---------------------------------------------------------------- error model


def community(**rates):
    params = Params(references=4, reads=200, samples=1, seed=3, **rates)
    c = make_community(params)
    refs = {r.name: text(r.seq) for r in c.references}
    reads = [text(seq) for _, seq in c.reads["sample1"]]
    return [(read, refs[ref], n) for read, ref, n in zip(reads, c.truth["reference"], c.truth["n_errors"])]


NO_ERRORS = {"substitution_rate": 0.0, "indel_rate": 0.0, "homopolymer_rate": 0.0}


def test_no_errors_gives_exact_copies():
    assert all(read == ref and n == 0 for read, ref, n in community(**NO_ERRORS))


def test_substitutions_change_bases_only():
    reads = community(**{**NO_ERRORS, "substitution_rate": 0.02})
    assert sum(n for _, _, n in reads) > 50
    assert all(len(read) == len(ref) and hamming(read, ref) == n for read, ref, n in reads)


def test_homopolymer_errors_change_run_lengths_by_one():
    reads = community(**{**NO_ERRORS, "homopolymer_rate": 0.2})
    assert sum(n for _, _, n in reads) > 50
    grown = set()
    for read, ref, n in reads:
        got, want = runs(read), runs(ref)
        assert [letter for letter, _ in got] == [letter for letter, _ in want]
        changes = [a - b for (_, a), (_, b) in zip(got, want) if a != b]
        assert [abs(c) for c in changes] == [1] * n
        grown.update(changes)
    assert grown == {-1, 1}


def test_indels_change_length_by_one_each():
    reads = community(**{**NO_ERRORS, "indel_rate": 0.02})
    assert sum(n for _, _, n in reads) > 50
    # Both insertions and deletions happen.
    assert {len(read) > len(ref) for read, ref, n in reads if n == 1} == {False, True}
    for read, ref, n in reads:
        assert abs(len(read) - len(ref)) <= n
        assert (len(read) - len(ref) - n) % 2 == 0


# ---------------------------------------------------------------- CLI and ingest


def test_ingest_of_simulated_samples(tmp_path, default_run, cli):
    _, reads, truth = load(default_run)
    samples = [default_run / f"sample{s}.fastq.gz" for s in (1, 2, 3)]
    args = ["ingest", "-o", tmp_path / "u.fasta", "--abundance", tmp_path / "a.tsv",
            "--report", tmp_path / "r.tsv"]
    assert cli(*args, *[x for path in samples for x in ("-i", path)])[0] == 0
    report = pd.read_csv(tmp_path / "r.tsv", sep="\t").set_index("sample")
    assert list(report.index) == ["sample1", "sample2", "sample3", "all"]
    assert report.loc["all", "records"] == report.loc["all", "kept"] == 900
    assert report.loc["all", "unique"] == len(set(reads.values()))
    abundance = pd.read_csv(tmp_path / "a.tsv", sep="\t", index_col="id")
    for sample, group in truth.groupby("sample"):
        assert abundance[sample].sum() == len(group)


@pytest.mark.parametrize(
    ("option", "value"), [("--reads", 0), ("--length", 5), ("--divergence", 1.5)]
)
def test_bad_option_is_one_clear_line(tmp_path, cli, option, value):
    code, out, err = cli("simulate", "-o", tmp_path / "sim", option, value)
    assert (code, out) == (2, "")
    assert err.startswith(f"seqpairs: error: argument {option}: ") and err.count("\n") == 1
    assert not (tmp_path / "sim").exists()
