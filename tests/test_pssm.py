"""formats/pssm.py: PSI-BLAST's ASCII PSSMs (`psiblast -out_ascii_pssm`), a real one made
by psiblast here (skipped when BLAST+ is not installed; .ci/run installs ncbi-blast+) and
hand-written ones, good and bad, and `seqpairs psse --pssm` scoring with them."""
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import reference_local
from seqpairs.backends.cpu import local as cpu_local
from seqpairs.errors import UserError
from seqpairs.formats.pssm import read_pssm, read_pssms
from seqpairs.scoring.alphabet import AMINO_ACIDS
from seqpairs.scoring.local import LocalScheme
from seqpairs.stats import gumbel
from seqpairs.stats.shuffle import subject_key

BLOSUM62 = LocalScheme.from_matrix("BLOSUM62", 11, 1)
B62 = BLOSUM62.matrix()
CODE = {c: k for k, c in enumerate(BLOSUM62.alphabet)}
EXTRA = "BZX*"  # BLOSUM62's letters without a PSSM column

BLAST = [shutil.which(tool) for tool in ("psiblast", "makeblastdb")]
needs_blast = pytest.mark.skipif(None in BLAST, reason="psiblast and makeblastdb (NCBI "
                                 "BLAST+, Debian package ncbi-blast+) are not on PATH")


def parse_by_hand(text):
    """(column letters, [(position, letter, [20 scores])]) of a PSSM's text: the header is
    the line of single letters, a row is a line of 44 fields."""
    lines = text.splitlines()
    header = next(line.split() for line in lines
                  if line.split() and all(len(t) == 1 for t in line.split()))
    rows = [line.split() for line in lines if len(line.split()) == 44]
    return header[:20], [(int(r[0]), r[1], [int(v) for v in r[2:22]]) for r in rows]


def pssm_text(query, columns=AMINO_ACIDS, bump=None, trailer=True):
    """A PSSM in psiblast's layout: BLOSUM62's scores of each query letter in `columns`'
    order (bump: {(position, letter): added}), made-up percentages and decimals."""
    bump = bump or {}
    lines = ["", "Last position-specific scoring matrix computed, weighted observed "
             "percentages rounded down, information per position, and relative weight of "
             "gapless real matches to pseudocounts",
             "         " + "".join(f"{c:>4}" for c in columns) + "".join(f"{c:>4}" for c in columns)]
    for i, q in enumerate(query, 1):
        scores = [int(B62[CODE[q], CODE[c]]) + bump.get((i, c), 0) for c in columns]
        percent = [100 if c == q else 0 for c in columns]
        lines.append(f"{i:5d} {q}  " + "".join(f"{v:4d}" for v in scores) + " "
                     + "".join(f"{p:4d}" for p in percent) + f"  {0.5 + i / 100:.2f} 0.07")
    lines.append("")
    if trailer:
        lines += ["                      K         Lambda",
                  "Standard Ungapped    0.1380     0.3268",
                  "Standard Gapped      0.0410     0.2670",
                  "PSI Ungapped         0.1380     0.3268",
                  "PSI Gapped           0.0410     0.2670"]
    return "\n".join(lines) + "\n"


def related_proteins(seed=20240611, length=120, copies=12):
    """A random protein and mutated copies of it (20 to 40% of positions substituted)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list(AMINO_ACIDS))
    query = rng.choice(letters, length)
    out = ["".join(query)]
    for _ in range(copies):
        copy = query.copy()
        hit = rng.random(length) < rng.uniform(0.2, 0.4)
        copy[hit] = rng.choice(letters, hit.sum())
        out.append("".join(copy))
    return out


@pytest.fixture(scope="module")
def real_pssm(tmp_path_factory):
    """(path, query) of a PSSM made by psiblast (3 iterations) against a database of the
    query and its mutated copies."""
    if None in BLAST:
        pytest.skip("psiblast and makeblastdb (NCBI BLAST+, Debian package ncbi-blast+) "
                    "are not on PATH")
    folder = tmp_path_factory.mktemp("psiblast")
    seqs = related_proteins()
    (folder / "db.fa").write_text("".join(f">p{k}\n{s}\n" for k, s in enumerate(seqs)))
    (folder / "q.fa").write_text(f">q\n{seqs[0]}\n")
    subprocess.run([BLAST[1], "-in", "db.fa", "-dbtype", "prot", "-out", "db"], cwd=folder,
                   check=True, capture_output=True)
    subprocess.run([BLAST[0], "-query", "q.fa", "-db", "db", "-num_iterations", "3",
                    "-out_ascii_pssm", "q.pssm", "-out", "psiblast.txt"], cwd=folder,
                   check=True, capture_output=True)
    return folder / "q.pssm", seqs[0]


@needs_blast
def test_real_psiblast_pssm(real_pssm):
    path, query = real_pssm
    text = path.read_text()
    letters, rows = parse_by_hand(text)
    assert sorted(letters) == sorted(AMINO_ACIDS)
    assert [r[0] for r in rows] == list(range(1, len(query) + 1))

    got_query, scores = read_pssm(path, BLOSUM62)
    assert got_query == "".join(r[1] for r in rows) == query
    assert scores.dtype == np.int32 and scores.shape == (len(query), len(BLOSUM62.alphabet))
    for i, (_, letter, values) in enumerate(rows):
        for column, value in zip(letters, values):
            assert scores[i, CODE[column]] == value, (i + 1, column)
        for extra in EXTRA:
            assert scores[i, CODE[extra]] == B62[CODE[letter], CODE[extra]], (i + 1, extra)
    # position-specific: psiblast's iterations moved rows away from BLOSUM62's
    standard = [CODE[c] for c in AMINO_ACIDS]
    differs = [i for i, q in enumerate(query)
               if (scores[i, standard] != B62[CODE[q], standard]).any()]
    assert len(differs) > len(query) // 4


def test_hand_written_pssm_and_letters_without_columns(tmp_path):
    """Columns go by their header letters in any order; B, Z, X, * take BLOSUM62's scores
    of the row's query letter."""
    query = "MKWVX*"
    bump = {(1, "A"): 3, (3, "W"): -5, (6, "V"): 2}
    want = B62[[CODE[q] for q in query]].copy()
    for (i, c), added in bump.items():
        want[i - 1, CODE[c]] += added
    for columns in (AMINO_ACIDS, AMINO_ACIDS[::-1], "WAVRNDCQEGHILKMFPSTY"):
        path = tmp_path / f"{columns}.pssm"
        path.write_text(pssm_text(query, columns, bump))
        got, scores = read_pssm(path, BLOSUM62)
        assert got == query
        assert scores.dtype == np.int32
        np.testing.assert_array_equal(scores, want)


