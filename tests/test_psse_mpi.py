"""`seqpairs psse` as an MPI program: pairs split by cost, the same bytes for any rank count."""
import pytest

from test_mpi import MPIEXEC, prefix_family, run_seqpairs

pytestmark = pytest.mark.skipif(MPIEXEC is None,
                                reason="mpiexec not found (apt-get install openmpi-bin)")


def run_psse(args, ranks=None):
    return run_seqpairs("psse", ["--backend", "cpu", "--threads", "1", *args], ranks)


def test_any_rank_count_gives_the_same_bytes(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    seqs = prefix_family(21, 12, 150, 40, 10)  # varied lengths, so the pairs differ in cost
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k};size={k + 1}\n{s}\n" for k, s in enumerate(seqs)))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("query\ttarget\n" + "".join(f"s{a}\ts{b}\n" for a in range(12)
                                                 for b in range(a)))

    def output(name, ranks):
        out = tmp_path / f"{name}.tsv"
        proc = run_psse(["-i", fasta, "--pairs", pairs, "-o", out, "--shuffles", 50], ranks)
        assert proc.returncode == 0, proc.stderr
        return out.read_bytes()

    single = output("plain", None)
    assert single.count(b"\n") == 1 + 66
    for ranks in (1, 2, 3):
        assert output(f"ranks{ranks}", ranks) == single, f"{ranks} ranks differ"


def test_ranks_without_a_pair_give_the_same_bytes(tmp_path):
    """More ranks than pairs: the ranks that pull nothing add empty columns of the same
    shapes to rank 0's table (with and without the shuffled scores kept for --plots)."""
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    seqs = prefix_family(5, 2, 120, 100, 8)
    fasta = tmp_path / "in.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("query\ttarget\ns1\ts0\n")
    for plots in ([], ["--plots", tmp_path / "plots"]):
        outs = []
        for ranks in (None, 3):
            outs.append(tmp_path / f"out{ranks}.tsv")
            proc = run_psse(["-i", fasta, "--pairs", pairs, "-o", outs[-1], "--shuffles", 20,
                             *plots], ranks)
            assert proc.returncode == 0, proc.stderr
        assert outs[0].read_bytes().count(b"\n") == 2
        assert outs[1].read_bytes() == outs[0].read_bytes()


def test_input_error_under_mpi_is_one_line(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py not installed (pip install mpi4py)")
    fasta, pairs = tmp_path / "in.fasta", tmp_path / "pairs.tsv"
    fasta.write_text(">a\nACGT\n>b\nACGT\n")
    pairs.write_text("query\ttarget\na\tz\n")
    proc = run_psse(["-i", fasta, "--pairs", pairs, "-o", tmp_path / "o.tsv"], 2)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("seqpairs:")]
    assert errors == [f"seqpairs: error: {pairs}:2: target 'z' is not in {fasta}"]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o.tsv").exists()
