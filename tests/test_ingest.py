"""Ingest: reading, policies, dereplication, report accounting and error messages."""
from __future__ import annotations

import gzip
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from Bio import SeqIO
from hypothesis import given, settings
from hypothesis import strategies as st

from seqpairs.errors import UserError
from seqpairs.formats.samples import sample_name
from seqpairs.reads.ingest import ingest
from seqpairs.stages.ingest import parse_input

DROPPED = ["dropped_ambiguous", "dropped_too_short", "dropped_too_long"]

# Sample a (plain FASTA) and b (gzipped FASTQ); expected results derived by hand below.
A_FASTA = """\
>r1
ACGTACGT
>r2 some description
acguacgu
>r3;size=3
GGGG
CCCC
>r4
ACGTNCGT
>r5
AC
>r6
>r7
TTTTAAAA
"""
B_FASTQ = """\
@q1
GGGGCCCC
+
IIIIIIII
@q2;size=2
TTTTAAAA
+q2;size=2
IIIIIIII
@q3
CCCCAAAAG
+
IIIIIIIII
@q4
AAAACCCC
+
IIIIIIII
@q5
aaaacccc
+
@III@III
@q6
UUUUAAAA
+
IIIIIIII
"""


@pytest.fixture
def two_samples(tmp_path):
    a = tmp_path / "a.fasta"
    a.write_text(A_FASTA)
    b = tmp_path / "b.fq.gz"
    b.write_bytes(gzip.compress(B_FASTQ.encode()))
    return a, b


def outputs(tmp_path):
    return tmp_path / "unique.fasta", tmp_path / "abundance.tsv", tmp_path / "report.tsv"


def ingest_args(tmp_path, *inputs):
    fasta, abundance, report = outputs(tmp_path)
    args = ["ingest", "-o", fasta, "--abundance", abundance, "--report", report]
    for spec in inputs:
        args += ["-i", spec]
    return args


def check_accounting(report: pd.DataFrame, abundance: pd.DataFrame) -> None:
    """The invariants every report must satisfy, and agreement with the abundance table."""
    assert list(report["sample"])[-1] == "all"
    samples, total = report.iloc[:-1], report.iloc[-1]
    assert (report["records"] == report["kept"] + report[DROPPED].sum(axis=1)).all()
    assert (report["kept"] == report["unique"] + report["duplicate"]).all()
    numeric = report.columns.drop(["sample", "file"])
    assert (samples[numeric].sum() == total[numeric]).all()
    assert total["unique"] == len(abundance)
    for _, row in samples.iterrows():
        assert abundance[row["sample"]].sum() == row["abundance_kept"]
    assert (abundance[list(samples["sample"])].sum(axis=1) == abundance["total"]).all()


# ---------------------------------------------------------------- hand-made examples


def test_two_samples_exact_outputs(tmp_path, two_samples, cli):
    a, b = two_samples
    args = ingest_args(tmp_path, a, b) + ["--min-length", "4", "--max-length", "8"]
    code, out, err = cli(*args)
    assert (code, out) == (0, "")
    assert "all samples: 13 records read, 9 kept" in err and "warning" not in err.lower()
    fasta, abundance, report = outputs(tmp_path)

    # r2 (U->T, lower case) merges into r1; q1 into r3; q2 (size 2) and q6 (U->T) into r7;
    # q5 into q4. Totals 4, 4, 2, 2: ties keep first-appearance order.
    assert fasta.read_text() == (
        ">r3;size=4\nGGGGCCCC\n>r7;size=4\nTTTTAAAA\n"
        ">r1;size=2\nACGTACGT\n>q4;size=2\nAAAACCCC\n"
    )
    assert abundance.read_text() == (
        "id\ta\tb\ttotal\nr3\t3\t1\t4\nr7\t1\t3\t4\nr1\t2\t0\t2\nq4\t0\t2\t2\n"
    )
    # a: r4 ambiguous, r5 and the empty r6 too short; b: q3 (9 bases) too long.
    # Normalised: r2 (lower case, U), q5 (lower case), q6 (U); nothing degapped.
    assert report.read_text() == (
        "sample\tfile\trecords\tkept\tunique\tduplicate\tdropped_ambiguous\tdropped_too_short"
        "\tdropped_too_long\tabundance\tabundance_kept\tlowercase\trna\tdegapped\n"
        f"a\t{a}\t7\t4\t3\t1\t1\t2\t0\t9\t6\t1\t1\t0\n"
        f"b\t{b}\t6\t5\t1\t4\t0\t0\t1\t7\t6\t1\t1\t0\n"
        "all\t\t13\t9\t4\t5\t1\t2\t1\t16\t12\t2\t2\t0\n"
    )
    check_accounting(pd.read_csv(report, sep="\t"), pd.read_csv(abundance, sep="\t", index_col="id"))


