"""Progress people can see: a line at once with the size of the work, periodic lines with
the time left (in rule logs), a bar on a terminal, and what ingest and binning read and
kept."""
import dataclasses
import io
import logging

import numpy as np

from seqpairs import backends, progress, scoring
from seqpairs.pairs import distance, tiling
from test_prune import community, sequence_set


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_lines_say_the_size_at_once_then_the_time_left(caplog):
    caplog.set_level(logging.INFO)
    log = logging.getLogger("seqpairs.test")
    work = progress.Progress(log, "work", 100.0, "cells", every=0.0, stream=io.StringIO())
    assert caplog.messages == ["work: 100 cells to do"]
    work.update(40.0)
    work.update(60.0)
    work.finish()
    assert "40% (40/100 cells)" in caplog.messages[1] and "left" in caplog.messages[1]
    assert caplog.messages[-1].startswith("work: done, 100 cells in ")


def test_one_of_several_workers_says_its_part_of_the_job_without_a_time_left(caplog):
    """Under MPI a rank pulls its work as it goes: how much it will do is not known, so
    its lines give what it did of the job's work and no time left."""
    caplog.set_level(logging.INFO)
    work = progress.Progress(logging.getLogger("seqpairs.test"), "work", 100.0, "cells",
                             every=0.0, stream=io.StringIO(), eta=False)
    work.update(5.0)
    assert "5% (5/100 cells)" in caplog.messages[1]
    assert caplog.messages[1].endswith("of the job's") and "left" not in caplog.messages[1]


def test_a_terminal_gets_a_bar_instead_of_lines(caplog):
    caplog.set_level(logging.INFO)
    terminal = Terminal()
    work = progress.Progress(logging.getLogger("seqpairs.test"), "work", 10.0, "pairs",
                             every=0.0, stream=terminal)
    for _ in range(10):
        work.update(1.0)
    work.finish()
    assert "\r" in terminal.getvalue() and "100% (10/10 pairs)" in terminal.getvalue()
    assert "#" * progress.BAR in terminal.getvalue() and terminal.getvalue().endswith("\n")
    assert len(caplog.messages) == 2  # the first and the last line only


def test_the_distance_stage_reports_each_step(caplog, monkeypatch):
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    seqs = sequence_set(community(1, 4, 10, 150, 0.1))
    bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
    tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
    small_steps = dataclasses.replace(backends.select("cpu"), cells_per_call=2e5)
    distance.compute(seqs, bins, tiles, backend=small_steps, scheme=scoring.get("seqdist"),
                     max_distance=0.1, candidate_identity=0.97)
    lines = [m for m in caplog.messages if m.startswith("distance: ")]
    assert lines[0].startswith("distance: ") and lines[0].endswith("cells to do")
    steps = [m for m in lines if "left" in m]
    assert len(steps) >= 10 and "GCUPS" in steps[0]  # 780 pairs of ~150 bp in 2e5-cell steps
    assert lines[-1].startswith("distance: done")


def test_steps_cover_every_pair_once():
    cells = np.array([5, 1, 7, 3, 3, 9, 1, 1])
    for most in (1, 4, 8, 10, 100):
        runs = list(distance.steps(cells, most))
        assert [a for a, _ in runs] == [0] + [b for _, b in runs[:-1]] and runs[-1][1] == 8
        assert all(cells[a:b].sum() <= most or b == a + 1 for a, b in runs)
    assert list(distance.steps(cells, float("inf"))) == [(0, 8)]  # no limit: one run


def test_ingest_and_binning_say_what_they_read_and_kept(tmp_path, cli):
    reads = tmp_path / "s.fasta"
    reads.write_text(">a\nACGTACGT\n>b\nACGTACGT\n>c\nACGNNCGT\n>d\nAC\n")
    code, _, err = cli("ingest", "-i", f"s1={reads}", "-o", tmp_path / "u.fasta",
                       "--abundance", tmp_path / "a.tsv", "--report", tmp_path / "r.tsv",
                       "--min-length", "3")
    assert code == 0, err
    assert (f"sample s1 ({reads}): 4 records read, 2 kept (1 new sequences, 1 duplicates), "
            "dropped 1 ambiguous, 1 too short, 0 too long") in err
    assert "1 unique sequences" in err
    code, _, err = cli("binning", "-i", tmp_path / "u.fasta", "--bins", tmp_path / "b.tsv",
                       "--tiles", tmp_path / "t.tsv")
    assert code == 0, err
    assert "1 sequences of 8 to 8 bp in 1 bins of 25 bp; 0 pairs in 0 tiles" in err
