"""The bad-input corpus (tests/data/bad/): every file has a documented outcome, and gets it.

OUTCOMES.tsv says, per case, either the one error line `seqpairs ingest` must print (exit
status 2, no traceback, no outputs left behind) or the report counts of the normalisation.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

BAD = Path(__file__).resolve().parent / "data" / "bad"
OUTCOMES = pd.read_csv(BAD / "OUTCOMES.tsv", sep="\t", comment="#", dtype=str)
# Report counts that must be 0 unless a case names them.
ZERO_UNLESS_NAMED = ["duplicate", "dropped_ambiguous", "dropped_too_short", "dropped_too_long",
                     "lowercase", "rna", "degapped"]


def ingest(cli, tmp_path, files, options=()):
    out = tmp_path / "out"
    args = ["ingest", "-o", out / "unique.fasta", "--abundance", out / "abundance.tsv",
            "--report", out / "report.tsv", *options]
    for name in files:
        args += ["-i", name]
    return (*cli(*args), out)


def test_every_file_has_an_outcome():
    named = {name for files in OUTCOMES["files"] for name in files.split(",")}
    present = {p.name for p in BAD.iterdir() if p.name != "OUTCOMES.tsv"}
    assert named == present


@pytest.mark.parametrize("case", OUTCOMES.itertuples(index=False),
                         ids=[f"{r.files} {r.options}".strip(" -") for r in OUTCOMES.itertuples()])
def test_outcome(case, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(BAD)  # error lines name the files as given
    options = [] if case.options == "-" else case.options.split()
    code, stdout, stderr, out = ingest(cli, tmp_path, case.files.split(","), options)
    assert stdout == ""
    if case.outcome == "error":
        assert (code, stderr) == (2, f"seqpairs: error: {case.expected}\n")
        assert not out.exists() or not any(out.iterdir())
        return
    assert case.outcome == "ok"
    assert code == 0, stderr
    report = pd.read_csv(out / "report.tsv", sep="\t").set_index("sample").loc["all"]
    expected = dict(item.split("=") for item in case.expected.split())
    for key in ZERO_UNLESS_NAMED:
        expected.setdefault(key, "0")
    assert {key: int(report[key]) for key in expected} == {k: int(v) for k, v in expected.items()}
    dropped = report[[c for c in report.index if c.startswith("dropped_")]].sum()
    assert report["records"] == report["kept"] + dropped


@pytest.mark.parametrize("name", ["crlf.fasta", "crlf.fastq"])
def test_crlf_reads_as_lf(name, cli, tmp_path):
    lf = tmp_path / name
    lf.write_bytes((BAD / name).read_bytes().replace(b"\r\n", b"\n"))
    assert b"\r" not in lf.read_bytes() and b"\r" in (BAD / name).read_bytes()
    code_crlf, *_, out_crlf = ingest(cli, tmp_path / "a", [str(BAD / name)])
    code_lf, *_, out_lf = ingest(cli, tmp_path / "b", [str(lf)])
    assert code_crlf == code_lf == 0
    for output in ("unique.fasta", "abundance.tsv"):
        assert (out_crlf / output).read_bytes() == (out_lf / output).read_bytes()
