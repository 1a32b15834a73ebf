"""Adversarial attempts on every stage, each with the one outcome it must have (issue 13).

Every attempt makes its own inputs and is classified as one of:

- clean error: exit status 2, exactly one stderr line `seqpairs: error: ...`, no
  traceback, and the folder exactly as before the failing command (no output, nothing
  replaced, no temporary file). A command stopped by a signal is held to the same, with
  its own line and exit status.
- normalised and counted: exit 0, and the ingest report accounts for what was changed or
  dropped (records = kept + dropped).
- accepted: exit 0, and the outputs equal an expectation made independently of the code
  (the same data given another way, a count, the input ids).

An attempt may take several commands (a pipeline); its outcome is the first one's that
fails, or the last one's. Commands run in-process (tests/conftest.py's `cli`) unless they
need a real process: pipes, standard input, the environment, signals.
"""
from __future__ import annotations

import gzip
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from test_outputs import ENV, null_device, signal_while_writing, slow_writer

ERROR, COUNTED, ACCEPTED = "clean error", "normalised and counted", "accepted"


@dataclass(frozen=True)
class Attempt:
    name: str
    outcome: str
    # writes the attempt's inputs into the folder; returns its commands (`seqpairs` argv)
    prepare: Callable[[Path], list[list[str]]]
    # accepted / normalised and counted: asserts on the outputs in the folder
    check: Callable[[Path], None] | None = None
    words: str = ""  # clean error: the line holds this
    process: Process | None = None  # run as a real process


@dataclass(frozen=True)
class Process:
    env: dict = field(default_factory=dict)
    feed: str | None = None  # "stdin", "pipe" ({pipe} in argv) or "fifo" ({fifo}): feed.bin
    signum: int | None = None  # sent once a temporary file appears in out/
    code: int = 2  # clean error: exit status and line of a stopped command
    line: str = "seqpairs: error:"


# --- inputs ---------------------------------------------------------------------------

RNG_SEED = 20240613


def community(n_reads: int = 1000, length: int = 60, seed: int = RNG_SEED) -> list[str]:
    """Reads of 12 references with one substitution in a fifth of them: many duplicates."""
    rng = np.random.default_rng(seed)
    refs = rng.choice(list("ACGT"), (12, length))
    reads = []
    for k in range(n_reads):
        read = refs[rng.integers(12)].copy()
        if rng.random() < 0.2:
            read[rng.integers(length)] = rng.choice(list("ACGT"))
        reads.append("".join(read))
    return reads


def fasta_text(seqs: list[str], ids: list[str] | None = None, eol: str = "\n") -> str:
    ids = ids or [f"r{k}" for k in range(len(seqs))]
    return "".join(f">{name}{eol}{seq}{eol}" for name, seq in zip(ids, seqs))


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def ingest(inputs: list[str], out: str = "out", *options: str) -> list[str]:
    args = ["ingest", "-o", f"{out}/u.fasta", "--abundance", f"{out}/a.tsv",
            "--report", f"{out}/r.tsv", *options]
    for spec in inputs:
        args += ["-i", spec]
    return args


def uniques(folder: Path, n: int = 12, seed: int = 3) -> Path:
    """n related unique sequences of 50-60 bp, `>sK;size=N`, decreasing abundance."""
    rng = np.random.default_rng(seed)
    base = rng.choice(list("ACGT"), 60)
    records = []
    for k in range(n):
        s = base.copy()
        s[rng.integers(0, 60, 3)] = rng.choice(list("ACGT"))
        records.append(f">s{k};size={n - k}\n{''.join(s[:60 - k % 11])}\n")
    return write(folder / "u.fasta", "".join(records))


def tiles_of(folder: Path) -> list[str]:
    return ["binning", "-i", str(uniques(folder)), "--bins", "bins.tsv", "--tiles", "tiles.tsv",
            "--bin-width", "2", "--tile-pairs", "4"]


def distance_of(*options: str, edges: str = "out/e.npz") -> list[str]:
    return ["distance", "-i", "u.fasta", "--backend", "cpu", "--max-distance", "1",
            *options, "--edges", edges]