def _edit_row(text, position, edit):
    """text with the row of `position` changed by edit(fields) -> fields."""
    lines = text.split("\n")
    k = next(k for k, line in enumerate(lines) if line.split()[:1] == [str(position)])
    lines[k] = "  ".join(edit(lines[k].split()))
    return "\n".join(lines)


def _swap_lines(text, a, b):
    """text with its lines a and b (1-based) swapped."""
    lines = text.split("\n")
    lines[a - 1], lines[b - 1] = lines[b - 1], lines[a - 1]
    return "\n".join(lines)


def _set(index, value):
    def edit(fields):
        fields[index] = value
        return fields

    return edit


GOOD = pssm_text("MKWV")  # lines: 1 blank, 2 title, 3 header, 4-7 rows, 8 blank, 9-13 K/Lambda
BAD = {
    # name: (text, line in the message, words in the message)
    "empty file": ("", 1, "end of file before the header"),
    "no header": (GOOD.replace(GOOD.split("\n")[2] + "\n", ""), 3, "before the header"),
    "title only": ("\n".join(GOOD.split("\n")[:2]) + "\n", 2, "end of file before the header"),
    "header of 19 letters": (GOOD.replace("   V", "", 2), 3, "20 distinct column letters"),
    "header letter twice": (GOOD.replace("   V", "   A", 1), 3, "20 distinct column letters"),
    "header letter not in the alphabet": (GOOD.replace("   V", "   U", 2), 3,
                                          "column letter U is not in"),
    "too few numbers": (_edit_row(GOOD, 2, lambda f: f[:-1]), 5, "43 fields, expected 44"),
    "scores only": (_edit_row(GOOD, 3, lambda f: f[:22]), 6, "22 fields, expected 44"),
    "too many numbers": (_edit_row(GOOD, 1, lambda f: f + ["0"]), 4, "45 fields"),
    "decimal score": (_edit_row(GOOD, 2, _set(5, "1.5")), 5, "score '1.5' of column D"),
    "word score": (_edit_row(GOOD, 4, _set(21, "x")), 7, "score 'x' of column V"),
    "decimal percentage": (_edit_row(GOOD, 1, _set(30, "2.5")), 4, "percentage '2.5'"),
    "word weight": (_edit_row(GOOD, 1, _set(43, "w")), 4, "weight 'w'"),
    "first position 0": (GOOD.replace("    1 M", "    0 M"), 4, "position 0, expected 1"),
    "position skipped": (_edit_row(GOOD, 3, _set(0, "4")), 6, "position 4, expected 3"),
    "positions swapped": (_swap_lines(GOOD, 5, 6), 5, "position 3, expected 2"),
    "position not a number": (_edit_row(GOOD, 2, _set(0, "2.0")), 5, "position 2.0, expected 2"),
    "empty matrix": (pssm_text(""), 3, "no position rows"),
    "score beyond MAX_COST": (_edit_row(GOOD, 2, _set(2, "10001")), 5,
                              "score 10001 of column A is beyond +-10000"),
    "score below -MAX_COST": (_edit_row(GOOD, 4, _set(3, "-10001")), 7, "beyond +-10000"),
    "query letter outside the alphabet": (GOOD.replace("    2 K", "    2 U"), 5,
                                          "query letter 'U' is not in"),
    "cut short after a row": ("\n".join(GOOD.split("\n")[:6]) + "\n", 6,
                              "before the K/Lambda lines"),
    "no K/Lambda lines": (pssm_text("MKWV", trailer=False), 8, "before the K/Lambda lines"),
    "row after the blank line": (GOOD.replace("    4 V", "\n    4 V"), 8,
                                 "after the blank line that ends the matrix"),
    "second matrix": (GOOD + GOOD, 15, "not a K/Lambda line"),
    "second header": (GOOD + GOOD.split("\n")[2] + "\n", 14, "after the blank line"),
    "junk at the end": (GOOD + "some text\n", 14, "not a K/Lambda line"),
    "not ASCII": (GOOD.replace("    3 W", "    3 \u00e9"), 6, "not ASCII"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_pssm(tmp_path, name):
    text, line, words = BAD[name]
    path = tmp_path / "bad.pssm"
    path.write_bytes(text.encode("utf-8"))
    with pytest.raises(UserError) as caught:
        read_pssm(path, BLOSUM62)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert words in message and "\n" not in message, message


def test_good_pssm_is_read(tmp_path):
    """The text the bad cases are edited from is itself good."""
    path = tmp_path / "good.pssm"
    path.write_text(GOOD)
    assert read_pssm(path, BLOSUM62)[0] == "MKWV"


def test_column_letters_outside_a_dna_scheme(tmp_path):
    path = tmp_path / "q.pssm"
    path.write_text(GOOD)
    message = f"{path}:3: column letter R is not in the scheme's alphabet ACGT"
    with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
        read_pssm(path, LocalScheme.dna(2, -3, 5, 2))


def test_read_pssms(tmp_path):
    (tmp_path / "a.pssm").write_text(pssm_text("MKWV"))
    (tmp_path / "b.pssm").write_text(pssm_text("GS", bump={(2, "S"): 4}))
    got = read_pssms(tmp_path, ["b", "a"], ["gs", "MkWv"], BLOSUM62)
    assert [g.shape for g in got] == [(2, 24), (4, 24)]
    assert all(g.dtype == np.int32 for g in got)
    assert got[0][1, CODE["S"]] == B62[CODE["S"], CODE["S"]] + 4

    with pytest.raises(UserError) as caught:
        read_pssms(tmp_path, ["a", "c"], ["MKWV", "GS"], BLOSUM62)
    assert str(caught.value) == f"{tmp_path / 'c.pssm'}: no such file (the PSSM of query c)"

    with pytest.raises(UserError) as caught:
        read_pssms(tmp_path, ["a"], ["MKYV"], BLOSUM62)
    assert str(caught.value) == (f"{tmp_path / 'a.pssm'}: position 3: query letter 'W' in the "
                                 "PSSM, 'Y' in query a's sequence")

    with pytest.raises(UserError) as caught:
        read_pssms(tmp_path, ["b"], ["GSA"], BLOSUM62)
    assert str(caught.value) == (f"{tmp_path / 'b.pssm'}: position 3: query letter none "
                                 "(2 letters) in the PSSM, 'A' in query b's sequence")


@needs_blast
def test_psse_scores_queries_with_their_pssms(real_pssm, tmp_path, cli):
    """`seqpairs psse --pssm`: each query scored with its PSSM (the plain reference on the
    parsed table), shuffles keyed by the subject as without one; a query without a PSSM
    file is one error line."""
    path, query = real_pssm
    folder = tmp_path / "pssms"
    folder.mkdir()
    (folder / "q.pssm").write_text(path.read_text())
    subjects = related_proteins(seed=7, length=90, copies=3)
    subjects.append("".join(np.random.default_rng(8).choice(list(AMINO_ACIDS), 100)))
    (tmp_path / "q.fa").write_text(f">q\n{query}\n")
    (tmp_path / "s.fa").write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(subjects)))
    argv = ["-q", "psse", "--backend", "cpu", "--shuffles", "50", "--alphabet", "protein",
            "--queries", tmp_path / "q.fa", "--subjects", tmp_path / "s.fa"]
    code, _, err = cli(*argv, "--pssm", folder, "-o", tmp_path / "pssm.tsv")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "pssm.tsv", sep="\t")
    _, profile = read_pssm(path, BLOSUM62)
    q = BLOSUM62.encode(query, "q")
    codes = [BLOSUM62.encode(s, "s") for s in subjects]
    assert table["score"].tolist() == [reference_local.score(q, t, BLOSUM62, profile)
                                       for t in codes]
    keys = [subject_key(f"s{k}") for k in range(len(subjects))]
    _, shuffled = cpu_local.local_scores(BLOSUM62, [q], codes, [(0, k) for k in range(len(codes))],
                                         keys, 50, 0, profiles=[profile])
    np.testing.assert_array_equal(table["mu"], gumbel.fit(shuffled)[0])
    code, _, err = cli(*argv, "-o", tmp_path / "plain.tsv")
    plain = pd.read_csv(tmp_path / "plain.tsv", sep="\t")
    assert (plain["score"] != table["score"]).any()  # the PSSM is what scored
    (folder / "q.pssm").unlink()
    code, _, err = cli(*argv, "--pssm", folder, "-o", tmp_path / "none.tsv")
    assert code == 2 and "q.pssm: no such file" in err and "Traceback" not in err