def test_default_policies_keep_short_and_long_reads(two_samples):
    a, b = two_samples
    result = ingest([("a", str(a)), ("b", str(b))])
    report = result.report.set_index("sample")
    # Without length limits only r4 (ambiguous) and the empty r6 are dropped; q3 is a new unique.
    assert report.loc["all", ["kept", "unique", "dropped_ambiguous", "dropped_too_short"]].tolist() == [
        11, 6, 1, 1,
    ]
    assert result.ids == ["r3", "r7", "r1", "q4", "r5", "q3"]
    assert result.seqs[-2:] == ["AC", "CCCCAAAAG"]


def test_truncate_cuts_long_reads_and_drops_short_ones(tmp_path):
    path = tmp_path / "t.fa"
    path.write_text(
        ">t1\nACGTACGTAA\n>t2\nACGTACGTCC\n>t3\nACGTACG\n>t4\nACGTACGT\n"
        # The N lies beyond the cut, but ambiguity is checked before truncation.
        ">t5\nACGTACGTNN\n"
    )
    result = ingest([("t", str(path))], truncate=8)
    assert result.ids == ["t1"]
    assert result.seqs == ["ACGTACGT"]
    assert result.abundance.loc["t1", "total"] == 3
    row = result.report.iloc[0]
    assert (row["records"], row["kept"], row["duplicate"], row["dropped_too_short"],
            row["dropped_ambiguous"]) == (5, 3, 2, 1, 1)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("x/s1.fastq.gz", "s1"),
        ("s1.FA", "s1"),
        ("reads.fna", "reads"),
        ("a.b.fq", "a.b"),
        ("run.fasta.gz", "run"),
        ("notes.txt", "notes.txt"),
    ],
)
def test_sample_name(path, name):
    assert sample_name(path) == name


def test_parse_input():
    assert parse_input("gut=x/s1.fq") == ("gut", "x/s1.fq")
    assert parse_input("x/s1.fq") == ("s1", "x/s1.fq")
    with pytest.raises(UserError):
        parse_input("=x/s1.fq")


def test_sample_option_names_the_columns(tmp_path, two_samples, cli):
    a, b = two_samples
    assert cli(*ingest_args(tmp_path, f"gut={a}", f"skin={b}"))[0] == 0
    header = outputs(tmp_path)[1].read_text().splitlines()[0]
    assert header == "id\tgut\tskin\ttotal"


@given(
    samples=st.lists(
        st.lists(
            st.tuples(st.text(alphabet="ACGTacgUuNn-.", max_size=12), st.integers(1, 3)),
            min_size=1, max_size=15,
        ),
        min_size=1, max_size=3,
    ),
    min_length=st.integers(1, 5),
    max_length=st.one_of(st.none(), st.integers(5, 12)),
    truncate=st.one_of(st.none(), st.integers(3, 10)),
)
@settings(max_examples=60, deadline=None)
def test_accounting_matches_a_plain_model(samples, min_length, max_length, truncate):
    def model(seq):
        seq = seq.upper().replace("U", "T").replace("-", "").replace(".", "")
        if set(seq) - set("ACGT"):
            return None
        if truncate is not None:
            if len(seq) < truncate:
                return None
            seq = seq[:truncate]
        if len(seq) < min_length or (max_length is not None and len(seq) > max_length):
            return None
        return seq

    expected = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for s, records in enumerate(samples):
            path = Path(tmp) / f"s{s}.fa"
            path.write_text("".join(f">s{s}r{k};size={n}\n{seq}\n" for k, (seq, n) in enumerate(records)))
            inputs.append((f"s{s}", str(path)))
            for seq, n in records:
                if model(seq) is not None:
                    expected[model(seq)] += n
        options = {"min_length": min_length, "max_length": max_length, "truncate": truncate}
        if not expected:
            with pytest.raises(UserError, match="no sequences left"):
                ingest(inputs, **options)
            return
        result = ingest(inputs, **options)

    assert dict(zip(result.seqs, result.abundance["total"])) == expected
    assert list(result.abundance["total"]) == sorted(expected.values(), reverse=True)
    assert list(result.report["records"].iloc[:-1]) == [len(r) for r in samples]
    changed = {
        "lowercase": lambda seq: seq != seq.upper(),
        "rna": lambda seq: "U" in seq.upper(),
        "degapped": lambda seq: "-" in seq or "." in seq,
    }
    for name, test in changed.items():
        counts = [sum(test(seq) for seq, _ in records) for records in samples]
        assert list(result.report[name].iloc[:-1]) == counts, name
    check_accounting(result.report, result.abundance)


