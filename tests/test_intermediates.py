"""Intermediates a later stage reads: what they were made from is checked, damage is one
line, and the edge list is written in bounded memory with np.savez's bytes.

- bins.tsv and tiles.tsv must cover every pair of their unique.fasta exactly once;
- an edge list carries the digest of its sequences (and a shard its index and count);
  the filter, the cluster, the report and the mothur export refuse one made from other
  sequences, `seqpairs merge` anything but shards 0..K-1 of one K;
- a damaged file (flipped byte, truncation, a cell that is no number) is one error line;
- kept pairs beyond --memory are sorted runs on disk, merged into the same bytes.
"""
from __future__ import annotations

import errno
import io
import os
import runpy
import threading
import types
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqpairs.errors import UserError
from seqpairs.formats import npz, runs, tables
from seqpairs.formats.distances import (
    LAYOUTS,
    Edges,
    pair_index,
    read_edges,
    seqdist_to_condensed,
    sequence_digest,
    write_condensed,
    write_edges,
    write_npz,
)
from seqpairs.formats.tables import write_tsv

REPO = Path(__file__).resolve().parent.parent


def write_fasta(path, seqs, ids=None):
    ids = ids or [f"s{k}" for k in range(len(seqs))]
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in zip(ids, seqs)))
    return path


def family(n, length, seed, rate=0.08):
    """n mutated copies (substitutions) of one random sequence, some a base shorter."""
    rng = np.random.default_rng(seed)
    base = rng.choice(list("ACGT"), length)
    seqs = []
    for k in range(n):
        s = base.copy()
        hit = rng.random(length) < rate
        s[hit] = rng.choice(list("ACGT"), hit.sum())
        seqs.append("".join(s[: length - k % 3]))
    return seqs


def one_line(err: str, *parts: str) -> None:
    assert err.startswith("seqpairs: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for part in parts:
        assert part in err, err


# ---------------------------------------------------------------- np.savez's bytes


def test_npz_written_in_chunks_is_np_savez(tmp_path):
    rng = np.random.default_rng(3)
    arrays = {"n": np.int64(7), "ids": np.array(["a", "bcd", "é"]),
              "i": rng.integers(0, 2**40, 1001), "cost": rng.random(1001),
              "length": rng.integers(0, 99, 1001).astype(np.int32),
              "empty": np.zeros(0, np.float64), "name": np.asarray("x" * 64)}
    reference = io.BytesIO()
    np.savez(reference, **arrays)
    for cuts in ([], [1], [3, 500, 999]):
        members = []
        for name, value in arrays.items():
            value = np.asarray(value)
            chunks = np.split(value, [c for c in cuts if c < value.size]) if value.ndim else [value]
            members.append((name, value.dtype, value.shape, chunks))
        out = io.BytesIO()
        write_npz(out, members)
        assert out.getvalue() == reference.getvalue(), cuts


@given(st.binary(max_size=300), st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_crc32_of_two_pieces_combined_is_crc32_of_both(first, second):
    assert npz.crc32_combine(zlib.crc32(first), zlib.crc32(second), len(second)) == \
        zlib.crc32(first + second)


def test_crc32_combined_over_gigabytes_of_zeros():
    """Lengths beyond 2^32 bytes (x^(8 length) from its squares, as zlib does): 5 GiB of
    zeros as 1 GiB and 4 GiB against zlib over all of them."""
    block = bytes(1 << 24)
    gib = 0
    for _ in range(64):
        gib = zlib.crc32(block, gib)
    four = 0
    for _ in range(4):
        four = npz.crc32_combine(four, gib, 1 << 30)
    combined = npz.crc32_combine(gib, four, 1 << 32)  # a piece of 4 GiB
    whole = 0
    for _ in range(5 * 64):
        whole = zlib.crc32(block, whole)
    assert combined == whole


def arrays_to_save(rng):
    return {"n": np.int64(7), "ids": np.array(["a", "bcd", "é"]),
            "i": rng.integers(0, 2**40, 1001), "cost": rng.random(1001),
            "length": rng.integers(0, 99, 1001).astype(np.int32),
            "empty": np.zeros(0, np.float64), "name": np.asarray("x" * 64)}


def test_npz_written_by_several_writers_in_any_order_is_np_savez(tmp_path):
    """Pieces of rows written out of order through separate file objects (as ranks do),
    the headers last from the pieces' CRCs: np.savez's bytes."""
    rng = np.random.default_rng(5)
    arrays = arrays_to_save(rng)
    reference = io.BytesIO()
    np.savez(reference, **arrays)
    archive = npz.Archive((name, np.asarray(v).dtype, np.shape(v)) for name, v in arrays.items())
    path = tmp_path / "a.npz"
    path.write_bytes(b"")
    pieces, jobs = {}, []
    for name, value in arrays.items():
        value = np.asarray(value)
        cuts = [0, *sorted(rng.choice(value.size + 1, 2)), value.size] if value.ndim else [0, 1]
        flat = value.reshape(-1)
        jobs += [(name, k, a, flat[a:b]) for k, (a, b) in enumerate(zip(cuts, cuts[1:]))]
        pieces[name] = [None] * (len(cuts) - 1)
    for index in rng.permutation(len(jobs)):
        name, k, row, rows = jobs[index]
        with path.open("r+b") as fh:
            pieces[name][k] = archive.write_rows(fh, name, row, [rows])
    with path.open("r+b") as fh:
        for name in arrays:
            pieces[name].insert(0, archive.write_header(fh, name))
        archive.finish(fh, pieces)
    assert path.read_bytes() == reference.getvalue()


def test_npz_pieces_of_several_members_written_by_threads_is_np_savez(tmp_path):
    """Pieces of rows of several members at once (write_piece: os.pwrite, as the edge
    list's rows are made and written by threads) on one file handle, finished in any
    order: np.savez's bytes."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(6)
    arrays = arrays_to_save(rng)
    arrays["j"] = rng.integers(0, 2**40, 1001)
    reference = io.BytesIO()
    np.savez(reference, **arrays)
    archive = npz.Archive((name, np.asarray(v).dtype, np.shape(v)) for name, v in arrays.items())
    together = ["i", "cost", "length", "j"]
    path = tmp_path / "a.npz"
    path.write_bytes(b"")
    cuts = [*range(0, 1001, 97), 1001]
    with path.open("r+b") as fh, ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(archive.write_piece, fh.fileno(), a,
                               {name: arrays[name][a:b] for name in together})
                   for a, b in zip(cuts, cuts[1:])]
        pieces = {name: [future.result()[name] for future in futures] for name in together}
        for name in arrays:
            if name not in together:
                pieces[name] = [archive.write_rows(fh, name, 0,
                                                   [np.asarray(arrays[name]).reshape(-1)])]
            pieces[name].insert(0, archive.write_header(fh, name))
        archive.finish(fh, pieces)
    assert path.read_bytes() == reference.getvalue()


def test_npz_with_zip64_records_is_np_savez(monkeypatch):
    """Sizes and offsets past ZIP64_LIMIT and more members than ZIP_FILECOUNT_LIMIT take
    zipfile's zip64 extras and end records: limits lowered here, for np.savez alike."""
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 600)
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 3)
    arrays = arrays_to_save(np.random.default_rng(6))
    reference = io.BytesIO()
    np.savez(reference, **arrays)
    out = io.BytesIO()
    write_npz(out, [(name, np.asarray(v).dtype, np.shape(v), [v]) for name, v in arrays.items()])
    assert out.getvalue() == reference.getvalue()
    assert b"PK\x06\x06" in out.getvalue()  # the zip64 end record was written


