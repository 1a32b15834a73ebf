"""Inputs read once as streams (pipes, FIFOs, process substitution, standard input), reads
rejected by length in bounded memory, ids as opaque strings through every stage, and the
edge cases users hit: one unique sequence, a sample that QC empties.

The stream tests run `seqpairs ingest` in a subprocess on a real pipe or FIFO and compare
its outputs with a run on the same plain file; they hold more than a pipe's buffer (64
KiB), so losing one buffer shows.
"""
from __future__ import annotations

import csv
import gzip
import os
import random
import shlex
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pandas as pd
import pytest
from Bio import Phylo

import seqpairs
from seqpairs.backends.common import MAX_LENGTH
from seqpairs.cluster.inputs import read_abundance
from seqpairs.errors import UserError
from seqpairs.formats.distances import read_edges
from seqpairs.formats.fasta import read_unique_fasta
from seqpairs.formats.samples import MAX_HEADER
from seqpairs.reads.ingest import ingest

SRC = Path(seqpairs.__file__).resolve().parents[1]  # the package under test


def seqpairs_run(*args, **options) -> subprocess.CompletedProcess:
    """`python -m seqpairs ARGS` of the package under test, in a subprocess."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "seqpairs", *map(str, args)], env=env,
                          capture_output=True, timeout=600, **options)


def related_reads(n: int, seed: int, length: int = 120, references: int = 3):
    """(id, sequence) of n reads, each one of a few random references with 0 to 2
    substitutions: duplicates and close pairs, as in an amplicon sample."""
    rng = random.Random(seed)
    refs = ["".join(rng.choice("ACGT") for _ in range(length)) for _ in range(references)]
    reads = []
    for k in range(n):
        seq = list(rng.choice(refs))
        for _ in range(rng.randint(0, 2)):
            seq[rng.randrange(length)] = rng.choice("ACGT")
        reads.append((f"r{seed}_{k}", "".join(seq)))
    return reads


def fasta_text(reads) -> str:
    return "".join(f">{rid}\n{seq}\n" for rid, seq in reads)


def fastq_text(reads) -> str:
    return "".join(f"@{rid}\n{seq}\n+\n{'I' * len(seq)}\n" for rid, seq in reads)


def ingest_cli(out: Path, *inputs, options=(), **run_options):
    out.mkdir(parents=True, exist_ok=True)
    args = ["ingest", "-o", out / "unique.fasta", "--abundance", out / "abundance.tsv",
            "--report", out / "report.tsv", *options]
    for spec in inputs:
        args += ["-i", spec]
    return seqpairs_run(*args, **run_options)


def outputs(out: Path):
    """unique.fasta and abundance.tsv bytes, and the report without its `file` column."""
    report = pd.read_csv(out / "report.tsv", sep="\t", dtype=str, keep_default_na=False)
    return ((out / "unique.fasta").read_bytes(), (out / "abundance.tsv").read_bytes(),
            report.drop(columns="file").to_dict("list"))


SAMPLES = {
    "fasta": lambda: fasta_text(related_reads(1500, 1)).encode(),
    # random references: gzip cannot shrink them below a pipe's buffer
    "fastq.gz": lambda: gzip.compress(fastq_text(related_reads(2500, 2, references=2500)).encode(),
                                      mtime=0),
}


@pytest.fixture(params=list(SAMPLES))
def sample(request, tmp_path):
    """(path of a plain sample file, its bytes, the outputs of ingesting it as a file)."""
    data = SAMPLES[request.param]()
    assert len(data) > 1 << 16
    path = tmp_path / f"reads.{request.param}"
    path.write_bytes(data)
    proc = ingest_cli(tmp_path / "file", f"s={path}")
    assert proc.returncode == 0, proc.stderr
    return path, data, outputs(tmp_path / "file")


# ---------------------------------------------------------------- inputs read once


@pytest.mark.parametrize("spec", ["s=-", "s=/dev/stdin"])
def test_standard_input(sample, tmp_path, spec):
    path, data, expected = sample
    proc = ingest_cli(tmp_path / "stdin", spec, input=data)
    assert proc.returncode == 0, proc.stderr
    assert outputs(tmp_path / "stdin") == expected


def test_process_substitution(sample, tmp_path):
    path, _, expected = sample
    out = tmp_path / "subst"
    out.mkdir()
    command = (f"{shlex.quote(sys.executable)} -m seqpairs ingest -i s=<(cat {shlex.quote(str(path))})"
               f" -o {out}/unique.fasta --abundance {out}/abundance.tsv --report {out}/report.tsv")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(["bash", "-c", command], env=env, capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert outputs(out) == expected


def test_fifo_fed_in_small_pieces(sample, tmp_path):
    # The first byte alone, then odd-sized pieces: the gzip magic and the first record
    # arrive split over reads.
    _, data, expected = sample
    fifo = tmp_path / "reads.fifo"
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "wb", buffering=0) as pipe:  # waits for the reader
                pipe.write(data[:1])
                time.sleep(0.2)
                for start in range(1, len(data), 997):
                    pipe.write(data[start:start + 997])
        except BrokenPipeError:  # the reader stopped; its exit status tells
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    proc = ingest_cli(tmp_path / "fifo", f"s={fifo}")
    if writer.is_alive():  # the reader never opened the FIFO: let the writer go
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    writer.join(60)
    assert proc.returncode == 0, proc.stderr
    assert outputs(tmp_path / "fifo") == expected


def test_one_stream_is_one_input(tmp_path):
    data = fasta_text(related_reads(20, 3)).encode()
    cases = {
        ("-",): "-i -: name the sample read from standard input: -i NAME=-",
        ("a=-", "b=-"): "-i NAME=- more than once: standard input is read once, for one sample",
        ("a=-", "b=/dev/stdin"): "/dev/stdin: the same stream as -, which is read once (a pipe, "
                                 "FIFO or standard input can be an input only once)",
    }
    for inputs, message in cases.items():
        proc = ingest_cli(tmp_path / "out", *inputs, input=data)
        assert (proc.returncode, proc.stderr.decode()) == (2, f"seqpairs: error: {message}\n")
        assert not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("fmt", ["fasta", "fastq"])
@pytest.mark.parametrize("blanks", ["\n\n", "   ", " \t\n \n ", "\r\n\r\n  "])
def test_blanks_before_the_first_record(tmp_path, fmt, blanks):
    reads = related_reads(30, 4)
    text = fasta_text(reads) if fmt == "fasta" else fastq_text(reads)
    plain, padded = tmp_path / f"plain.{fmt}", tmp_path / f"padded.{fmt}"
    plain.write_text(text)
    padded.write_bytes((blanks + text).encode())
    a, b = ingest([("s", str(plain))]), ingest([("s", str(padded))])
    assert b.report.iloc[-1]["records"] == len(reads)  # the first record is not lost
    assert (a.ids, a.seqs) == (b.ids, b.seqs)
    pd.testing.assert_frame_equal(a.report.drop(columns="file"), b.report.drop(columns="file"))


# ---------------------------------------------------------------- length, bounded memory


def test_reads_longer_than_the_limit_are_dropped_and_counted(tmp_path):
    rng = random.Random(5)
    longest = "".join(rng.choice("ACGT") for _ in range(MAX_LENGTH))
    path = tmp_path / "long.fasta"
    # over the kernels' limit; at it; over it only before its gaps are removed
    path.write_text(f">over\n{longest}A\n>at\n{longest}\n>gapped\n{longest[:-1]}--\n")
    result = ingest([("s", str(path))])
    report = result.report.set_index("sample").loc["all"]
    assert (report["records"], report["kept"], report["dropped_too_long"]) == (3, 2, 1)
    assert result.ids == ["at", "gapped"] and result.seqs == [longest, longest[:-1]]

    with pytest.raises(UserError, match="no sequences left: all 3 records were dropped .*too "
                       "long 3"):
        ingest([("s", str(path))], max_length=100)
    # --truncate keeps the first letters of every read, also of the over-long one
    cut = ingest([("s", str(path))], truncate=50)
    assert cut.seqs == [longest[:50]] and cut.abundance["total"].tolist() == [3]


@pytest.mark.parametrize(("option", "value"), [("max_length", MAX_LENGTH + 1),
                                               ("truncate", MAX_LENGTH + 1)])
def test_length_options_above_the_kernels_limit(tmp_path, option, value):
    path = tmp_path / "a.fasta"
    path.write_text(">r1\nACGT\n")
    flag = "--" + option.replace("_", "-")
    with pytest.raises(UserError) as exc:
        ingest([("s", str(path))], **{option: value})
    assert str(exc.value) == (f"{flag}: {value} is above the kernels' limit of {MAX_LENGTH} "
                              "letters")


def write_huge_line_gzip(path: Path, letters: int, fastq: bool = False) -> None:
    """A gzip file of one record between two short ones whose sequence line has `letters`
    letters, compressed as a stream (the test never holds the line)."""
    block = b"ACGT" * (1 << 18)  # 1 MiB
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    with open(path, "wb") as out:
        out.write(packer.compress(b"@r0\nACGT\n+\nIIII\n@huge\n" if fastq else
                                  b">r0\nACGTACGT\n>huge\n"))
        for _ in range(letters // len(block)):
            out.write(packer.compress(block))
        if fastq:
            out.write(packer.compress(b"\n+\n"))
            for _ in range(letters // len(block)):
                out.write(packer.compress(b"I" * len(block)))
        out.write(packer.compress(b"\n@r2\nACGTTT\n+\nIIIIII\n" if fastq else
                                  b"\n>r2\nACGTTT\n"))
        out.write(packer.flush())


PEAK = """
import resource, sys
from seqpairs.reads.ingest import ingest
row = ingest([("s", sys.argv[1])]).report.iloc[-1]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, row["records"], row["kept"],
      row["dropped_too_long"])
