"""`seqpairs report`: summary values against the stage outputs, PNGs, funnel, errors."""
import html
import re
import subprocess
import sys

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from seqpairs.cli import main
from seqpairs.errors import UserError
from seqpairs.report import summary as report

DATASET = "sim.a"  # a dot, as dataset names may have: sim.a.tsv is not sim.tsv
PNGS = ("lengths.png", "distances.png", "funnel.png", "clusters.png")


def write_times(path, *rows):
    """A times table as the workflow's report_times writes it: (rule, seconds, edge_list)."""
    path.write_text("rule\tseconds\tedge_list\n" + "".join(
        f"{rule}\t{seconds}\t{edge_list}\n" for rule, seconds, edge_list in rows))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The real stages on a few simulated reads, and hand-written times tables."""
    d = tmp_path_factory.mktemp("report")

    def stage(*argv):
        assert main(["-q", *map(str, argv)]) == 0

    stage("simulate", "-o", d / "sim", "--references", 4, "--samples", 2, "--reads", 40,
          "--length", 100, "--seed", 3)
    stage("ingest", "-i", f"s1={d}/sim/sample1.fastq.gz", "-i", f"s2={d}/sim/sample2.fastq.gz",
          "-o", d / "unique.fasta", "--abundance", d / "abundance.tsv", "--report",
          d / "report.tsv")
    stage("binning", "-i", d / "unique.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv",
          "--bin-width", 2, "--tile-pairs", 100)
    # a process of its own, as a workflow job: its log tells the report what ran
    with open(d / "distance.log", "w") as log:
        subprocess.run([sys.executable, "-m", "seqpairs", "distance", "-i", d / "unique.fasta",
                        "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv", "--backend", "cpu",
                        "--threads", "1", "--max-distance", "0.1", "--candidate-identity",
                        "0.97", "--iddef", "2", "--edges", d / "edges.npz"],
                       stderr=log, check=True)
    stage("filter", "-i", d / "unique.fasta", "--distances", d / "edges.npz", "--identity", 0.97,
          "--iddef", 2, "--threads", 1, "-o", d / "kept.tsv")
    # alpha between the pairs' p-values, so that some are significant and some not
    stage("psse", "-i", d / "unique.fasta", "--pairs", d / "kept.tsv", "-o", d / "psse.tsv",
          "--shuffles", 20, "--alpha", 1e-60, "--backend", "cpu", "--threads", 1)
    stage("cluster", "--linkage", "greedy", "--identity", 0.97, "--pairs", d / "kept.tsv",
          "--fasta", d / "unique.fasta", "--abundance", d / "abundance.tsv", "-o", d / "otus")
    write_times(d / "times.tsv", ("ingest", 0.5, False), ("binning", 0.25, False),
                ("distance", 3.0, True), ("filter", 1.25, False), ("psse", 0.75, False),
                ("cluster", 0.125, False))
    write_times(d / "sharded.tsv", ("ingest", 0.5, False), ("distance_shard", 4.0, True),
                ("distance_merge", 0.5, True), ("distance_export", 7.0, False))
    return d


def options(d, out, *extra):
    return ["report", "--dataset", DATASET, "--ingest-report", d / "report.tsv",
            "--unique", d / "unique.fasta", "--bins", d / "bins.tsv", "--tiles", d / "tiles.tsv",
            "--edges", d / "edges.npz", "--kept", d / "kept.tsv", "--psse", d / "psse.tsv",
            "--membership", d / "otus.membership.tsv", "--otu-table", d / "otus.otu_table.tsv",
            "--times", d / "times.tsv", "--distance-log", d / "distance.log", "-o", out,
            *extra]


def summary_of(cli, argv, out):
    code, _, err = cli(*argv)
    assert code == 0, err
    table = pd.read_csv(out / "summary.tsv", sep="\t", dtype=str)
    assert list(table.columns) == ["item", "value"]
    return dict(zip(table["item"], table["value"]))


def test_summary_values(cli, run_dir, tmp_path):
    d = run_dir
    got = summary_of(cli, options(d, tmp_path), tmp_path)
    ingest = pd.read_csv(d / "report.tsv", sep="\t", dtype=str, keep_default_na=False)
    n = (d / "unique.fasta").read_text().count(">")
    tiles = pd.read_csv(d / "tiles.tsv", sep="\t")
    psse = pd.read_csv(d / "psse.tsv", sep="\t")
    significant = int((psse["significant"] == True).sum())  # noqa: E712
    assert 0 < significant < len(psse)  # so that counting the wrong rows shows
    membership = pd.read_csv(d / "otus.membership.tsv", sep="\t")
    expected = {
        "records": ingest.loc[ingest["sample"] == "all", "records"].item(),
        "unique sequences": str(n),
        "pairs computed": str(n * (n - 1) // 2),
        "candidates": str(len(np.load(d / "edges.npz")["i"])),
        "kept": str(len((d / "kept.tsv").read_text().splitlines()) - 1),
        "significant": str(significant),
        "clusters": str(membership["cluster"].nunique()),
        "distance time (s)": "3.00",
        "distance cells": str(tiles["cells"].sum()),
        "time ingest (s)": "0.50",
        "time binning (s)": "0.25",
        "time distance (s)": "3.00",
        "time filter (s)": "1.25",
        "time psse (s)": "0.75",
        "time cluster (s)": "0.12",
        "backend": "cpu",
        "GPUs": "0",
    }
    gcups = float(got.pop("distance GCUPS"))
    assert got == expected
    assert list(got) == list(expected)  # rows in this order
    assert gcups == pytest.approx(tiles["cells"].sum() / 3.0 / 1e9, rel=1e-3)


def test_sharded_distance_time(cli, run_dir, tmp_path):
    argv = replace(options(run_dir, tmp_path), "--times", run_dir / "sharded.tsv")
    got = summary_of(cli, argv, tmp_path)
    # the edge-list rules (the shards and the merge), not the export
    assert got["distance time (s)"] == "4.50"
    assert (got["time distance_shard (s)"], got["time distance_merge (s)"],
            got["time distance_export (s)"]) == ("4.00", "0.50", "7.00")
    assert "time distance (s)" not in got
    cells = int(got["distance cells"])
    assert float(got["distance GCUPS"]) == pytest.approx(cells / 4.5 / 1e9, rel=1e-3)


def test_without_psse_otu_table_or_times(cli, run_dir, tmp_path):
    argv = options(run_dir, tmp_path)
    for option in ("--psse", "--otu-table", "--times"):
        k = argv.index(option)
        del argv[k:k + 2]
    code, _, err = cli(*argv)
    assert code == 0, err
    items = pd.read_csv(tmp_path / "summary.tsv", sep="\t")["item"].tolist()
    assert "significant" not in items and "clusters" in items
    assert not [item for item in items if "time" in item or "GCUPS" in item]


def test_pngs_are_images_and_the_same_bytes_twice(cli, run_dir, tmp_path):
    for out in (tmp_path / "one", tmp_path / "two"):
        code, _, err = cli(*options(run_dir, out))
        assert code == 0, err
    for name in PNGS:
        image = matplotlib.image.imread(tmp_path / "one" / name)
        assert image.shape[:2] == (400, 600)  # 6 x 4 in at 100 dpi
        assert image[..., :3].std() > 0  # not blank
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_summary_html_is_the_summary_one_row_a_line(cli, run_dir, tmp_path):
    """summary.html (what Snakemake's report shows) holds summary.tsv's rows, each on a
    line of its own (tests/test_determinism.py drops the measured ones by line), escaped."""
    code, _, err = cli(*options(run_dir, tmp_path))
    assert code == 0, err
    table = pd.read_csv(tmp_path / "summary.tsv", sep="\t", dtype=str, keep_default_na=False)
    lines = (tmp_path / "summary.html").read_text(encoding="ascii").splitlines()
    rows = [re.fullmatch(r"<tr><td>(.*)</td><td>(.*)</td></tr>", line) for line in lines]
    assert [tuple(map(html.unescape, row.groups())) for row in rows if row] == \
        list(zip(table["item"], table["value"]))
    assert f"<title>Run summary of dataset {DATASET}</title>" in lines
    odd = pd.DataFrame([("QC abundance >= 2: unique", "<3 & é")], columns=["item", "value"])
    page = report.summary_html("a<b>", odd)
    assert "<tr><td>QC abundance &gt;= 2: unique</td><td>&lt;3 &amp; é</td></tr>" in page
    assert "Run summary of dataset a&lt;b&gt;" in page and "<b>" not in page


def test_funnel_bars():
    assert report.funnel(10, 6, 4, 1) == [("pairs computed", 10), ("candidates", 6),
                                          ("kept", 4), ("significant", 1)]
    assert report.funnel(10, 6, 4, None) == [("pairs computed", 10), ("candidates", 6),
                                             ("kept", 4)]


def test_cluster_sizes(run_dir, tmp_path):
    d = run_dir
    fasta = (d / "unique.fasta").read_text().split(">")[1:]
    ids = [r.split(";size=")[0] for r in fasta]
    sizes = np.array([int(r.split(";size=")[1].split("\n")[0]) for r in fasta])
    reads = report.cluster_sizes(d / "otus.membership.tsv", d / "otus.otu_table.tsv", ids,
                                 sizes, "unique.fasta")
    table = pd.read_csv(d / "otus.otu_table.tsv", sep="\t")
    assert reads.tolist() == sorted(table["total"], reverse=True)
    assert reads.sum() == int(pd.read_csv(d / "report.tsv", sep="\t")["abundance_kept"].iloc[-1])
    # by hand: cluster 2 holds more reads than cluster 1 (numbered by centroid abundance)
    (tmp_path / "m.tsv").write_text("id\tcluster\na\t1\nb\t2\nc\t2\n")
    reads = report.cluster_sizes(tmp_path / "m.tsv", None, ["c", "b", "a"], np.array([4, 3, 5]),
                                 "x.fasta")
    assert reads.tolist() == [7, 5]
    with pytest.raises(UserError, match="cluster totals differ"):
        report.cluster_sizes(d / "otus.membership.tsv", d / "otus.otu_table.tsv", ids,
                             sizes + 1, "unique.fasta")


def replace(argv, option, value):
    argv = list(argv)
    argv[argv.index(option) + 1] = value
    return argv


@pytest.mark.parametrize("option, content, message", [
    ("--ingest-report", None, "no such file"),
    ("--unique", None, "no such file"),
    ("--bins", None, "no such file"),
    ("--tiles", None, "no such file"),
    ("--edges", None, "no such file"),
    ("--kept", None, "no such file"),
    ("--psse", None, "no such file"),
    ("--membership", None, "no such file"),
    ("--otu-table", None, "no such file"),
    ("--times", None, "no such file"),
    ("--times", "rule\tseconds\n", "no column edge_list"),
    ("--times", "rule\tseconds\tedge_list\nfilter\tslow\tFalse\n", ":2: seconds 'slow' is not a number"),
    ("--times", "rule\tseconds\tedge_list\ndistance\t1\tyes\n", ":2: edge_list must be True or False"),
    ("--ingest-report", "sample\trecords\ns1\t5\n", "no single row `all`"),
    ("--ingest-report", "sample\trecords\nall\tfive\n", "records 'five' is not an integer"),
    ("--unique", "", "no FASTA records"),
    ("--bins", "bin\tmin\tmax\tcount\n0\t1\t2\t3\n", "bins hold 3 sequences"),
    ("--tiles", "tile\tpairs\tcells\n0\t1\t5\n", "no column bin_a"),
    ("--edges", "not an archive", "not an .npz file"),
    ("--kept", "", "not a TSV file"),
    ("--kept", "a\tb\n", "no column query, target"),
    ("--psse", "significant\nTrue\nyes\n", ":3: significant 'yes' is not True or False"),
    ("--membership", "id\tcluster\nx\t1\n", "no id"),
    ("--otu-table", "cluster\ttotal\n1\t5\n", "cluster totals differ"),
])
def test_bad_inputs(cli, run_dir, tmp_path, option, content, message):
    bad = tmp_path / "bad"
    if content is not None:
        bad.write_text(content)
    code, out, err = cli(*replace(options(run_dir, tmp_path / "out"), option, bad))
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith(f"seqpairs: error: {bad}")
    assert message in err
    assert not (tmp_path / "out").exists()  # nothing written


RANK_LOG = ("2026-11-25 21:07:14,331 rank {k}/{n} seqpairs.distance: {backend} backend{beside}: "
            "120 pairs in 3 tiles\n")


@pytest.mark.parametrize("logs, backend, gpus", [
    ([[("gpu", 0, 2), ("gpu", 1, 2)]], "gpu", "2"),  # two MPI ranks, a GPU each
    ([[("gpu", 0, 2), ("gpu", 1, 2)], [("cpu", 0, 1)]], "cpu+gpu", "2"),  # shards differ
    ([[("cpu", 0, 4)] * 1 + [("cpu", k, 4) for k in range(1, 4)]], "cpu", "0"),
    ([[("gpu", 0, 1, " with 15 cpu threads beside it")]], "cpu+gpu", "1"),  # hybrid
])
def test_backend_and_gpus_are_what_the_distance_logs_say(cli, run_dir, tmp_path, logs, backend,
                                                         gpus):
    paths = []
    for number, ranks in enumerate(logs):
        path = tmp_path / f"shard{number}.log"
        path.write_text("".join(RANK_LOG.format(backend=b, k=k, n=n, beside=(*rest, "")[0])
                                for b, k, n, *rest in ranks)
                        + "2026-11-25 21:07:15,000 seqpairs.distance: gpu backend: 1 pairs\n")
        paths += ["--distance-log", path]
    argv = [a for a in options(run_dir, tmp_path / "out") if a != run_dir / "distance.log"]
    argv.remove("--distance-log")
    got = summary_of(cli, [*argv, *paths], tmp_path / "out")
    assert (got["backend"], got["GPUs"]) == (backend, gpus)


def test_a_log_without_a_backend_line_is_refused(cli, run_dir, tmp_path):
    log = tmp_path / "other.log"
    log.write_text("seqpairs: error: something else\n")
    code, _, err = cli(*options(run_dir, tmp_path / "out"), "--distance-log", log)
    assert code == 2 and f"{log}: no line '<backend> backend" in err


def test_qc_funnel_rows_lead_the_summary(cli, run_dir, tmp_path):
    funnel = tmp_path / "funnel.tsv"
    funnel.write_text("step\treads\tuniques\nreads\t3000\tNA\nexpected errors\t1558\tNA\n"
                      "dereplicated\t1558\t495\nabundance >= 2\t1133\t71\n")
    got = summary_of(cli, [*options(run_dir, tmp_path / "out"), "--qc-funnel", funnel],
                     tmp_path / "out")
    assert list(got.items())[:6] == [
        ("QC reads: reads", "3000"), ("QC expected errors: reads", "1558"),
        ("QC dereplicated: reads", "1558"), ("QC dereplicated: unique", "495"),
        ("QC abundance >= 2: reads", "1133"), ("QC abundance >= 2: unique", "71")]




def test_without_a_distance_stage(cli, run_dir, tmp_path):
    """The filter's vsearch preset aligns every pair itself: no edge list, no distance logs;
    the funnel goes from the pairs to the kept ones, the summary has no distance rows."""
    argv = options(run_dir, tmp_path / "out")
    for option in ("--edges", "--distance-log"):
        at = argv.index(option)
        del argv[at:at + 2]
    got = summary_of(cli, argv, tmp_path / "out")
    assert "candidates" not in got and "distance GCUPS" not in got
    assert got["backend"] == "none (no distance stage)" and got["GPUs"] == "0"
    assert got["time filter (s)"] == "1.25"
    kept = pd.read_csv(run_dir / "kept.tsv", sep="\t")
    assert got["kept"] == str(len(kept))
    assert matplotlib.image.imread(tmp_path / "out" / "distances.png").ndim == 3
    # one without the other is refused
    code, _, err = cli(*argv, "--edges", run_dir / "edges.npz")
    assert code == 2 and "--edges and --distance-log go together" in err