def edit_table(path: Path, change: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    table = change(pd.read_csv(path, sep="\t"))
    table.to_csv(path, sep="\t", index=False)


# --- checks ---------------------------------------------------------------------------


def report(folder: Path) -> pd.Series:
    return pd.read_csv(folder / "out" / "r.tsv", sep="\t").set_index("sample").loc["all"]


def same_ingest(folder: Path) -> None:
    """unique.fasta and abundance.tsv equal those of ingest of the same reads from a
    regular file (ref/), and the report but for its file column."""
    for name in ("u.fasta", "a.tsv"):
        assert (folder / "out" / name).read_bytes() == (folder / "ref" / name).read_bytes()
    ours, theirs = (pd.read_csv(folder / d / "r.tsv", sep="\t").drop(columns="file")
                    for d in ("out", "ref"))
    pd.testing.assert_frame_equal(ours, theirs)


def fasta_ids(path: Path) -> list[str]:
    return [line[1:] for line in path.read_text().splitlines() if line.startswith(">")]


def counted(**expected: int):
    def check(folder: Path) -> None:
        row = report(folder)
        assert {key: int(row[key]) for key in expected} == expected
        dropped = row[[c for c in row.index if c.startswith("dropped_")]].sum()
        assert row["records"] == row["kept"] + dropped

    return check


def same_file(name: str):
    def check(folder: Path) -> None:
        assert (folder / "out" / name).read_bytes() == (folder / "ref" / name).read_bytes()

    return check


def unique_ids_are(*ids: str):
    def check(folder: Path) -> None:
        assert fasta_ids(folder / "out" / "u.fasta") == list(ids)

    return check


def membership_ids_are(ids: list[str]):
    def check(folder: Path) -> None:
        table = pd.read_csv(folder / "out" / "otus.membership.tsv", sep="\t", dtype=str,
                            keep_default_na=False)
        assert sorted(table["id"]) == sorted(ids)

    return check


def one_otu(folder: Path) -> None:
    assert pd.read_csv(folder / "out" / "otus.membership.tsv", sep="\t")["cluster"].nunique() \
        == 1


def every_pair_kept(n: int):
    def check(folder: Path) -> None:
        with np.load(folder / "out" / "e.npz") as z:
            assert len(z["i"]) == n * (n - 1) // 2

    return check


def same_as_reference_and_no_temporary(folder: Path) -> None:
    assert sorted(p.name for p in (folder / "out").iterdir()) == \
        sorted(p.name for p in (folder / "ref").iterdir())
    for path in (folder / "ref").iterdir():
        assert (folder / "out" / path.name).read_bytes() == path.read_bytes(), path.name


# --- the attempts' inputs and commands ------------------------------------------------


def reads_and_reference(folder: Path, given: bytes | None = None) -> list[str]:
    """feed.bin (the reads as given: FASTA, or `given`) and the command of the reference
    run, ingest of the FASTA from a regular file into ref/."""
    text = fasta_text(community()).encode()
    write(folder / "feed.bin", text if given is None else given)
    write(folder / "reads.fasta", text)
    return ingest(["s=reads.fasta"], "ref")


def gzipped(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def from_stream(spec: str, given: Callable[[], bytes] | None = None):
    def prepare(folder: Path) -> list[list[str]]:
        return [reads_and_reference(folder, given and given()), ingest([spec])]

    return prepare


def sample_as(name: str, data: Callable[[], str | bytes], *options: str, reference=True):
    """Ingest of one sample file, `data`; with the reference run of the community."""
    def prepare(folder: Path) -> list[list[str]]:
        steps = [reads_and_reference(folder)] if reference else []
        return [*steps, ingest([f"s={write(folder / name, data())}"], "out", *options)]

    return prepare


def related(n: int, seed: int) -> list[str]:
    """n distinct sequences of 60 bp, 3 substitutions from one base each."""
    rng = np.random.default_rng(seed)
    base = rng.choice(list("ACGT"), 60)
    seqs: set[str] = set()
    while len(seqs) < n:
        s = base.copy()
        s[rng.integers(0, 60, 3)] = rng.choice(list("ACGT"))
        seqs.add("".join(s))
    return sorted(seqs)


def pipeline(ids: list[str], linkage: str = "greedy"):
    """ingest (reads named `ids`), distance, filter, cluster."""
    def prepare(folder: Path) -> list[list[str]]:
        write(folder / "reads.fasta", fasta_text(related(len(ids), seed=7), ids))
        cluster = (["cluster", "--linkage", "greedy", "--pairs", "out/k.tsv", "--identity",
                    "0.9"] if linkage == "greedy" else
                   ["cluster", "-i", "out/e.npz", "--linkage", linkage, "--cutoff", "1"])
        return [ingest(["s=reads.fasta"]),
                ["distance", "-i", "out/u.fasta", "--backend", "cpu", "--max-distance", "20",
                 "--candidate-identity", "0.9", "--edges", "out/e.npz"],
                ["filter", "-i", "out/u.fasta", "--distances", "out/e.npz", "--identity",
                 "0.9", "-o", "out/k.tsv"],
                [*cluster, "--fasta", "out/u.fasta", "-o", "out/otus"]]

    return prepare


def on_uniques(*steps: list[str] | tuple):
    """`steps` after writing u.fasta."""
    def prepare(folder: Path) -> list[list[str]]:
        uniques(folder)
        return [list(step) for step in steps]

    return prepare


def binned(*steps: list[str] | tuple):
    """`steps` after binning u.fasta into bins.tsv, tiles.tsv (small bins and tiles)."""
    def prepare(folder: Path) -> list[list[str]]:
        return [tiles_of(folder), *[list(step) for step in steps]]

    return prepare


def tile_twice(tiles: pd.DataFrame) -> pd.DataFrame:
    """The first tile twice, the pair counts still summing to N(N-1)/2."""
    tiles = pd.concat([tiles, tiles.iloc[[0]]], ignore_index=True)
    tiles.loc[1, "pairs"] -= tiles.loc[0, "pairs"]
    return tiles


def negative_count(tiles: pd.DataFrame) -> pd.DataFrame:
    """The first tile's pair count negated, the sum kept by the second's."""
    tiles.loc[1, "pairs"] += 2 * tiles.loc[0, "pairs"]
    tiles.loc[0, "pairs"] *= -1
    return tiles


def with_threads(command: str, threads: str):
    """`command` with --threads into out/; the reference with one thread into ref/."""
    argv = {"distance": distance_of(edges="{out}/e.npz"),
            "filter": ["filter", "-i", "u.fasta", "--identity", "0.9", "--backend", "cpu",
                       "-o", "{out}/k.tsv"],
            "psse": ["psse", "-i", "u.fasta", "--pairs", "pairs.tsv", "--shuffles", "20",
                     "--backend", "cpu", "-o", "{out}/p.tsv"]}[command]

    def prepare(folder: Path) -> list[list[str]]:
        uniques(folder)
        write(folder / "pairs.tsv", "query\ttarget\ns1\ts0\ns5\ts2\n")
        return [[a.format(out="ref") for a in argv] + ["--threads", "1"],
                [a.format(out="out") for a in argv] + ["--threads", threads]]

    return prepare


OUTPUT_OF = {"distance": "e.npz", "filter": "k.tsv", "psse": "p.tsv"}


def device(folder: Path) -> Path:
    """A character device like /dev/null, made here (never the machine's)."""
    (folder / "out").mkdir(parents=True, exist_ok=True)
    return null_device(folder / "out" / "null")


def a_folder(folder: Path) -> Path:
    return write(folder / "out" / "e.npz" / "x", "").parent


def a_fifo(folder: Path) -> Path:
    path = write(folder / "out" / "x", "").parent / "e.npz"
    os.mkfifo(path)
    return path


def a_link(folder: Path) -> Path:
    path = write(folder / "out" / "x", "").parent / "e.npz"
    path.symlink_to(write(folder / "precious", "kept as it is"))
    return path


def under_a_file(folder: Path) -> Path:
    return write(folder / "file", "x") / "e.npz"


def edges_onto(make: Callable[[Path], Path]):
    def prepare(folder: Path) -> list[list[str]]:
        uniques(folder)
        return [distance_of(edges=str(make(folder)))]

    return prepare


def while_writing(folder: Path) -> list[list[str]]:
    return [slow_writer(folder, folder / "out" / "otus")[3:]]  # after `python -m seqpairs`


def killed_then_rerun(folder: Path) -> list[list[str]]:
    """A run killed (SIGKILL) while it writes, its reference run; the same command again."""
    command = slow_writer(folder, folder / "out" / "otus")
    code, _, _ = signal_while_writing(command, folder / "out", signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert any(p.name.endswith(".tmp") for p in (folder / "out").iterdir())
    subprocess.run([*command[:-1], str(folder / "ref" / "otus")], env=ENV, check=True)
    return [command[3:]]


def identical_reads(folder: Path) -> list[list[str]]:
    """The pipeline on five reads of one sequence."""
    steps = pipeline(["a"])(folder)
    write(folder / "reads.fasta", fasta_text(["ACGTACGTAC"] * 5))
    return steps


def a_folder_of_files(folder: Path) -> list[list[str]]:
    write(folder / "dir" / "x", ">a\nACGT\n")
    return [["binning", "-i", "dir", "--bins", "out/b.tsv", "--tiles", "out/t.tsv"]]


# Every file a later stage reads, given as a folder, with every other input made by the
# stages before it (pipeline, binning, psse): (name, command).
FOLDER_INPUTS = {
    "binning -i": ["binning", "-i", "dir", "--bins", "out/b2.tsv", "--tiles", "out/t2.tsv"],
    "distance -i": ["distance", "-i", "dir", "--edges", "out/e2.npz"],
    "distance --bins": ["distance", "-i", "out/u.fasta", "--bins", "dir", "--tiles",
                        "out/t.tsv", "--edges", "out/e2.npz"],
    "distance --tiles": ["distance", "-i", "out/u.fasta", "--bins", "out/b.tsv", "--tiles",
                         "dir", "--edges", "out/e2.npz"],
    "merge -i": ["merge", "-i", "dir", "--edges", "out/e2.npz"],
    "filter --distances": ["filter", "-i", "out/u.fasta", "--distances", "dir", "--identity",
                           "0.9", "-o", "out/k2.tsv"],
    "psse --pairs": ["psse", "-i", "out/u.fasta", "--pairs", "dir", "-o", "out/p2.tsv"],
    "cluster -i": ["cluster", "-i", "dir", "--linkage", "complete", "--cutoff", "1", "-o", "out/o2"],
    "cluster --pairs": ["cluster", "--linkage", "greedy", "--pairs", "dir", "--fasta",
                        "out/u.fasta", "--identity", "0.9", "-o", "out/o2"],
    "cluster --psse": ["cluster", "--linkage", "greedy", "--pairs", "out/k.tsv", "--psse", "dir",
                       "--fasta", "out/u.fasta", "--identity", "0.9", "-o", "out/o2"],
    "cluster --fasta": ["cluster", "--linkage", "greedy", "--pairs", "out/k.tsv", "--fasta",
                        "dir", "--identity", "0.9", "-o", "out/o2"],
    "cluster --abundance": ["cluster", "--linkage", "greedy", "--pairs", "out/k.tsv",
                            "--fasta", "out/u.fasta", "--abundance", "dir", "--identity", "0.9",
                            "-o", "out/o2"],
}
REPORT = {"--ingest-report": "out/r.tsv", "--unique": "out/u.fasta", "--bins": "out/b.tsv",
          "--tiles": "out/t.tsv", "--edges": "out/e.npz", "--kept": "out/k.tsv",
          "--membership": "out/otus.membership.tsv", "--psse": "out/p.tsv"}
for option in REPORT:
    FOLDER_INPUTS[f"report {option}"] = [
        "report", "--dataset", "d", *[x for key, path in REPORT.items()
                                      for x in (key, "dir" if key == option else path)],
        "--distance-log", "out/distance.log", "-o", "out/report"]


def a_folder_given_to(command: list[str]):
    """The pipeline, binning and psse of six reads, then `command` (one input: dir/)."""
    def prepare(folder: Path) -> list[list[str]]:
        steps = pipeline([f"r{k}" for k in range(6)])(folder)
        (folder / "dir").mkdir()
        return [*steps,
                ["binning", "-i", "out/u.fasta", "--bins", "out/b.tsv", "--tiles", "out/t.tsv"],
                ["psse", "-i", "out/u.fasta", "--pairs", "out/k.tsv", "--shuffles", "20",
                 "--backend", "cpu", "-o", "out/p.tsv"],
                command]

    return prepare


def with_an_empty_sample(folder: Path) -> list[list[str]]:
    write(folder / "reads.fasta", fasta_text(community(100)))
    write(folder / "none.fastq", "")
    return [ingest(["s=reads.fasta", "e=none.fastq"])]


def an_empty_sample_counted(folder: Path) -> None:
    rows = pd.read_csv(folder / "out" / "r.tsv", sep="\t").set_index("sample")
    assert rows.loc["e", ["records", "kept", "abundance"]].tolist() == [0, 0, 0]
    assert rows.loc["all", "records"] == rows.loc["s", "records"] == 100
    table = pd.read_csv(folder / "out" / "a.tsv", sep="\t", index_col="id")
    assert (table["e"] == 0).all() and table["s"].sum() == 100


def spilled_and_held(folder: Path) -> list[list[str]]:
    """Every pair kept, within 1 MiB (sorted runs on disk) into out/ and 256 MiB into ref/."""
    write(folder / "u.fasta", fasta_text(related(400, seed=5)))
    return [distance_of("--memory", "256", edges="ref/e.npz"),
            distance_of("--memory", "1", edges="out/e.npz")]


def pipeline_then_edit(target: str, change):
    """The pipeline of six reads with out/TARGET changed before its last step (cluster)."""
    def prepare(folder: Path) -> list[list[str]]:
        steps = pipeline([f"r{k}" for k in range(6)])(folder)
        return [*steps[:-1], ["--edit", (f"out/{target}", change)], steps[-1]]

    return prepare


def attempts() -> list[Attempt]:
    a: list[Attempt] = []
    crlf, nl = "\r\n", "\n"

    # --- pipes and standard input (item 1)
    for name, feed, spec in (("a pipe (process substitution)", "pipe", "s={pipe}"),
                             ("/dev/stdin from a pipe", "stdin", "s=/dev/stdin"),
                             ("- for standard input", "stdin", "s=-"),
                             ("a named FIFO", "fifo", "s={fifo}")):
        a.append(Attempt(f"ingest from {name}", ACCEPTED, from_stream(spec), same_ingest,
                         process=Process(feed=feed)))
    a.append(Attempt("ingest of gzip from a pipe", ACCEPTED,
                     from_stream("s={pipe}", lambda: gzipped(fasta_text(community()))),
                     same_ingest, process=Process(feed="pipe")))

    # --- reads: odd but valid, normalised, or refused
    a.append(Attempt("Windows line ends", ACCEPTED,
                     sample_as("crlf.fasta", lambda: fasta_text(community(), eol=crlf)),
                     same_ingest))
    a.append(Attempt("an empty gzip member before the reads", ACCEPTED,
                     sample_as("r.fa.gz", lambda: gzipped("") + gzipped(fasta_text(community()))),
                     same_ingest))
    a.append(Attempt("blank lines before the first record", ACCEPTED,
                     sample_as("b.fasta", lambda: nl * 3 + fasta_text(community())),
                     same_ingest))
    a.append(Attempt("a 100,000-character header", ACCEPTED,
                     sample_as("h.fasta", lambda: fasta_text(["ACGT"], ["x" * 100_000]),
                               reference=False),
                     unique_ids_are("x" * 100_000 + ";size=1")))
    a.append(Attempt("a UTF-8 byte order mark", ERROR,
                     sample_as("bom.fasta", lambda: "\ufeff" + fasta_text(["ACGT"]),
                               reference=False),
                     words="not FASTA or FASTQ"))
    a.append(Attempt("a gzip file of one empty member", ERROR,
                     sample_as("e.fa.gz", lambda: gzipped(""), reference=False),
                     words="empty file"))
    a.append(Attempt("NUL bytes in a sequence", ERROR,
                     sample_as("nul.fasta", lambda: b">a\nAC\0\0GT\n", reference=False)))
    # four spellings of ACGTACGT, one with an N, one empty
    a.append(Attempt("lower case, RNA, gaps, N and an empty read in one file", COUNTED,
                     sample_as("mix.fasta", lambda: fasta_text(
                         ["acgtacgt", "ACGUACGU", "AC-GT-ACGT", "ACNTACGT", "", "ACGTACGT"]),
                         reference=False),
                     counted(records=6, kept=4, lowercase=1, rna=1, degapped=1,
                             dropped_ambiguous=1, dropped_too_short=1, unique=1,
                             duplicate=3)))
    a.append(Attempt("reads longer than --max-length", COUNTED,
                     sample_as("l.fasta", lambda: fasta_text(["ACGT" * 10, "ACGT" * 3]),
                               "--max-length", "20", reference=False),
                     counted(records=2, kept=1, dropped_too_long=1)))

    # --- odd ids (item 4)
    na_ids = ["NA", "nan", "None", "null", "NaN", "n/a", "-", "#N/A"]
    a.append(Attempt("ids NA, nan, None, null through clustering", ACCEPTED,
                     pipeline(na_ids), membership_ids_are(na_ids)))
    a.append(Attempt("commas in ids of FCluster's .list", ERROR,
                     pipeline(["a,b", "c", "d,e,f", "g"], linkage="complete")))
    # ingest owns one ;size= field per id (docs/usage.md, "Read ids"): two are ambiguous
    a.append(Attempt("a header with two ;size= fields", ERROR,
                     sample_as("s.fasta", lambda: fasta_text(["ACGT"], ["a;size=3;size=5"]),
                               reference=False), words="s.fasta"))
    a.append(Attempt("an abundance of 2**63", ERROR,
                     sample_as("big.fasta", lambda: fasta_text(
                         ["ACGT", "ACGA"], [f"a;size={2**63}", "b"]), reference=False),
                     words="big.fasta"))
    a.append(Attempt("abundances whose sum passes 2**63", ERROR,
                     lambda f: [ingest([
                         f"s={write(f / 'a.fasta', fasta_text(['ACGT'], [f'a;size={2**63 - 1}']))}",
                         f"t={write(f / 'b.fasta', fasta_text(['ACGT'], ['b;size=9']))}"])]))
    a.append(Attempt("a folder as the unique sequences", ERROR, a_folder_of_files,
                     words="dir"))

    # --- intermediates (item 5)
    distance_on_tiles = distance_of("--bins", "bins.tsv", "--tiles", "tiles.tsv")
    filter_on_edges = ["filter", "-i", "u.fasta", "--distances", "e.npz", "--identity", "0.97",
                       "-o", "out/k.tsv"]
    a.append(Attempt("tiles.tsv with a tile twice", ERROR,
                     binned(("--edit", ("tiles.tsv", tile_twice)), distance_on_tiles),
                     words="tiles.tsv"))
    a.append(Attempt("tiles.tsv with a negative pair count", ERROR,
                     binned(("--edit", ("tiles.tsv", negative_count)), distance_on_tiles),
                     words="tiles.tsv"))
    a.append(Attempt("bins.tsv with the bins' bounds shifted", ERROR,
                     binned(("--edit", ("bins.tsv", lambda b: b.assign(min=b["min"] + 1,
                                                                       max=b["max"] + 1))),
                            distance_on_tiles),
                     words="bins.tsv"))
    a.append(Attempt("tiles.tsv without its pairs column", ERROR,
                     binned(("--edit", ("tiles.tsv", lambda t: t.drop(columns="pairs"))),
                            distance_on_tiles),
                     words="tiles.tsv"))
    a.append(Attempt("an edge list whose FASTA changed under the same ids", ERROR,
                     on_uniques(distance_of("--candidate-identity", "0.97", edges="e.npz"),
                                ("--edit", ("u.fasta", "mutate")),
                                filter_on_edges),
                     words="made from other sequences"))
    for damage, change in (("with a flipped byte", "flip"), ("cut short", "truncate")):
        a.append(Attempt(f"an edge list {damage}", ERROR,
                         on_uniques(distance_of("--candidate-identity", "0.97", edges="e.npz"),
                                    ("--edit", ("e.npz", change)),
                                    filter_on_edges),
                         words="e.npz: damaged edge list"))
    a.append(Attempt("a merge of 2 of 3 shards", ERROR,
                     on_uniques(*[distance_of("--shard", f"{k}/3", edges=f"s{k}.npz")
                                  for k in range(3)],
                                ["merge", "-i", "s0.npz", "s1.npz", "--edges", "out/e.npz"]),
                     words="lack shard 2"))
    a.append(Attempt("a shard as the filter's edge list", ERROR,
                     on_uniques(distance_of("--candidate-identity", "0.97", "--shard", "1/2",
                                            edges="e.npz"),
                                filter_on_edges),
                     words="shard 1 of 2"))
    a.append(Attempt("kept pairs naming a sequence that is not in the FASTA", ERROR,
                     pipeline_then_edit("k.tsv", lambda k: k.assign(query="nobody")),
                     words="is not a known sequence id"))
    for name, command in FOLDER_INPUTS.items():
        a.append(Attempt(f"a folder for {name}", ERROR, a_folder_given_to(command),
                         words="dir: "))
    a.append(Attempt("a folder as the edge list", ERROR,
                     on_uniques(["filter", "-i", "u.fasta", "--distances", ".", "--identity",
                                 "0.97", "-o", "k.tsv"])))

    # --- one unique sequence (item 8)
    a.append(Attempt("all reads identical: one OTU", ACCEPTED, identical_reads, one_otu))
    a.append(Attempt("an empty sample beside a full one", COUNTED, with_an_empty_sample,
                     an_empty_sample_counted))

    # --- memory (item 6)
    a.append(Attempt("every pair kept within --memory 1", ACCEPTED, spilled_and_held,
                     same_file("e.npz")))

    # --- numbers at entry (item 3)
    base = {"distance": distance_of(), "filter": ["filter", "-i", "u.fasta", "--identity",
                                                  "0.97", "-o", "out/k.tsv"],
            "psse": ["psse", "-i", "u.fasta", "--pairs", "p.tsv", "-o", "out/p.tsv"],
            "cluster": ["cluster", "-i", "d.txt", "--linkage", "complete", "-o", "out/otus"],
            "binning": ["binning", "-i", "u.fasta", "--bins", "out/b", "--tiles", "out/t"],
            "simulate": ["simulate", "-o", "out"],
            "ingest": ingest(["s=u.fasta"]),
            "report": ["report", "--dataset", "d", "--ingest-report", "r", "--unique", "u",
                       "--bins", "b", "--tiles", "t", "--edges", "e", "--kept", "k",
                       "--membership", "m", "--distance-log", "l", "-o", "out"]}
    for command, option, value in [
            ("distance", "--threads", "-1"), ("distance", "--threads", "0"),
            ("filter", "--threads", "-1"), ("psse", "--threads", "-1"),
            ("distance", "--max-distance", "nan"), ("distance", "--max-distance", "-1"),
            ("distance", "--candidate-identity", "inf"), ("distance", "--shard", "0/100000"),
            ("distance", "--shard", "3/3"), ("filter", "--identity", "nan"),
            ("filter", "--identity", "1.5"), ("psse", "--shuffles", "1000000"),
            ("psse", "--seed", str(2**64)), ("psse", "--alpha", "nan"),
            ("cluster", "--resolution", "1e-9"), ("cluster", "--resolution", "inf"),
            ("cluster", "--cutoff", "-1"), ("cluster", "--cutoff", "nan"),
            ("binning", "--bin-width", "0"), ("binning", "--bin-width", "100000"),
            ("binning", "--tile-pairs", str(10**12)), ("simulate", "--reads", str(10**12)),
            ("simulate", "--substitution-rate", "nan"), ("simulate", "--seed", "-1"),
            ("ingest", "--max-length", "1e3"), ("ingest", "--min-length", "0"),
            ("distance", "--memory", "nan"),
            ("distance", "--memory", "0"), ("distance", "--rank-timeout", "0"),
            ("distance", "--rank-timeout", "inf")]:
        a.append(Attempt(f"{command} {option} {value}", ERROR,
                         on_uniques([*base[command], option, value]),
                         words=f"argument {option}"))
    a.append(Attempt("report --dataset starting with -", ERROR,
                     on_uniques([*base["report"][:2], "-x", *base["report"][3:]]),
                     words="--dataset"))
    a.append(Attempt("NUMBA_NUM_THREADS=0", ERROR, on_uniques(distance_of()),
                     words="NUMBA_NUM_THREADS",
                     process=Process(env={"NUMBA_NUM_THREADS": "0"})))
    a.append(Attempt("distance --max-distance inf keeps every pair", ACCEPTED,
                     on_uniques(distance_of("--max-distance", "inf")), every_pair_kept(12)))
    for command in ("distance", "filter", "psse"):
        a.append(Attempt(f"{command} --threads 64 above the thread pool", ACCEPTED,
                         with_threads(command, "64"), same_file(OUTPUT_OF[command])))
        a.append(Attempt(f"{command} --threads 4 under NUMBA_NUM_THREADS=1", ACCEPTED,
                         with_threads(command, "4"), same_file(OUTPUT_OF[command]),
                         process=Process(env={"NUMBA_NUM_THREADS": "1"})))

    # --- outputs (item 2)
    for kind, make in (("a device", device), ("a folder", a_folder), ("a FIFO", a_fifo),
                       ("a link to a file", a_link)):
        a.append(Attempt(f"the edge list onto {kind}", ERROR, edges_onto(make),
                         words="an output replaces only a regular file"))
    a.append(Attempt("an output under a file", ERROR, edges_onto(under_a_file),
                     words="is not a folder"))

    # --- signals while writing (item 2)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        name = signal.Signals(signum).name
        a.append(Attempt(f"{name} while writing", ERROR, while_writing,
                         process=Process(signum=signum, code=128 + signum,
                                         line=f"seqpairs: terminated by {name}")))
    a.append(Attempt("SIGKILL while writing, then the same command", ACCEPTED,
                     killed_then_rerun, same_as_reference_and_no_temporary))
    return a


ATTEMPTS = attempts()


def params():
    for attempt in ATTEMPTS:
        yield pytest.param(attempt, id=f"{attempt.outcome}: {attempt.name}")


# --- running an attempt ---------------------------------------------------------------


def edit(folder: Path, target: str, change) -> None:
    """The `--edit` pseudo-step: damage an intermediate between two commands."""
    path = folder / target
    if change == "flip":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif change == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif change == "mutate":  # the last sequence's first letter, same ids
        lines = path.read_text().splitlines(True)
        lines[-1] = ("C" if lines[-1][0] != "C" else "G") + lines[-1][1:]
        path.write_text("".join(lines))
    else:
        edit_table(path, change)


def files(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under `folder` but folders: its type and, for a regular file or a
    link, its content or target. (A folder made and left empty holds no output.)"""
    found = {}
    for root, dirs, names in os.walk(folder):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root, name)
            mode = path.lstat().st_mode
            content = (os.readlink(path).encode() if stat.S_ISLNK(mode)
                       else path.read_bytes() if stat.S_ISREG(mode) else None)
            found[str(path.relative_to(folder))] = (stat.S_IFMT(mode), content)
    return found


def as_process(folder: Path, argv: list[str], process: Process) -> tuple[int, str, str]:
    env = dict(ENV, **process.env)
    command = [sys.executable, "-m", "seqpairs", "-q", *argv]
    feed = (folder / "feed.bin").read_bytes() if process.feed else None
    if process.signum is not None:
        return signal_while_writing(command, folder / "out", process.signum)
    if process.feed == "stdin":
        proc = subprocess.run(command, input=feed, env=env, cwd=folder, capture_output=True,
                              timeout=60)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    writer, pass_fds = None, ()
    if process.feed == "pipe":
        read_end, write_end = os.pipe()
        command = [arg.replace("{pipe}", f"/dev/fd/{read_end}") for arg in command]
        pass_fds = (read_end,)
        writer = threading.Thread(target=_write_and_close, args=(write_end, feed), daemon=True)
    elif process.feed == "fifo":
        fifo = folder / "reads.fifo"
        os.mkfifo(fifo)
        command = [arg.replace("{fifo}", str(fifo)) for arg in command]
        writer = threading.Thread(target=_open_write_and_close, args=(fifo, feed), daemon=True)
    proc = subprocess.Popen(command, env=env, cwd=folder, pass_fds=pass_fds,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if process.feed == "pipe":
        os.close(read_end)
    if writer:
        writer.start()
    try:
        stdout, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:  # reading a stream twice waits for a second writer
        proc.kill()
        stdout, stderr = proc.communicate()
        return None, stdout.decode(), "hung\n" + stderr.decode()
    return proc.returncode, stdout.decode(), stderr.decode()


def _open_write_and_close(fifo: Path, data: bytes) -> None:
    _write_and_close(os.open(fifo, os.O_WRONLY), data)


def _write_and_close(fd: int, data: bytes) -> None:
    try:
        os.write(fd, data)  # blocks while the pipe is full until the reader reads
    except BrokenPipeError:  # the reader gave up
        pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("attempt", params())
def test_attempt(attempt: Attempt, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    steps = attempt.prepare(tmp_path)
    for k, argv in enumerate(steps):
        if not argv:
            continue
        if argv[0] == "--edit":
            edit(tmp_path, *argv[1])
            continue
        before = files(tmp_path)
        last = k == len(steps) - 1
        if attempt.process and (last or attempt.process.env):
            code, stdout, stderr = as_process(tmp_path, argv, attempt.process)
        else:
            code, stdout, stderr = cli("-q", *argv)
        if code != 0 or last:
            break
    assert stdout == ""
    if attempt.outcome == ERROR:
        process = attempt.process or Process()
        assert code == process.code, stderr
        assert stderr.count("\n") == 1 and stderr.startswith(process.line), stderr
        assert attempt.words in stderr
        assert files(tmp_path) == before  # nothing written, replaced or left behind
    else:
        assert code == 0, stderr
        attempt.check(tmp_path)


# --- the workflow's config ------------------------------------------------------------

DATASET = {"samples": {"s1": "reads.fastq"}}
CONFIGS = [  # (what, config, the words of the error: the key's path)
    ("a string for a number", {"defaults": {"distance": {"threads": "four"}}},
     "On instance['defaults']['distance']['threads']"),
    ("true for a number", {"defaults": {"filter": {"threads": True}}},
     "On instance['defaults']['filter']['threads']"),
    ("a list for a section", {"defaults": {"cluster": []}},
     "On instance['defaults']['cluster']"),
    ("a number for a sample's path", {"datasets": {"d1": {"samples": {"s1": 5}}}},
     "On instance['datasets']['d1']['samples']['s1']"),
    ("a number for a sample name", {"datasets": {"d1": {"samples": {7: "reads.fastq"}}}},
     "On instance['datasets']['d1']['samples']:\n    7"),
    ("null for the datasets", {"datasets": None}, "On instance['datasets']:\n    None"),
    ("a sample name with a line end",
     {"datasets": {"d1": {"samples": {"s1\n": "reads.fastq"}}}},
     "On instance['datasets']['d1']['samples']:\n    's1\\n'"),
    ("a dataset name starting with -", {"datasets": {"-d": DATASET}},
     "On instance['datasets']:\n    '-d'"),
    ("a float for an integer", {"defaults": {"binning": {"tile_pairs": 1e4}}},
     "config: defaults.binning.tile_pairs: 10000.0 is not a whole number"),
]


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    from test_workflow import copy_workflow

    workdir = copy_workflow(tmp_path_factory.mktemp("adversarial-config"))
    (workdir / "reads.fastq").write_text("@r1\nACGT\n+\nIIII\n")
    return workdir


@pytest.mark.parametrize("config, words", [pytest.param(c, w, id=f"{ERROR}: {n}")
                                           for n, c, w in CONFIGS])
def test_config_attempt(workflow_copy, config, words):
    """A bad config stops the dry run naming the key, before any job."""
    from test_workflow import snakemake

    config = {"datasets": {"d1": DATASET}, **config}
    (workflow_copy / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_copy, "--dry-run", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and words in output, output
    assert not (workflow_copy / "results").exists()