"""


def peak_memory(path: Path) -> tuple[int, ...]:
    """(peak resident KiB, records, kept, dropped_too_long) of ingesting `path` in a fresh
    process."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-c", PEAK, str(path)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return tuple(int(x) for x in proc.stdout.split())


@pytest.mark.parametrize("fastq", [False, True], ids=["fasta", "fastq"])
def test_a_huge_line_costs_bounded_memory(tmp_path, fastq):
    # 256 MiB of letters on one line: a reader holding the line needs several times that
    huge, small = tmp_path / "huge.gz", tmp_path / "small.gz"
    write_huge_line_gzip(huge, 256 << 20, fastq)
    write_huge_line_gzip(small, 1 << 20, fastq)
    peak_huge, *counts_huge = peak_memory(huge)
    peak_small, *counts_small = peak_memory(small)
    assert counts_huge == counts_small == [3, 2, 1]
    assert peak_huge - peak_small < 32 << 10, (peak_huge, peak_small)  # KiB


def test_a_header_longer_than_the_limit_is_an_error(tmp_path):
    path = tmp_path / "h.fasta"
    path.write_text(">r1\nACGT\n>" + "x" * MAX_HEADER + "\nACGT\n")
    with pytest.raises(UserError) as exc:
        ingest([("s", str(path))])
    assert str(exc.value) == f"{path}:record 2: header line longer than {MAX_HEADER:,} characters"