# ---------------------------------------------------------------- errors


FASTQ_OK = b"@q1\nACGT\n+\nIIII\n"
# name: ({file: content, None = do not create}, ingest keyword options, expected message part)
ERROR_CASES = {
    "empty file": ({"e.fa": b""}, {}, "e.fa: empty file"),
    "blank file": ({"e.fa": b"\n  \n\n"}, {}, "e.fa: empty file"),
    "empty gzip": ({"e.fa.gz": gzip.compress(b"")}, {}, "e.fa.gz: empty file"),
    "every file empty": ({"e.fa": b"", "f.fq": b"\n"}, {}, "every input is an empty file (no records): "),
    "not fasta": ({"x.txt": b"hello\n>r1\nACGT\n"}, {}, "x.txt: not FASTA or FASTQ"),
    "binary": ({"x.fa": b">r1\nAC\xff\xfeGT\n"}, {}, "x.fa: not a text file"),
    "corrupt gzip": ({"x.fq.gz": b"\x1f\x8b\x09garbage"}, {}, "x.fq.gz: corrupt gzip data"),
    "truncated gzip": ({"x.fq.gz": gzip.compress(FASTQ_OK * 50)[:-12]}, {}, "gzip data truncated"),
    "quality length": (
        {"x.fq": FASTQ_OK + b"@q2\nACGT\n+\nIII\n"}, {}, "x.fq:record 2: Lengths of sequence and quality",
    ),
    "fastq without quality": ({"x.fq": FASTQ_OK + b"@q2\nACGT\n"}, {}, "x.fq:record 2: End of file"),
    "missing file": ({"nothere.fa": None}, {}, "nothere.fa: cannot read"),
    "size zero": ({"x.fa": b">r1;size=0\nACGT\n"}, {}, "x.fa:r1: abundance ;size=0"),
    "empty id": ({"x.fa": b">r1\nACGT\n> \nACGT\n"}, {}, "x.fa:record 2: empty record id"),
    "duplicate sample": ({"d/s.fa": b">r1\nACGT\n", "s.fa": b">r2\nACGT\n"}, {}, "more than one input"),
    "reserved sample": ({"all.fa": b">r1\nACGT\n"}, {}, "sample name 'all' is reserved"),
    "id collision": (
        {"a.fa": b">x\nACGT\n", "b.fa": b">x\nCCCC\n"}, {}, "b.fa:x: id already names a different",
    ),
    "all dropped": ({"a.fa": b">r1\nACNT\n"}, {}, "no sequences left: all 1 records were dropped"),
    "ambiguous error": (
        {"a.fa": b">r1\nACGT\n>r2\nACRT\n"}, {"ambiguous": "error"},
        "a.fa:r2: letter 'R' at position 3 is not A, C, G or T",
    ),
    "bad length option": ({"a.fa": b">r1\nACGT\n"}, {"min_length": 0}, "--min-length: 0"),
}
# The command's line where it differs from the engine's: options are refused as read.
CLI_LINES = {"bad length option": "argument --min-length: must be a whole number >= 1, "
                                  "not '0' (see `seqpairs ingest --help`)"}


@pytest.mark.parametrize("case", list(ERROR_CASES), ids=list(ERROR_CASES))
def test_bad_input_is_one_clear_line(tmp_path, cli, case):
    files, options, message = ERROR_CASES[case]
    paths = []
    for name, content in files.items():
        path = tmp_path / name
        if content is not None:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(content)
        paths.append(str(path))

    with pytest.raises(UserError) as exc:
        ingest([parse_input(p) for p in paths], **options)
    assert message in str(exc.value)

    flags = [x for key, value in options.items() for x in (f"--{key.replace('_', '-')}", value)]
    code, out, err = cli(*ingest_args(tmp_path, *paths), *flags)
    assert (code, out) == (2, "")
    assert err == f"seqpairs: error: {CLI_LINES.get(case, exc.value)}\n"  # one line, no traceback
    # Atomic outputs: a failed run leaves nothing behind.
    assert not any(p.exists() for p in outputs(tmp_path))


