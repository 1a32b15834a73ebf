"""formats/bulk.py against the paths it speeds up: the reader gives Biopython's ids, codes
and offsets (formats/fasta.read_coded_set) or declines the file, and read_coded_files
then gives Biopython's result or error; the writer gives write_tsv's bytes."""
import numpy as np
import pandas as pd
import pytest

from seqpairs.errors import UserError
from seqpairs.formats import bulk
from seqpairs.formats.fasta import read_coded_files, read_coded_set
from seqpairs.formats.tables import write_tsv
from seqpairs.scoring import LocalScheme

DNA = LocalScheme.dna(2, -3, 5, 2)
PROTEIN = LocalScheme.from_matrix("BLOSUM62", 11, 1)

TAKEN = {
    "one line each": ">a\nACGT\n>b\nGGA\n",
    "wrapped, lower case, no last newline": ">r1 some title\nacgt\nACG\nT\n>r2\tx y\nTT",
    "blank lines": ">a\n\nAC\n\nGT\n\n>b\nC\n",
    "one letter records": "".join(f">s{k}\nA\n" for k in range(50)),
    "long ids": ">" + "x" * 200 + "\nAC\n>" + "y" * 3 + "\nG\n",
}
DECLINED = {
    "CR line ends": ">a\r\nACGT\r\n",
    "space in a sequence": ">a\nAC GT\n",
    "size annotation": ">a;size=3\nACGT\n",
    "quote in an id": '>a"b\nACGT\n',
    "empty sequence": ">a\n>b\nAC\n",
    "duplicate id": ">a\nAC\n>b\nG\n>a\nT\n",
    "letter outside the alphabet": ">a\nACGU\n",
    "text before the first record": "junk\n>a\nAC\n",
    "empty title": ">\nAC\n",
    "non-ASCII title": ">a é\nAC\n",
}