def test_fastq_quality_of_an_overlong_read_is_checked(tmp_path):
    seq = "A" * (MAX_LENGTH + 5)
    good, bad = tmp_path / "good.fq", tmp_path / "bad.fq"
    good.write_text(f"@r1\n{seq}\n+\n{'I' * len(seq)}\n@r2\nACGT\n+\nIIII\n")
    bad.write_text(f"@r1\n{seq}\n+\n{'I' * (len(seq) + 1)}\n@r2\nACGT\n+\nIIII\n")
    assert ingest([("s", str(good))]).report.iloc[-1]["dropped_too_long"] == 1
    with pytest.raises(UserError) as exc:
        ingest([("s", str(bad))])
    assert str(exc.value) == (f"{bad}:record 1: Lengths of sequence and quality values differs "
                              f"for r1 ({len(seq)} and {len(seq) + 1}).")


# ---------------------------------------------------------------- ids as opaque strings


@pytest.mark.parametrize(("header", "expected"), [
    ("r1;size=3", ("r1", 3)),
    ("r1;size=3;tax=x", ("r1;tax=x", 3)),
    ("r1;size=3; a description", ("r1", 3)),  # the id is the first word
    ("r1;size=007", ("r1", 7)),
    ("size=5", ("size=5", 1)),  # the first field is the name, never an annotation
    ("r1;SIZE=5", ("r1;SIZE=5", 1)),
    ("r1;sizes=5", ("r1;sizes=5", 1)),
    (f"r1;size={2**63 - 1}", ("r1", 2**63 - 1)),
    ("r1;size=3;size=4", "2 ;size= fields in the id; an id has at most one abundance"),
    ("r1;size=2;tax=x;size=2", "2 ;size= fields in the id; an id has at most one abundance"),
    ("r1;size=", ";size= is not a whole number"),
    ("r1;size=3x", ";size=3x is not a whole number"),
    ("r1;size=-3", ";size=-3 is not a whole number"),
    (f"r1;size={2**63}", f";size={2**63} is more than 2^63 - 1"),
    ("r1;size=" + "9" * 5000, ";size=999999999999999999999999999999... is more than 2^63 - 1"),
])
def test_the_size_annotation_rule(tmp_path, header, expected):
    path = tmp_path / "a.fasta"
    path.write_text(f">{header}\nACGT\n")
    if isinstance(expected, str):
        with pytest.raises(UserError) as exc:
            ingest([("s", str(path))])
        assert str(exc.value) == f"{path}:{header.split()[0]}: {expected}"
        return
    result = ingest([("s", str(path))])
    assert (result.ids, result.abundance["total"].tolist()) == ([expected[0]], [expected[1]])
    # ingest's unique.fasta reads back as the same id and abundance: no id is rewritten
    out = tmp_path / "unique.fasta"
    out.write_text(f">{result.ids[0]};size={expected[1]}\nACGT\n")
    back = read_unique_fasta(str(out))
    assert (back.ids, back.sizes.tolist()) == ([expected[0]], [expected[1]])