@pytest.mark.parametrize("empty", [b"", b"\n\n", gzip.compress(b"")], ids=["empty", "blank", "gzip"])
def test_an_empty_sample_is_reported_not_fatal(tmp_path, cli, empty):
    """A sample with no records (a failed library, a QC that kept nothing) beside others:
    a warning naming it, its report row and its abundance column all zeros."""
    (tmp_path / "full.fa").write_text(">r1\nACGT\n>r2\nACGT\n>r3\nAAAA\n")
    (tmp_path / "none.fa").write_bytes(empty)
    code, out, err = cli(*ingest_args(tmp_path, str(tmp_path / "full.fa"),
                                      str(tmp_path / "none.fa")))
    assert code == 0, err
    assert "sample none (" in err and "empty file (no records)" in err
    report = pd.read_csv(tmp_path / "report.tsv", sep="\t", index_col="sample")
    assert report.loc["none", ["records", "kept", "abundance"]].tolist() == [0, 0, 0]
    assert report.loc["all", "records"] == 3
    abundance = pd.read_csv(tmp_path / "abundance.tsv", sep="\t", index_col="id")
    assert abundance["none"].tolist() == [0, 0] and abundance["full"].tolist() == [2, 1]


# ---------------------------------------------------------------- real data


def read_records(path, fmt):
    with gzip.open(path, "rt") as handle:
        return [(r.id, str(r.seq)) for r in SeqIO.parse(handle, fmt)]


def test_miseq_samples(tmp_path, shared_data, cli):
    files = {"sam1F": shared_data / "sam1F.fastq.gz", "sam2F": shared_data / "sam2F.fastq.gz"}
    assert cli(*ingest_args(tmp_path, *files.values()))[0] == 0
    fasta, abundance_path, report_path = outputs(tmp_path)
    report = pd.read_csv(report_path, sep="\t")
    abundance = pd.read_csv(abundance_path, sep="\t", index_col="id")
    check_accounting(report, abundance)
    assert list(report["records"]) == list(report["kept"]) == [1500, 1500, 3000]
    assert abundance[["sam1F", "sam2F"]].to_numpy().sum() == 3000

    # Expected dereplication, counted plainly: first id, first position, count per sample.
    first, counts = {}, {}
    for sample, path in files.items():
        for rid, seq in read_records(path, "fastq"):
            first.setdefault(seq, (len(first), rid))
            counts.setdefault(seq, Counter())[sample] += 1
    order = sorted(counts, key=lambda seq: (-counts[seq].total(), first[seq][0]))
    expected = pd.DataFrame(
        [[counts[seq]["sam1F"], counts[seq]["sam2F"], counts[seq].total()] for seq in order],
        index=pd.Index([first[seq][1] for seq in order], name="id"),
        columns=["sam1F", "sam2F", "total"],
    )
    pd.testing.assert_frame_equal(abundance, expected)
    assert fasta.read_text() == "".join(
        f">{first[seq][1]};size={counts[seq].total()}\n{seq}\n" for seq in order
    )


def test_ambiguity_codes_are_dropped_and_counted(shared_data):
    path = shared_data / "ten_16s.100.fa.gz"
    records = read_records(path, "fasta")
    ambiguous = [(rid, seq) for rid, seq in records if set(seq.upper()) - set("ACGT")]
    assert ambiguous  # the file is chosen for its IUPAC codes

    result = ingest([("ten", str(path))])
    row = result.report.iloc[0]
    assert row["records"] == len(records) == 3994
    assert row["dropped_ambiguous"] == len(ambiguous)
    assert row["kept"] == len(records) - len(ambiguous)
    assert all(set(s) <= set("ACGT") for s in result.seqs)

    rid, seq = ambiguous[0]
    position, letter = next((k, c) for k, c in enumerate(seq.upper()) if c not in "ACGT")
    with pytest.raises(UserError) as exc:
        ingest([("ten", str(path))], ambiguous="error")
    assert str(exc.value) == f"{path}:{rid}: letter {letter!r} at position {position + 1} is not A, C, G or T"


def test_split_size_keeps_other_annotations():
    from seqpairs.formats.fasta import split_size

    assert split_size("r1;size=3;tax=x") == ("r1;tax=x", 3)
    assert split_size("r1;size=12;") == ("r1", 12)
    assert split_size("r1") == ("r1", 1)
    assert split_size("r1;sizes=4") == ("r1;sizes=4", 1)