def write(tmp_path, text, name="s.fa"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


@pytest.mark.parametrize("chunks", [1, 3, 256])
@pytest.mark.parametrize("case", list(TAKEN))
def test_taken_files_read_as_biopython_reads_them(tmp_path, case, chunks):
    path = write(tmp_path, TAKEN[case])
    ids, codes, offsets = read_coded_set(path, DNA)
    got = bulk.read_fastas([path], DNA.alphabet, chunks=chunks)
    assert got is not None
    (names,), got_codes, got_offsets = got
    assert names.astype(str).tolist() == list(ids)
    assert np.array_equal(got_codes, codes) and np.array_equal(got_offsets, offsets)


def test_random_protein_file_at_every_chunking(tmp_path):
    rng = np.random.default_rng(3)
    letters = np.array(list(PROTEIN.alphabet))
    records = []
    for k in range(300):
        seq = "".join(rng.choice(letters, int(rng.integers(1, 200))))
        seq = seq.lower() if k % 3 == 0 else seq
        wrapped = "\n".join(seq[i:i + 60] for i in range(0, len(seq), 60))
        records.append(f">p{k} protein {k}\n{wrapped}\n")
    path = write(tmp_path, "".join(records))
    ids, codes, offsets = read_coded_set(path, PROTEIN)
    for chunks in (1, 7, 1000, 10 ** 6):  # a chunk per byte, too
        (names,), got_codes, got_offsets = bulk.read_fastas([path], PROTEIN.alphabet, chunks)
        assert names.astype(str).tolist() == list(ids)
        assert np.array_equal(got_codes, codes) and np.array_equal(got_offsets, offsets)


@pytest.mark.parametrize("case", list(DECLINED))
def test_other_files_are_declined_and_read_or_refused_by_biopython(tmp_path, case):
    path = write(tmp_path, DECLINED[case])
    assert bulk.read_fastas([path], DNA.alphabet) is None
    try:
        ids, codes, offsets = read_coded_set(path, DNA)
    except UserError as error:
        with pytest.raises(UserError) as again:
            read_coded_files([path], DNA)
        assert str(again.value) == str(error)
    else:
        (names,), got_codes, got_offsets = read_coded_files([path], DNA)
        assert list(names) == list(ids)
        assert np.array_equal(got_codes, codes) and np.array_equal(got_offsets, offsets)


def test_missing_and_empty_files_get_biopythons_error(tmp_path):
    for path in (str(tmp_path / "none.fa"), write(tmp_path, "", "empty.fa")):
        assert bulk.read_fastas([path], DNA.alphabet) is None
        with pytest.raises(UserError):
            read_coded_files([path], DNA)


def pandas_bytes(tmp_path, names, columns):
    frame = pd.DataFrame({n: c.astype(str).astype(object) if c.dtype.kind == "S" else c
                          for n, c in zip(names, columns)})
    write_tsv(tmp_path / "want.tsv", frame)
    return (tmp_path / "want.tsv").read_bytes()


def test_table_bytes_are_write_tsvs(tmp_path):
    rng = np.random.default_rng(5)
    n = 5000
    ids = np.array([f"id{k}_{'x' * int(rng.integers(0, 9))}" for k in range(n)], dtype="S")
    columns = [ids, ids[::-1].copy(), rng.integers(-10 ** 12, 10 ** 12, n),
               np.r_[0, -1, 1, rng.integers(-9, 10, n - 3)], rng.integers(0, 2 ** 31, n)]
    names = ["qseqid", "sseqid", "big", "small", "score"]
    got = b"".join(bytes(b) for b in bulk.table_bytes(names, columns))
    assert got == pandas_bytes(tmp_path, names, columns)


def test_table_bytes_decline_what_pandas_quotes_or_formats():
    ids = np.array([b"a\tb", b"c"])
    assert bulk.table_bytes(["id", "n"], [ids, np.arange(2)]) is None
    assert bulk.table_bytes(["id"], [np.array([b'q"'])]) is None
    assert bulk.table_bytes(["x"], [np.array([0.5])]) is None


def test_empty_table_is_its_header(tmp_path):
    columns = [np.array([], dtype="S3"), np.array([], dtype=np.int64)]
    got = b"".join(bytes(b) for b in bulk.table_bytes(["a", "b"], columns))
    assert got == b"a\tb\n"


def test_files_read_together_are_the_files_end_to_end(tmp_path):
    first = write(tmp_path, TAKEN["wrapped, lower case, no last newline"], "a.fa")
    second = write(tmp_path, TAKEN["blank lines"], "b.fa")
    declined = write(tmp_path, DECLINED["space in a sequence"], "c.fa")
    for paths in ([first, second], [second, first, first], [first, declined]):
        parts = [read_coded_set(path, DNA) for path in paths]
        names, codes, offsets = read_coded_files(paths, DNA)
        assert [list(map(str, n.astype(str) if n.dtype.kind == "S" else n)) for n in names] \
            == [list(ids) for ids, _, _ in parts]
        assert np.array_equal(codes, np.concatenate([c for _, c, _ in parts]))
        lengths = np.concatenate([np.diff(o) for _, _, o in parts])
        assert np.array_equal(np.diff(offsets), lengths) and offsets[0] == 0


@pytest.mark.parametrize("duplicate", [False, True])
def test_ids_whose_hashes_collide_are_compared_exactly(monkeypatch, duplicate):
    names = np.array([b"a", b"bb", b"a" if duplicate else b"c", b"dd"])
    assert bulk._unique(names) is not duplicate
    monkeypatch.setattr(bulk, "_hashes", lambda text, width: np.zeros(len(text) // width,
                                                                       np.uint64))
    assert bulk._unique(names) is not duplicate


def test_table_bytes_decline_ids_with_a_nul_inside():
    text = np.zeros(2, dtype="S3")
    text.view(np.uint8)[:] = [97, 0, 98, 99, 0, 0]  # "a\0b" and "c"
    assert bulk.table_bytes(["id"], [text]) is None


def test_runs_text_is_the_cigar_of_each_pairs_runs():
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, 400)  # some pairs without runs: "*"
    offsets = np.r_[0, np.cumsum(counts)]
    ops = rng.integers(0, 4, offsets[-1]).astype(np.uint8)
    lengths = rng.integers(1, 12000, offsets[-1]).astype(np.int32)
    got = bulk.runs_text(offsets, ops, lengths, "=XID").astype(str).tolist()
    want = ["".join(f"{lengths[r]}{'=XID'[ops[r]]}" for r in range(lo, hi)) or "*"
            for lo, hi in zip(offsets[:-1], offsets[1:])]
    assert got == want


def test_traced_tables_write_write_tsvs_bytes(tmp_path):
    """hits.write through formats/bulk.py (identities as text, CIGARs as bytes) against
    write_tsv on the same values as strings and floats."""
    from seqpairs.formats import hits as hit_table
    from seqpairs.pairs.align import Hits, Runs

    rng = np.random.default_rng(2)
    n = 300
    counts = rng.integers(0, 5, n)
    offsets = np.r_[0, np.cumsum(counts)]
    total = int(offsets[-1])
    runs = Runs(offsets, rng.integers(0, 4, total).astype(np.uint8),
                rng.integers(1, 50, total).astype(np.int32), rng.integers(0, 90, n),
                rng.integers(0, 9, n), rng.integers(0, 4, n))
    zeros = np.zeros(n, np.int64)
    hits = Hits(np.arange(n), np.arange(n)[::-1].copy(), np.arange(n), rng.integers(0, 99, n),
                zeros + 1, zeros + 5, zeros + 1, zeros + 5)
    hits.runs = runs
    ids = np.array([f"s{k}" for k in range(n)], dtype="S")
    table = hit_table.Table(hits, ids, ids, zeros + 9, zeros + 9, None, None, "=XID")
    names = ["qseqid", "sseqid", "score", "pident", "length", "cigar"]
    hit_table.write(tmp_path / "got.tsv", table, names)
    frame = pd.DataFrame({name: hit_table.COLUMNS[name].values(table) for name in names})
    for name in ("qseqid", "sseqid", "cigar"):
        frame[name] = frame[name].map(bytes.decode)
    write_tsv(tmp_path / "want.tsv", frame)
    assert (tmp_path / "got.tsv").read_bytes() == (tmp_path / "want.tsv").read_bytes()