def test_abundances_beyond_int64(tmp_path, cli):
    path = tmp_path / "a.fasta"
    path.write_text(f">r1;size={2**62}\nACGT\n>r2;size={2**62 - 1}\nACGA\n")
    result = ingest([("s", str(path))])  # 2^63 - 1 in all: fits
    assert result.report.iloc[-1]["abundance"] == 2**63 - 1
    out = tmp_path / "out"
    assert cli("ingest", "-i", path, "-o", out / "u.fasta", "--abundance", out / "a.tsv",
               "--report", out / "r.tsv")[0] == 0
    assert read_abundance(str(out / "a.tsv"))["total"].tolist() == [2**62, 2**62 - 1]

    path.write_text(f">r1;size={2**62}\nACGT\n>r2;size={2**62}\nACGT\n")
    with pytest.raises(UserError) as exc:
        ingest([("s", str(path))])
    assert str(exc.value) == (f"{path}:r2: the ;size= abundances of the inputs add up to more "
                              "than 2^63 - 1")

    table = tmp_path / "big.tsv"
    table.write_text(f"id\ta\tb\ttotal\nr1\t{2**62}\t{2**62}\t{2**63}\n")
    with pytest.raises(UserError, match=r"big.tsv:2: counts add up to more than 2\^63 - 1"):
        read_abundance(str(table))
    table.write_text(f"id\ta\ttotal\nr1\t{2**62}\t{2**62}\nr2\t{2**62}\t{2**62}\n")
    with pytest.raises(UserError, match=r"big.tsv: counts add up to more than 2\^63 - 1"):
        read_abundance(str(table))


# Ids that pandas reads as missing values, numbers or booleans unless told not to, and
# ids with characters that TSV quoting or Newick reserve.
ODD_IDS = ["NA", "nan", "None", "null", "NULL", "007", "1e5", "True", "-1", "#x", 'q"1',
           "a;tax=x:y", "it's", "(b)"]


