"""benchmarks/seeds/: the ledgers that let one of Savran et al.'s tables be measured over
several device calls add up to the whole run."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "seeds"))
import savran_table2  # noqa: E402
from common import distance, edge_digest  # noqa: E402


def test_table2_rows_from_shards_in_two_calls_add_up_to_the_whole(tmp_path, capsys):
    """A CPU row of Table 2 as 3 shards over two calls (reads of many lengths: several
    bins, so several tiles and no shard empty): the report waits for the missing shard,
    then gives the row with the digest of every pair's distance, equal to the digest of
    one whole run's edge list."""
    rng = np.random.default_rng(3)
    n, ledgers = 90, tmp_path / "ledgers"
    fasta = tmp_path / "reads.fasta"
    fasta.write_text("".join(f">r{k}\n{''.join(rng.choice(list('ACGT'), rng.integers(30, 400)))}\n"
                             for k in range(n)))
    for shards in (["0", "2"], ["1"]):
        savran_table2.run_shards(fasta, n, 1, 2, 3, savran_table2.shard_numbers(shards),
                                 tmp_path, ledgers)
        savran_table2.report(ledgers)
    out = capsys.readouterr().out
    assert "waiting for shards [1]" in out
    lines = (ledgers / "table2-90-on-1-cores-in-3-shards.tsv").read_text().splitlines()
    assert sorted(int(line.split("\t")[0]) for line in lines) == [0, 1, 2]
    assert all(int(line.split("\t")[3], 16) for line in lines)  # every shard holds pairs
    rows = [line.split("\t") for line in out.splitlines() if line.startswith(f"{n}\t")]
    assert len(rows) == 1 and rows[0][:4] == [str(n), str(n * (n - 1) // 2), "cpu", "1"]
    assert float(rows[0][4]) > 0 and rows[0][6] == "3"

    whole = tmp_path / "whole.npz"
    distance(fasta, "cpu", "--edges", str(whole), "--max-distance", "inf")
    with np.load(whole) as z:
        assert len(z["i"]) == n * (n - 1) // 2
    assert rows[0][7] == f"{edge_digest(whole):016x}"
