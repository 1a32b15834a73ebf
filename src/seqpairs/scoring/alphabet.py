"""Letters and their codes: the one encoding of every scheme, kernel and sequence set.

An alphabet is a string of distinct upper-case printable ASCII letters; letter k has code
k (uint8), and substitution tables are indexed by these codes. DNA is "ACGT" for every
scheme (SeqDist's own table, indexed A, C, T, G in Tran.dat, is given by letter and laid
out in this order: scoring/seqdist.py). NumPy is imported only where codes are made.
"""
from __future__ import annotations

from ..errors import UserError

DNA = "ACGT"
# The 20 standard amino acids in the order of the BLOSUM/PAM tables.
AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"
# The letters of protein sequences: the 20 and the ambiguity codes the BLOSUM and PAM
# tables score (B: D or N, Z: E or Q, X: any).
PROTEIN = AMINO_ACIDS + "BZX"
# The letters of each kind of sequence (ingest's --alphabet; a scheme's `letters`).
ALPHABETS = {"dna": DNA, "protein": PROTEIN}
MAX_LETTERS = 255  # codes are uint8; the GPU PSSE kernel uses one more code for padding
NOT_A_LETTER = 255


def check(alphabet, scheme: str) -> str:
    """`alphabet`, or a UserError naming `scheme` when it is not a valid alphabet."""
    if (not isinstance(alphabet, str) or not 1 <= len(alphabet) <= MAX_LETTERS
            or len(set(alphabet)) != len(alphabet) or alphabet != alphabet.upper()
            or not alphabet.isascii() or not alphabet.isprintable() or " " in alphabet):
        raise UserError(f"{scheme}: the alphabet must be 1 to {MAX_LETTERS} distinct "
                        f"upper-case ASCII letters, got {alphabet!r}")
    return alphabet


def code_table(alphabet: str):
    """Byte -> code (uint8[256]); NOT_A_LETTER for bytes outside the alphabet."""
    import numpy as np

    table = np.full(256, NOT_A_LETTER, dtype=np.uint8)
    table[np.frombuffer(alphabet.encode("ascii"), dtype=np.uint8)] = np.arange(len(alphabet))
    return table


def encode(sequence: str, alphabet: str, where: str):
    """Codes (uint8) of one sequence, upper-cased; UserError naming `where` and the first
    letter outside the alphabet."""
    import numpy as np

    if sequence.isascii():
        codes = code_table(alphabet)[np.frombuffer(sequence.upper().encode("ascii"),
                                                   dtype=np.uint8)]
        if not (codes == NOT_A_LETTER).any():
            return codes
    letter = next(c for c in sequence if not c.isascii() or c.upper() not in alphabet)
    raise UserError(f"{where}: letter {letter!r} is not in the {alphabet} alphabet")


def encode_all(seqs: list[str], alphabet: str = DNA, source: str = "<sequences>",
               ids: list[str] | None = None):
    """(codes, offsets): the sequences' codes end to end (uint8) and where each starts
    (int64, offsets[n] == len(codes)). UserError naming `source` and the record's id (or
    1-based number) for a letter outside the alphabet or an empty sequence."""
    import numpy as np

    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    joined = "".join(seqs)
    if joined.isascii():
        codes = code_table(alphabet)[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
        bad = np.flatnonzero(codes == NOT_A_LETTER)
    else:
        codes, bad = None, np.array([next(k for k, c in enumerate(joined) if not c.isascii())])
    if bad.size:
        k = int(np.searchsorted(offsets, bad[0], side="right") - 1)
        name = ids[k] if ids else str(k + 1)
        raise UserError(f"{source}:{name}: letter {joined[bad[0]]!r} is not in the {alphabet} "
                        "alphabet")
    for k, s in enumerate(seqs):
        if not s:
            name = ids[k] if ids else str(k + 1)
            raise UserError(f"{source}:{name}: empty sequence")
    return codes, offsets