def read_tsv_plainly(path) -> list[dict[str, str]]:
    """A TSV as the csv module reads it (pandas' quoting, no value parsing)."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_odd_ids_pass_every_stage(tmp_path, cli):
    seqs = list(dict.fromkeys(seq for _, seq in related_reads(100, 6, length=80, references=2)))
    assert len(seqs) >= len(ODD_IDS)
    rng = random.Random(7)
    samples = {}
    for name in ("s1", "s2"):
        path = tmp_path / f"{name}.fasta"
        # each odd id names one sequence in s1; s2 holds the same sequences (other ids)
        path.write_text("".join(f">{rid if name == 's1' else rid + 'x'};size={rng.randint(1, 5)}\n"
                                f"{seq}\n" for rid, seq in zip(ODD_IDS, seqs)))
        samples[name] = path
    d = tmp_path
    steps = [
        ["ingest", "-i", samples["s1"], "-i", samples["s2"], "-o", d / "u.fasta",
         "--abundance", d / "a.tsv", "--report", d / "r.tsv"],
        ["binning", "-i", d / "u.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv"],
        ["distance", "-i", d / "u.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv",
         "--backend", "cpu", "--edges", d / "e.npz", "--seqdist", d / "d.txt", "--ids"],
        ["filter", "-i", d / "u.fasta", "--distances", d / "e.npz", "--identity", "0.9",
         "-o", d / "kept.tsv"],
        ["psse", "-i", d / "u.fasta", "--pairs", d / "kept.tsv", "-o", d / "psse.tsv",
         "--shuffles", "10", "--backend", "cpu"],
        ["cluster", "-i", d / "d.txt", "--linkage", "average", "--cutoff", "0.05",
         "--fasta", d / "u.fasta", "--abundance", d / "a.tsv", "-o", d / "h"],
        ["cluster", "--linkage", "greedy", "--identity", "0.9", "--pairs", d / "kept.tsv",
         "--psse", d / "psse.tsv", "--fasta", d / "u.fasta", "--abundance", d / "a.tsv",
         "-o", d / "g"],
        ["report", "--dataset", "odd", "--ingest-report", d / "r.tsv", "--unique", d / "u.fasta",
         "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv", "--edges", d / "e.npz",
         "--kept", d / "kept.tsv", "--psse", d / "psse.tsv", "--membership",
         d / "g.membership.tsv", "--otu-table", d / "g.otu_table.tsv", "--distance-log",
         d / "distance.log", "-o", d / "report"],
    ]
    for step in steps:
        code, _, err = cli(*step)
        assert code == 0, (step[0], err)
        if step[0] == "distance":  # its log, as the workflow keeps it, for the report
            (d / "distance.log").write_text(err)

    ids = read_unique_fasta(str(d / "u.fasta")).ids
    assert sorted(ids) == sorted(ODD_IDS)  # the first sample names every sequence
    assert [row["id"] for row in read_tsv_plainly(d / "a.tsv")] == ids
    kept = read_tsv_plainly(d / "kept.tsv")
    assert kept and {r["query"] for r in kept} | {r["target"] for r in kept} <= set(ids)
    assert [(r["query"], r["target"]) for r in read_tsv_plainly(d / "psse.tsv")] == [
        (r["query"], r["target"]) for r in kept]
    for prefix in ("h", "g"):
        assert [r["id"] for r in read_tsv_plainly(d / f"{prefix}.membership.tsv")] == ids
        centroids = {r["centroid"] for r in read_tsv_plainly(d / f"{prefix}.otu_table.tsv")}
        assert centroids <= set(ids)
    leaves = [leaf.name for leaf in Phylo.read(d / "h.tree", "newick").get_terminals()]
    assert sorted(leaves) == sorted(ids)
    summary = dict((r["item"], r["value"]) for r in read_tsv_plainly(d / "report" / "summary.tsv"))
    assert summary["unique sequences"] == str(len(ids)) and summary["kept"] == str(len(kept))


def test_list_refuses_ids_it_cannot_separate(tmp_path, cli):
    path = tmp_path / "u.fasta"
    path.write_text(">a,b\nACGTACGT\n>c\nACGTACGA\n")
    d = tmp_path
    assert cli("distance", "-i", path, "--backend", "cpu", "--edges", d / "e.npz")[0] == 0
    code, _, err = cli("cluster", "-i", d / "e.npz", "--linkage", "complete", "-o", d / "c")
    assert (code, err) == (2, f"seqpairs: error: {d / 'e.npz'}:a,b: FCluster's .list cannot "
                              "hold this id (its members are joined by ',' and its clusters by "
                              "spaces); rename the sequence or cluster with --linkage greedy\n")
    assert not list(d.glob("c.*"))


# ---------------------------------------------------------------- edge cases


@pytest.mark.filterwarnings("error::UserWarning")  # the report's figures of no pairs too
def test_one_unique_sequence_goes_through_every_stage(tmp_path, cli):
    d = tmp_path
    (d / "a.fasta").write_text(">r1\nACGTACGTAC\n>r2\nACGTACGTAC\n")
    (d / "b.fastq").write_text("@q1\nacgtacgtac\n+\nIIIIIIIIII\n")
    steps = [
        ["ingest", "-i", d / "a.fasta", "-i", d / "b.fastq", "-o", d / "u.fasta",
         "--abundance", d / "a.tsv", "--report", d / "r.tsv"],
        ["binning", "-i", d / "u.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv"],
        ["distance", "-i", d / "u.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv",
         "--backend", "cpu", "--max-distance", "0.1", "--candidate-identity", "0.97",
         "--edges", d / "e.npz", "--mothur", d / "m.dist", "--phylip", d / "p.phylip"],
        ["filter", "-i", d / "u.fasta", "--distances", d / "e.npz", "--identity", "0.97",
         "-o", d / "kept.tsv"],
        ["filter", "-i", d / "u.fasta", "--identity", "0.97", "--backend", "cpu",
         "-o", d / "kept_alone.tsv"],
        ["filter", "-i", d / "u.fasta", "--identity", "0.97", "--scoring", "vsearch",
         "-o", d / "kept_vsearch.tsv"],
        ["psse", "-i", d / "u.fasta", "--pairs", d / "kept.tsv", "-o", d / "psse.tsv",
         "--shuffles", "10", "--backend", "cpu", "--plots", d / "plots"],
        ["cluster", "-i", d / "e.npz", "--linkage", "complete", "--fasta", d / "u.fasta", "--abundance", d / "a.tsv",
         "-o", d / "c"],
        ["cluster", "--linkage", "greedy", "--pairs", d / "kept.tsv", "--psse", d / "psse.tsv",
         "--fasta", d / "u.fasta", "--abundance", d / "a.tsv", "-o", d / "g"],
        ["report", "--dataset", "one", "--ingest-report", d / "r.tsv", "--unique", d / "u.fasta",
         "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv", "--edges", d / "e.npz",
         "--kept", d / "kept.tsv", "--psse", d / "psse.tsv", "--membership",
         d / "c.membership.tsv", "--otu-table", d / "c.otu_table.tsv", "--distance-log",
         d / "distance.log", "-o", d / "report"],
    ]
    for step in steps:
        code, _, err = cli(*step)
        assert code == 0, (step[0], err)
        if step[0] == "distance":  # its log, as the workflow keeps it, for the report
            (d / "distance.log").write_text(err)
    assert (d / "u.fasta").read_text() == ">r1;size=3\nACGTACGTAC\n"
    assert len(read_edges(d / "e.npz")) == 0 and (d / "m.dist").read_text() == ""
    assert (d / "p.phylip").read_text() == "1\nr1\n"
    for name in ("kept.tsv", "kept_alone.tsv", "kept_vsearch.tsv", "psse.tsv"):
        assert len(read_tsv_plainly(d / name)) == 0
    for prefix in ("c", "g"):
        assert read_tsv_plainly(d / f"{prefix}.membership.tsv") == [
            {"id": "r1", "cluster": "1", "otu": "r1", "centroid": "r1"}]
        assert read_tsv_plainly(d / f"{prefix}.otu_table.tsv") == [
            {"cluster": "1", "otu": "r1", "centroid": "r1", "a": "2", "b": "1", "total": "3"}]
    # FCluster lists thresholds below its last merge: with none, no line
    assert (d / "c.list").read_text() == (d / "c.otu").read_text() == ""
    summary = dict((r["item"], r["value"]) for r in read_tsv_plainly(d / "report" / "summary.tsv"))
    assert (summary["unique sequences"], summary["pairs computed"], summary["clusters"]) == (
        "1", "0", "1")


def test_a_sample_emptied_by_qc_is_reported(tmp_path, cli):
    d = tmp_path
    (d / "long.fasta").write_text(fasta_text(related_reads(12, 8, length=60)))
    (d / "short.fasta").write_text(">t1\nACGT\n>t2\nACGTN\n")
    code, _, err = cli("ingest", "-i", d / "long.fasta", "-i", d / "short.fasta",
                       "-o", d / "u.fasta", "--abundance", d / "a.tsv", "--report", d / "r.tsv",
                       "--min-length", "10")
    assert code == 0, err
    rows = {r["sample"]: r for r in read_tsv_plainly(d / "r.tsv")}
    assert (rows["short"]["records"], rows["short"]["kept"], rows["short"]["dropped_too_short"],
            rows["short"]["dropped_ambiguous"]) == ("2", "0", "1", "1")
    table = pd.read_csv(d / "a.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert set(table["short"]) == {"0"}
    assert cli("cluster", "--linkage", "greedy", "--pairs", write_no_pairs(d), "--fasta",
               d / "u.fasta", "--abundance", d / "a.tsv", "-o", d / "g")[0] == 0
    assert {r["short"] for r in read_tsv_plainly(d / "g.otu_table.tsv")} == {"0"}


def write_no_pairs(folder: Path) -> Path:
    path = folder / "none.tsv"
    path.write_text("query\ttarget\tid\n")
    return path


# ---------------------------------------------------------------- the workflow


EDGE_CASES = {
    "defaults": {"distance": {"backend": "cpu", "threads": 2},
                 "psse": {"backend": "cpu", "threads": 2, "shuffles": 10}},
    "datasets": {
        # every read the same sequence: no pair anywhere
        "one": {"samples": {"a": "data/one_a.fasta", "b": "data/one_b.fasta"},
                "psse": {"enabled": True}, "cluster": {"linkage": "greedy"}},
        "one.complete": {"samples": {"a": "data/one_a.fasta"},
                         "cluster": {"linkage": "complete", "distance": "seqdist"}},
        # sample `short` loses every read to ingest.min_length
        "qc": {"samples": {"long": "data/long.fasta", "short": "data/short.fasta"},
               "ingest": {"min_length": 50}, "cluster": {"linkage": "complete", "distance": "seqdist"}},
    },
}


def test_workflow_runs_the_edge_cases(tmp_path):
    from test_workflow import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "wf", EDGE_CASES)
    data = workdir / "data"
    data.mkdir()
    (data / "one_a.fasta").write_text(">r1\nACGTACGTACGT\n>r2\nACGTACGTACGT\n")
    (data / "one_b.fasta").write_text(">q1\nACGTACGTACGT\n")
    (data / "long.fasta").write_text(fasta_text(related_reads(15, 9, length=80)))
    (data / "short.fasta").write_text(">t1\nACGTACGT\n>t2\nACGT\n")
    snakemake(workdir, "--cores", "2")

    results = workdir / "results"
    for dataset in ("one", "one.complete"):
        assert read_unique_fasta(str(results / "ingest" / dataset / "unique.fasta")).n == 1
        membership = read_tsv_plainly(results / "cluster" / dataset / "otus.membership.tsv")
        assert membership == [{"id": "r1", "cluster": "1", "otu": "r1", "centroid": "r1"}]
    assert read_tsv_plainly(results / "psse" / "one" / "psse.tsv") == []
    rows = {r["sample"]: r for r in read_tsv_plainly(results / "ingest" / "qc" / "report.tsv")}
    assert (rows["short"]["records"], rows["short"]["kept"]) == ("2", "0")
    assert int(rows["long"]["kept"]) == 15
    table = read_tsv_plainly(results / "cluster" / "qc" / "otus.otu_table.tsv")
    assert {r["short"] for r in table} == {"0"} and sum(int(r["long"]) for r in table) == 15
    summary = {r["item"]: r["value"]
               for r in read_tsv_plainly(results / "report" / "one" / "summary.tsv")}
    assert (summary["records"], summary["unique sequences"], summary["clusters"]) == (
        "3", "1", "1")