def test_npz_pieces_that_miss_rows_are_refused(tmp_path):
    archive = npz.Archive([("i", np.int64, (10,))])
    with (tmp_path / "a.npz").open("w+b") as fh:
        pieces = {"i": [archive.write_header(fh, "i"),
                        archive.write_rows(fh, "i", 0, [np.arange(9)])]}
        with pytest.raises(ValueError, match="i: 200 bytes written, 208 planned"):
            archive.finish(fh, pieces)


def test_edge_list_is_np_savez_of_its_arrays(tmp_path):
    rng = np.random.default_rng(4)
    k = np.sort(rng.choice(45, 20, replace=False))
    i = ((1 + np.sqrt(1 + 8 * k)) / 2).astype(np.int64)
    i = np.where(i * (i - 1) // 2 > k, i - 1, i)
    j = k - i * (i - 1) // 2
    counts = [rng.integers(1, 90, 20).astype(np.int32) for _ in range(4)]
    cost = rng.random(20) * 9
    shuffled = rng.permutation(20)
    columns = dict(zip(("cost", "length", "matches", "aligned", "leading"),
                       [cost[shuffled], *[c[shuffled] for c in counts]]))
    edges = Edges(10, np.array([f"id{x}" for x in range(10)]), i[shuffled], j[shuffled],
                  columns, max_distance=0.5,
                  candidate_identity=0.9, iddef=1, sequences="ab" * 32, shard=1, shards=3,
                  tiling="cd" * 32)
    write_edges(tmp_path / "e.npz", edges)
    reference = io.BytesIO()
    np.savez(reference, n=np.int64(10), ids=edges.ids, i=i, j=j, cost=cost, length=counts[0],
             matches=counts[1], aligned=counts[2], leading=counts[3], distance=cost / counts[0],
             max_distance=np.float64(0.5), candidate_identity=np.float64(0.9),
             iddef=np.int64(1), sequences=np.asarray("ab" * 32), shard=np.int64(1),
             shards=np.int64(3), tiling=np.asarray("cd" * 32),
             scoring=np.asarray("seqdist"))
    assert (tmp_path / "e.npz").read_bytes() == reference.getvalue()
    back = read_edges(tmp_path / "e.npz")
    assert (back.sequences, back.shard, back.shards, back.tiling) == ("ab" * 32, 1, 3, "cd" * 32)


def test_condensed_written_in_pieces_is_np_save(tmp_path):
    for n in (2, 3, 30):
        d = np.random.default_rng(n).random(n * (n - 1) // 2)
        write_condensed(tmp_path / "c.npy", n, d)
        reference = io.BytesIO()
        np.save(reference, seqdist_to_condensed(n, d))
        assert (tmp_path / "c.npy").read_bytes() == reference.getvalue()


# ---------------------------------------------------------------- sorted runs


@pytest.mark.parametrize("budget, window", [(10**9, 1 << 14), (40_000, 64), (3_000, 16)])
def test_spilled_pairs_come_back_sorted_and_whole(tmp_path, monkeypatch, budget, window):
    """Any budget gives the pairs sorted by (i, j) with their columns: one run in memory,
    runs on disk, or runs merged in passes first; the folder goes with the spill."""
    monkeypatch.setattr(runs, "MIN_WINDOW", window)
    rng = np.random.default_rng(budget)
    n = 400
    keys = rng.permutation(n * (n - 1) // 2)[:20_000]
    i = ((1 + np.sqrt(1 + 8 * keys)) / 2).astype(np.int64)
    i = np.where(i * (i - 1) // 2 > keys, i - 1, i)
    j = keys - i * (i - 1) // 2
    values = {"cost": rng.random(keys.size), **{name: rng.integers(0, 2**31, keys.size)
                                                .astype(np.int32)
                                                for name in ("length", "matches", "aligned",
                                                             "leading")}}
    (tmp_path / "out").mkdir()
    with runs.Spill(budget, tmp_path / "out", "edges.npz", LAYOUTS["seqdist"]) as spill:
        for start in range(0, keys.size, 777):  # batches, as the distance stage hands them
            part = slice(start, start + 777)
            spill.add(i[part], j[part], *(v[part] for v in values.values()))
        found = spill.finish()
        assert spill.count == keys.size
        if budget < 10**6:
            assert all(isinstance(run, runs.FileRun) for run in found) and len(found) > 1
            assert len(list((tmp_path / "out").iterdir())) == 1  # the runs' folder
        chunks = list(runs.merged(found, list(values), budget))
        single = runs.fewer_runs(found, budget, spill.scratch, spill.columns, 1)
        assert len(single) == 1  # one run, for readers of a column at a time
        whole = {name: single[0].read(name, 0, single[0].count) for name in ["key", *values]}
    assert list((tmp_path / "out").iterdir()) == []
    order = np.argsort(keys)
    for got in ({name: np.concatenate([c[name] for c in chunks]) for name in ["key", *values]},
                whole):
        assert np.array_equal(got["key"], pair_index(i, j)[order])
        for name, column in values.items():
            assert np.array_equal(got[name], column[order]), name


@pytest.mark.parametrize("budget", [10**9, 40_000])
def test_key_ranges_of_several_spills_hold_every_pair_once_in_order(tmp_path, budget):
    """Three workers' spills cut into ranges by even_splits (Spill.slices): each range's
    slices of every worker's runs, merged, hold exactly the pairs of its range, sorted;
    the ranges follow each other, and the slices are never removed by the merge (other
    workers read the same files)."""
    rng = np.random.default_rng(budget)
    n, workers, ranges = 400, 3, 7
    keys = rng.permutation(n * (n - 1) // 2)[:30_000]
    owner = rng.choice(workers, keys.size, p=[0.6, 0.3, 0.1])  # unequal shares computed
    (tmp_path / "out").mkdir()
    computed = [runs.Spill(budget, tmp_path / "out", "edges.npz", LAYOUTS["seqdist"])
                for _ in range(workers)]
    splits = runs.even_splits(n * (n - 1) // 2, ranges)
    for worker, mine in enumerate(computed):
        part = keys[owner == worker]
        i = ((1 + np.sqrt(1 + 8 * part)) / 2).astype(np.int64)
        i = np.where(i * (i - 1) // 2 > part, i - 1, i)
        mine.add(i, part - i * (i - 1) // 2, part * 0.5,
                 *(np.full(part.size, k, np.int32) for k in range(4)))
    cut = [mine.slices(splits) for mine in computed]
    files = sorted((tmp_path / "out").rglob("*"))
    held = []
    for r in range(ranges):
        slices = [runs.FileRun(Path(path), count, computed[0].columns, first, whole=False)
                  for mine in cut for path, first, count in mine[r]]
        (run,) = runs.fewer_runs(slices, budget, computed[0].scratch, computed[0].columns, 1)
        held.append(run.read("key", 0, run.count))
        assert np.array_equal(run.read("cost", 0, run.count), held[-1] * 0.5)
        low, high = ([0, *splits][r], [*splits, n * (n - 1) // 2][r])
        assert np.array_equal(held[-1], np.sort(keys[(keys >= low) & (keys < high)]))
    assert np.array_equal(np.concatenate(held), np.sort(keys))
    assert set(files) <= set((tmp_path / "out").rglob("*"))  # every slice's files still there
    for mine in computed:
        mine.close()
    assert list((tmp_path / "out").iterdir()) == []


def test_merge_of_runs_dense_in_different_places_reads_parts_within_the_budget(tmp_path):
    """Runs whose keys lie dense each in its own stretch (and sparse elsewhere), as the
    distance stage's runs hold tiles of sequences of like lengths: the merge yields every
    record once in key order, in chunks that each fit the budget's part (its records,
    their concatenation, sort index and reordered copy), and not in many small rounds."""
    rng = np.random.default_rng(7)
    count, run_count, space = 200_000, 12, 10**9
    keys = rng.choice(space, count, replace=False)
    regional = rng.random(count) < 0.8  # most of run r's keys from the r-th stretch
    owner = np.where(regional, keys * run_count // space, rng.integers(0, run_count, count))
    columns = runs.run_columns(LAYOUTS["seqdist"])
    width = runs.record_bytes(columns)
    budget = 20_000 * (3 * width + 8)  # parts of 20,000 records
    with runs.Scratch(tmp_path, "edges.npz") as scratch:
        held = []
        for r in range(run_count):
            mine = np.sort(keys[owner == r])
            held.append(scratch.write_run(mine.size, [
                {"key": mine, **{name: (mine % 1000).astype(dtype) for name, dtype in
                                 columns.items() if name != "key"}}], columns))
        chunks = list(runs.merged(held, list(columns), budget))
    assert all(len(chunk["key"]) <= 20_000 for chunk in chunks)
    assert len(chunks) <= 2 * count // 20_000
    got = np.concatenate([chunk["key"] for chunk in chunks])
    assert np.array_equal(got, np.sort(keys))
    for chunk in chunks:
        for name in columns:
            if name != "key":
                assert np.array_equal(chunk[name], (chunk["key"] % 1000).astype(columns[name]))


@pytest.mark.parametrize("parts", [1, 2, 5, 16])
def test_balanced_splits_cut_runs_into_parts_of_about_equal_counts(tmp_path, parts):
    """Runs in memory and on disk (a slice of one among them), keys crowded in one corner:
    runs.cut at runs.balanced_splits gives every record once, each part's keys below the
    next part's, and parts within 10% of an equal share."""
    rng = np.random.default_rng(parts)
    keys = np.unique(np.concatenate([rng.integers(0, 10**6, 30_000),
                                     rng.integers(10**9, 10**9 + 10**5, 90_000)]))
    rng.shuffle(keys)
    columns = runs.run_columns(LAYOUTS["seqdist"])
    held = []
    with runs.Scratch(tmp_path, "edges.npz") as scratch:
        for k, share in enumerate(np.array_split(keys, 4)):
            share = np.sort(share)
            values = {"key": share, **{name: np.zeros(share.size, dtype)
                                       for name, dtype in columns.items() if name != "key"}}
            held.append(runs.MemoryRun(values, columns) if k % 2
                        else scratch.write_run(share.size, [values], columns))
        held[0] = held[0].part(10, held[0].count - 10)  # a slice of a file's run
        total = sum(run.count for run in held)
        splits = runs.balanced_splits(held, parts)
        assert np.all(np.diff(splits) > 0) and len(splits) == parts - 1
        got = [np.sort(np.concatenate([run.read("key", 0, run.count) for run in part]))
               for part in runs.cut(held, splits)]
        want = np.sort(np.concatenate([run.read("key", 0, run.count) for run in held]))
    assert total == keys.size - 20 and want.size == total
    assert np.array_equal(np.concatenate(got), want)
    assert all(a[-1] < b[0] for a, b in zip(got, got[1:]))
    assert all(abs(len(part) - total / parts) <= 0.1 * total / parts for part in got)


def test_even_splits_cut_every_key_into_ranges_equal_within_one():
    for keys, parts in ((10, 3), (7, 7), (5, 8), (2**40 + 3, 32), (0, 4)):
        splits = runs.even_splits(keys, parts)
        lengths = np.diff([0, *splits, keys])
        assert len(splits) == parts - 1 and lengths.sum() == keys
        assert lengths.min() >= 0 and lengths.max() - lengths.min() <= 1, (keys, parts)


def spill_records(spill, first: int, count: int) -> None:
    """Pairs with keys first..first+count-1 (reversed), as the distance stage hands them."""
    keys = np.arange(first + count - 1, first - 1, -1)
    i = ((1 + np.sqrt(1 + 8 * keys)) / 2).astype(np.int64)
    i = np.where(i * (i - 1) // 2 > keys, i - 1, i)
    spill.add(i, keys - i * (i - 1) // 2, keys * 0.5,
              *(np.full(count, k, np.int32) for k in range(4)))


def test_full_buffer_is_written_while_the_next_one_fills(tmp_path):
    """The computing hands its pairs on while a full buffer is sorted and written by the
    spill's writer thread; every pair is in the runs in order all the same."""
    spill = runs.Spill(1, tmp_path, "edges.npz", LAYOUTS["seqdist"])  # MIN_WINDOW a buffer
    writing, release = threading.Event(), threading.Event()
    write_run = spill.scratch.write_run

    def slow_disk(*args):
        writing.set()
        release.wait(10)
        return write_run(*args)

    spill.scratch.write_run = slow_disk
    spill_records(spill, 0, spill.capacity)  # the first buffer full: off to the writer
    assert writing.wait(5)
    spill_records(spill, spill.capacity, spill.capacity - 1)  # the next fills meanwhile
    assert spill.pending is not None and not spill.pending.done()
    release.set()
    found = spill.finish()
    assert len(found) == 2  # the first buffer's run and the second's
    keys = np.concatenate([chunk["key"] for chunk in runs.merged(found, [], 1)])
    assert np.array_equal(keys, np.arange(2 * spill.capacity - 1))
    spill.close()
    assert list(tmp_path.iterdir()) == []


def test_failed_write_of_the_writer_thread_is_raised_to_the_caller(tmp_path):
    spill = runs.Spill(1, tmp_path, "edges.npz", LAYOUTS["seqdist"])

    def full_disk(*args):
        raise spill.scratch.error(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))

    spill.scratch.write_run = full_disk
    spill_records(spill, 0, spill.capacity)
    with pytest.raises(UserError, match="No space left on device"):
        spill.finish()
    spill.close()
    assert list(tmp_path.iterdir()) == []


def test_spilled_edge_list_is_the_same_bytes(tmp_path, cli):
    """--memory 1 (runs on disk, several of them) gives the bytes of an edge list held in
    memory, and the mothur export the same lines; no run is left behind."""
    fasta = write_fasta(tmp_path / "in.fasta", family(300, 24, seed=5, rate=0.3))
    outputs = {}
    for memory, threads in (("1", 1), ("512", 1), ("512", 4)):  # 4: merged in 4 parts
        out = tmp_path / f"{memory}-{threads}"
        code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu", "--threads",
                           threads, "--max-distance", "1000", "--edges", out / "e.npz",
                           "--mothur", out / "m.dist", "--memory", memory)
        assert code == 0, err
        assert sorted(p.name for p in out.iterdir()) == ["e.npz", "m.dist"]
        outputs[memory, threads] = [(out / name).read_bytes() for name in ("e.npz", "m.dist")]
    assert outputs["1", 1] == outputs["512", 1] == outputs["512", 4]
    edges = read_edges(tmp_path / "1-1" / "e.npz")
    record = runs.record_bytes(runs.run_columns(LAYOUTS["seqdist"])) + runs.SORT_OVERHEAD
    assert len(edges) > 2 * (1 << 20) // record  # more pairs than one run holds
    assert edges.sequences == sequence_digest([f"s{k}" for k in range(300)],
                                              family(300, 24, seed=5, rate=0.3))


# ---------------------------------------------------------------- bins and tiles


@pytest.fixture
def binned(tmp_path, cli):
    """12 sequences of 3 lengths, bins of 1 bp and tiles of about 4 pairs."""
    seqs = family(12, 30, seed=7)
    fasta = write_fasta(tmp_path / "in.fasta", seqs)
    bins, tiles = tmp_path / "bins.tsv", tmp_path / "tiles.tsv"
    assert cli("bin", "-i", fasta, "--bins", bins, "--tiles", tiles, "--bin-width", 1,
               "--tile-pairs", 4)[0] == 0
    reference = tmp_path / "reference.npz"
    assert cli("-q", "distance", "-i", fasta, "--bins", bins, "--tiles", tiles, "--backend",
               "cpu", "--edges", reference)[0] == 0
    return types.SimpleNamespace(fasta=fasta, bins=bins, tiles=tiles, reference=reference)


def distance_with(cli, b, bins, tiles, out):
    return cli("-q", "distance", "-i", b.fasta, "--bins", bins, "--tiles", tiles, "--backend",
               "cpu", "--edges", out)


def edit_table(path, out, change):
    table = pd.read_csv(path, sep="\t")
    change(table)
    if "tile" in table:
        table = table[table["tile"] != -1]
    table.to_csv(out, sep="\t", index=False)
    return out


def repeat_row(t):
    t.loc[len(t)] = t.iloc[3]  # as it stands, tile number 3 again


def drop_last_row(t):
    t.loc[len(t) - 1, "tile"] = -1  # marked, and dropped by edit_table


def shorten_range(t):
    t.loc[2, "a_end"] -= 1


def more_cells(t):
    t.loc[1, "cells"] += 1


def text_cell(t):
    t["pairs"] = t["pairs"].astype(object)
    t.loc[0, "pairs"] = "x"


def unknown_bin(t):
    t.loc[0, "bin_a"] = 99


def shift_bins(t):
    t["min"] += 1
    t["max"] += 1


def one_more(t):
    t.loc[0, "count"] += 1


@pytest.mark.parametrize("which, change, message", [
    ("tiles", repeat_row, "tile 3, expected"),
    ("tiles", drop_last_row, "hold"),
    ("tiles", shorten_range, ":4: "),
    ("tiles", more_cells, ":3: pairs"),
    ("tiles", text_cell, ":2: pairs 'x' is not an integer"),
    ("tiles", unknown_bin, ":2: bins 99"),
    ("bins", shift_bins, "sequences of those lengths"),
    ("bins", one_more, "bins hold 13 sequences"),
])
def test_bad_tiling_is_one_line(tmp_path, cli, binned, which, change, message):
    bad = edit_table(getattr(binned, which), tmp_path / f"bad-{which}.tsv", change)
    files = {"bins": binned.bins, "tiles": binned.tiles, which: bad}
    code, out, err = distance_with(cli, binned, files["bins"], files["tiles"], tmp_path / "e.npz")
    assert (code, out) == (2, "")
    one_line(err, f"seqpairs: error: {bad}", message)
    assert not (tmp_path / "e.npz").exists()


def test_duplicated_tiles_row_renumbered_is_refused(tmp_path, cli, binned):
    """A tiles row twice, even renumbered so that the numbers run on, covers pairs twice."""
    table = pd.read_csv(binned.tiles, sep="\t")
    table = pd.concat([table, table.iloc[[2]]], ignore_index=True)
    table["tile"] = range(len(table))
    table.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    code, _, err = distance_with(cli, binned, binned.bins, tmp_path / "t.tsv", tmp_path / "e.npz")
    assert code == 2
    one_line(err, "are in 2 tiles, not in one")


def test_every_flipped_byte_of_tiles_is_refused_or_harmless(tmp_path, cli, binned):
    """Each byte of tiles.tsv flipped in turn: one error line, or (a flip pandas reads as
    the same numbers, such as a blank before a number) exactly the reference edge list."""
    text = binned.tiles.read_bytes()
    reference = binned.reference.read_bytes()
    refused = 0
    for k in range(len(text)):
        damaged = bytearray(text)
        damaged[k] ^= 0x04  # '0' <-> '4', '\t' <-> '\r', 't' <-> 'p', ...
        (tmp_path / "t.tsv").write_bytes(bytes(damaged))
        out = tmp_path / "e.npz"
        code, _, err = distance_with(cli, binned, binned.bins, tmp_path / "t.tsv", out)
        if code:
            assert code == 2
            one_line(err)
            assert not out.exists()
            refused += 1
        else:
            assert out.read_bytes() == reference, k
            out.unlink()
    assert refused > 0.9 * len(text)


# ---------------------------------------------------------------- the edge list's origin


@pytest.fixture
def made(tmp_path, cli):
    """An edge list of 20 related sequences, and the same ids with one sequence changed."""
    seqs = family(20, 40, seed=9)
    fasta = write_fasta(tmp_path / "in.fasta", seqs)
    edges = tmp_path / "e.npz"
    code, _, err = cli("-q", "distance", "-i", fasta, "--backend", "cpu", "--max-distance", "0.3",
                       "--candidate-identity", "0.8", "--edges", edges)
    assert code == 0, err
    changed = list(seqs)
    changed[5] = changed[5][:-1] + ("A" if changed[5][-1] != "A" else "C")
    other = write_fasta(tmp_path / "changed.fasta", changed)
    return types.SimpleNamespace(fasta=fasta, edges=edges, other=other, seqs=seqs)


def test_filter_refuses_an_edge_list_of_changed_sequences(tmp_path, cli, made):
    for fasta, code_wanted in ((made.fasta, 0), (made.other, 2)):
        code, _, err = cli("-q", "filter", "-i", fasta, "--distances", made.edges, "--identity",
                           "0.9", "-o", tmp_path / "kept.tsv")
        assert code == code_wanted, err
    one_line(err, f"{made.edges}: made from other sequences", "same ids, changed sequences")
    assert (tmp_path / "kept.tsv").exists()  # the run on the right FASTA only


def test_cluster_refuses_an_edge_list_of_changed_sequences(tmp_path, cli, made):
    # the FASTA's records may come in another order: still the same sequences
    ids = [f"s{k}" for k in range(20)]
    reordered = write_fasta(tmp_path / "reordered.fasta", made.seqs[::-1], ids[::-1])
    for fasta, code_wanted in ((reordered, 0), (made.other, 2)):
        code, _, err = cli("-q", "cluster", "-i", made.edges, "--linkage", "complete", "--cutoff", "0.03", "--fasta",
                           fasta, "-o", tmp_path / f"otus-{code_wanted}")
        assert code == code_wanted, err
    one_line(err, f"{made.edges}: made from other sequences than {made.other}")
    assert not list(tmp_path.glob("otus-2*"))


def test_mothur_export_refuses_an_edge_list_of_changed_sequences(tmp_path, made):
    script = REPO / "workflow" / "scripts" / "mothur_export.py"
    for fasta, fails in ((made.fasta, False), (made.other, True)):
        job = types.SimpleNamespace(input=types.SimpleNamespace(edges=str(made.edges),
                                                                unique=str(fasta)),
                                    output=[str(tmp_path / "m.dist")],
                                    log=[str(tmp_path / "m.log")])
        if fails:
            with pytest.raises(UserError, match="made from other sequences"):
                runpy.run_path(str(script), init_globals={"snakemake": job})
        else:
            runpy.run_path(str(script), init_globals={"snakemake": job})
            lines = (tmp_path / "m.dist").read_text().splitlines()
            edges = read_edges(made.edges)
            assert len(lines) == int((edges.distance <= 0.3).sum()) > 0


def test_report_refuses_an_edge_list_of_changed_sequences(tmp_path, made):
    from seqpairs.report.summary import Inputs, report

    assert main_bins(made.other, tmp_path) == 0
    inputs = Inputs("report.tsv", str(made.other), str(tmp_path / "bins.tsv"),
                    str(tmp_path / "tiles.tsv"), str(made.edges), "kept.tsv", "membership.tsv")
    with pytest.raises(UserError, match=f"{made.edges}: made from other sequences than"):
        report("d", inputs, tmp_path / "out")


def main_bins(fasta, folder):
    from seqpairs.cli import main

    return main(["-q", "bin", "-i", str(fasta), "--bins", str(folder / "bins.tsv"),
                 "--tiles", str(folder / "tiles.tsv")])


def test_a_shard_is_no_whole_edge_list(tmp_path, cli, made):
    shard = tmp_path / "shard.npz"
    assert cli("-q", "distance", "-i", made.fasta, "--backend", "cpu", "--max-distance", "0.3",
               "--shard", "1/2", "--edges", shard)[0] == 0
    code, _, err = cli("-q", "filter", "-i", made.fasta, "--distances", shard, "--identity",
                       "0.9", "-o", tmp_path / "kept.tsv")
    assert code == 2
    one_line(err, "shard 1 of 2 of an edge list")


def test_merge_refuses_shards_of_other_tilings_or_sequences(tmp_path, cli, made):
    common = ["-q", "distance", "-i", made.fasta, "--backend", "cpu", "--max-distance", "0.3"]
    paths = {}
    for name, extra in (("a0", ["--shard", "0/2"]), ("a1", ["--shard", "1/2"])):
        paths[name] = tmp_path / f"{name}.npz"
        assert cli(*common, *extra, "--edges", paths[name])[0] == 0
    # shard 1 of 2 of another tiling (bins of 1 bp)
    assert main_bins(made.fasta, tmp_path) == 0
    table = pd.read_csv(tmp_path / "bins.tsv", sep="\t")
    assert cli("-q", "bin", "-i", made.fasta, "--bins", tmp_path / "b1.tsv", "--tiles",
               tmp_path / "t1.tsv", "--bin-width", 1, "--tile-pairs", 5)[0] == 0
    assert len(pd.read_csv(tmp_path / "b1.tsv", sep="\t")) > len(table)
    paths["b1"] = tmp_path / "b1.npz"
    assert cli(*common, "--bins", tmp_path / "b1.tsv", "--tiles", tmp_path / "t1.tsv",
               "--shard", "1/2", "--edges", paths["b1"])[0] == 0
    # shard 1 of 2 of other sequences
    paths["c1"] = tmp_path / "c1.npz"
    assert cli("-q", "distance", "-i", made.other, "--backend", "cpu", "--max-distance", "0.3",
               "--shard", "1/2", "--edges", paths["c1"])[0] == 0
    for shards, message in ((["a0", "b1"], "shard 1 of 2, but"),
                           (["a0", "c1"], "made from other sequences or settings")):
        code, _, err = cli("merge", "-i", *[paths[k] for k in shards], "--edges",
                           tmp_path / "m.npz")
        assert code == 2
        one_line(err, message)
    assert cli("merge", "-i", paths["a1"], paths["a0"], "--edges", tmp_path / "m.npz")[0] == 0
    whole = tmp_path / "whole.npz"
    assert cli(*common, "--edges", whole)[0] == 0
    assert (tmp_path / "m.npz").read_bytes() == whole.read_bytes()


# ---------------------------------------------------------------- damaged edge lists


def test_every_flipped_byte_of_an_edge_list_is_refused_or_harmless(tmp_path, made):
    """Each byte flipped in turn (zip headers, .npy headers, data, CRCs): one error line,
    or (bytes nothing reads, such as the zip's version fields) the same edge list."""
    data = made.edges.read_bytes()
    good = read_edges(made.edges)
    refused = 0
    for k in range(len(data)):
        damaged = bytearray(data)
        damaged[k] ^= 0x10
        (tmp_path / "x.npz").write_bytes(bytes(damaged))
        try:
            edges = read_edges(tmp_path / "x.npz")
        except UserError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(tmp_path / "x.npz"))
            refused += 1
            continue
        for name in ("n", "ids", "i", "j", "cost", "length", "matches", "aligned", "leading",
                     "max_distance", "iddef", "sequences", "shard", "shards", "tiling"):
            assert np.array_equal(getattr(edges, name), getattr(good, name)), (k, name)
    assert refused > 0.9 * len(data)


def test_truncated_edge_list_is_one_line(tmp_path, made, cli):
    data = made.edges.read_bytes()
    for size in (0, 10, len(data) // 2, len(data) - 1):
        (tmp_path / "t.npz").write_bytes(data[:size])
        code, _, err = cli("-q", "filter", "-i", made.fasta, "--distances", tmp_path / "t.npz",
                           "--identity", "0.9", "-o", tmp_path / "kept.tsv")
        assert code == 2
        one_line(err, str(tmp_path / "t.npz"))


def test_edge_list_with_pairs_out_of_order_is_refused(tmp_path, made):
    with np.load(made.edges) as z:
        arrays = dict(z)
    for name in ("i", "j", "cost", "length", "matches", "aligned", "leading", "distance"):
        arrays[name] = arrays[name][::-1].copy()
    np.savez(tmp_path / "r.npz", **arrays)
    with pytest.raises(UserError, match="not in \\(i, j\\) order"):
        read_edges(tmp_path / "r.npz")
    np.savez(tmp_path / "old.npz", **{k: v for k, v in dict(np.load(made.edges)).items()
                                      if k not in ("sequences", "shard", "shards", "tiling")})
    with pytest.raises(UserError, match="does not say what it was made from"):
        read_edges(tmp_path / "old.npz")


# ---------------------------------------------------------------- seqpairs merge


@pytest.fixture
def sharded(tmp_path, cli):
    """5 shards of an edge list of 60 sequences (every pair kept), and the whole one."""
    fasta = write_fasta(tmp_path / "in.fasta", family(60, 30, seed=11, rate=0.2))
    common = ["-q", "distance", "-i", fasta, "--backend", "cpu", "--bins", tmp_path / "b.tsv",
              "--tiles", tmp_path / "t.tsv"]
    assert cli("bin", "-i", fasta, "--bins", tmp_path / "b.tsv", "--tiles", tmp_path / "t.tsv",
               "--bin-width", 1, "--tile-pairs", 30)[0] == 0
    shards = [tmp_path / f"{k}.npz" for k in range(5)]
    for k, path in enumerate(shards):
        assert cli(*common, "--shard", f"{k}/5", "--edges", path)[0] == 0
    assert all(len(read_edges(path)) for path in shards)
    whole = tmp_path / "whole.npz"
    assert cli(*common, "--edges", whole)[0] == 0
    return types.SimpleNamespace(shards=shards, whole=whole)


def test_merge_within_a_small_budget_is_the_whole_edge_list(tmp_path, cli, sharded):
    """--memory 1: runs merged in passes of two (the fewest a merge reads at once)."""
    out = tmp_path / "out" / "m.npz"
    code, _, err = cli("merge", "-i", *sharded.shards[::-1], "--edges", out, "--memory", 1)
    assert code == 0, err
    assert out.read_bytes() == sharded.whole.read_bytes()
    assert list(out.parent.iterdir()) == [out]  # no runs left


def test_merge_refuses_a_damaged_shard_or_a_pair_twice(tmp_path, cli, sharded):
    data = bytearray(sharded.shards[2].read_bytes())
    with np.load(sharded.shards[2]) as z:
        offset = z.zip.getinfo("cost.npy").header_offset
    data[offset + 200] ^= 0x01  # in the cost member's data: only its CRC tells
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(bytes(data))
    out = tmp_path / "out" / "m.npz"
    code, _, err = cli("merge", "-i", *sharded.shards[:2], damaged, *sharded.shards[3:],
                       "--edges", out)
    assert code == 2
    one_line(err, f"{damaged}: damaged edge list", "CRC")
    # shard 0's pairs again, as shard 1 (a valid file): a pair in two shards
    with np.load(sharded.shards[0]) as z:
        arrays = dict(z)
    arrays["shard"] = np.int64(1)
    np.savez(tmp_path / "again.npz", **arrays)
    code, _, err = cli("merge", "-i", sharded.shards[0], tmp_path / "again.npz",
                       *sharded.shards[2:], "--edges", out)
    assert code == 2
    one_line(err, "overlap")
    assert list((tmp_path / "out").iterdir()) == []


# ---------------------------------------------------------------- TSV tables

TEXTS = st.text(alphabet=st.sampled_from(list('ab\t"\n\r ,é0')), max_size=6)
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [-0.0, 0.0, 1e16, 1e-5, 5e-324, 100.0, 1e15, 0.1 + 0.2])


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(0, 12), data=st.data())
def test_tsv_is_pandas_to_csv(tmp_path_factory, rows, data):
    """write_tsv's own writer gives pandas' to_csv bytes: floats (NaN, -0.0, infinities,
    exponents), integers (small and huge ranges), booleans, strings to be quoted, missing
    strings, and any column count; other types go to pandas itself."""
    kinds = data.draw(st.lists(st.sampled_from(["int", "wide", "u8", "float", "bool", "str",
                                                "maybe", "int32"]), min_size=0, max_size=5))
    columns = {}
    for k, kind in enumerate(kinds):
        values = {
            "int": st.integers(-5, 300), "wide": st.integers(-2**62, 2**62),
            "u8": st.integers(0, 255), "int32": st.integers(-2**31, 2**31 - 1),
            "float": FLOATS, "bool": st.booleans(), "str": TEXTS,
            "maybe": TEXTS | st.none(),
        }[kind]
        drawn = data.draw(st.lists(values, min_size=rows, max_size=rows))
        dtype = {"u8": np.uint8, "int32": np.int32, "int": np.int64, "wide": np.int64,
                 "float": np.float64, "bool": bool}.get(kind, object)
        name = data.draw(st.sampled_from([f"c{k}", f'c"{k}', f"c\t{k}", f"c {k}"]))
        columns[name] = np.array(drawn, dtype=dtype)
    table = pd.DataFrame(columns)
    path = tmp_path_factory.mktemp("tsv") / "t.tsv"
    na_rep = data.draw(st.sampled_from(["", "NaN"]))  # psse writes NaN
    write_tsv(path, table, na_rep)
    reference = io.StringIO()
    table.to_csv(reference, sep="\t", index=False, na_rep=na_rep)
    assert path.read_bytes() == reference.getvalue().encode()


def test_tsv_writes_a_large_table_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "ROWS", 7)
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"query": [f"s{k}" for k in range(100)],
                          "id": 100.0 * rng.integers(50, 100, 100) / 100,
                          "n": rng.integers(0, 10, 100)})
    write_tsv(tmp_path / "t.tsv", table)
    assert (tmp_path / "t.tsv").read_text() == table.to_csv(sep="\t", index=False)
