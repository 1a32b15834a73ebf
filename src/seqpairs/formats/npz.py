"""np.savez's archive (an uncompressed zip of .npy members) laid out before its data is
written: every member's dtype and shape is known in advance, so each member's place in
the file is too. Its data can then be written in any order and by several writers at
once (each writing rows of a member in place and returning the CRC-32 of its piece), and
the zip's headers are written last from the pieces' CRCs, combined.

The headers are zipfile's own: each member's local header from zipfile.ZipInfo.FileHeader
with the fields ZipFile.open(name, "w", force_zip64=True) gives it (as np.savez opens
its members), and the central directory and end records by a ZipFile opened where the
data ends. The bytes are those np.savez writes for the same arrays.
"""
from __future__ import annotations

import io
import os
import zipfile
import zlib
from collections.abc import Iterable

import numpy as np

# CRC-32's polynomial, bit-reversed (zlib's crc32)
_POLY = 0xEDB88320


def _multiply(a: int, b: int) -> int:
    """a * b modulo CRC-32's polynomial (zlib's multmodp; bit 31 is x^0)."""
    m, product = 1 << 31, 0
    while True:
        if a & m:
            product ^= b
            if not a & (m - 1):
                return product
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


_SQUARES = [1 << 30]  # x^(2^k) modulo the polynomial: x^1, x^2, x^4, ...
for _ in range(31):
    _SQUARES.append(_multiply(_SQUARES[-1], _SQUARES[-1]))


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of A + B from crc1 of A, crc2 of B and B's length in bytes (zlib's
    crc32_combine, which Python's zlib does not offer): crc1 times x^(8 length2), plus crc2."""
    shift, k, n = 1 << 31, 3, length2  # x^0; 8 * length2 = length2 * 2^3
    while n:
        if n & 1:
            shift = _multiply(_SQUARES[k & 31], shift)
        n >>= 1
        k += 1
    return _multiply(shift, crc1) ^ crc2


def npy_header(dtype, shape: tuple[int, ...]) -> dict:
    """The header np.save writes for an array of this dtype and shape."""
    return {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
            "shape": tuple(int(extent) for extent in shape)}


def _header_bytes(dtype, shape: tuple[int, ...]) -> bytes:
    out = io.BytesIO()  # format 1.0, as np.savez writes for these headers
    np.lib.format.write_array_header_1_0(out, npy_header(dtype, shape))
    return out.getvalue()


def _info(name: str, offset: int, size: int, crc: int = 0) -> zipfile.ZipInfo:
    """The ZipInfo ZipFile.open(name + ".npy", "w") makes, once its data is written."""
    info = zipfile.ZipInfo(f"{name}.npy")
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o600 << 16  # what ZipFile gives a member opened for writing
    info.header_offset = offset
    info.file_size = info.compress_size = size
    info.CRC = crc
    return info


class Archive:
    """Where each member of an np.savez archive of `members` (name, dtype, shape; in file
    order) lies, the archive starting at byte 0 of its file."""

    def __init__(self, members: Iterable[tuple[str, object, tuple[int, ...]]]):
        self.names, self.dtypes, self.headers, self.offsets, self.sizes = [], {}, {}, {}, {}
        offset = 0
        for name, dtype, shape in members:
            header = _header_bytes(dtype, shape)
            size = len(header) + np.dtype(dtype).itemsize * int(np.prod(shape, dtype=np.int64))
            self.names.append(name)
            self.dtypes[name], self.headers[name] = np.dtype(dtype), header
            self.offsets[name], self.sizes[name] = offset, size
            offset += len(_info(name, offset, size).FileHeader(zip64=True)) + size
        self.end = offset  # where the central directory starts

    def data(self, name: str, row: int = 0) -> int:
        """The file offset of row `row` of member `name`'s array (past its .npy header)."""
        local = len(_info(name, self.offsets[name], self.sizes[name]).FileHeader(zip64=True))
        return (self.offsets[name] + local + len(self.headers[name])
                + row * self.dtypes[name].itemsize)

    def write_rows(self, fh, name: str, row: int, chunks: Iterable) -> tuple[int, int]:
        """Member `name`'s rows from `row` on, the chunks' arrays in order, written in place
        into `fh` (opened on the archive's file, seekable): (CRC-32, bytes) of the piece."""
        fh.seek(self.data(name, row))
        crc, size = 0, 0
        for chunk in chunks:
            data = self._bytes(name, chunk)
            crc, size = zlib.crc32(data, crc), size + fh.write(data)
        return crc, size

    def write_piece(self, fd: int, row: int, columns: dict) -> dict:
        """Rows from `row` on of the members in `columns` (name -> rows, as many of each)
        written in place into the archive's file `fd` by os.pwrite, so that threads write
        pieces at once: name -> (CRC-32, bytes) of its piece."""
        written = {}
        for name, rows in columns.items():
            data, offset = self._bytes(name, rows), self.data(name, row)
            done = 0
            while done < len(data):  # pwrite may write less than asked
                done += os.pwrite(fd, data[done:], offset + done)
            written[name] = zlib.crc32(data), done
        return written

    def _bytes(self, name: str, rows) -> memoryview:
        return memoryview(np.ascontiguousarray(rows, dtype=self.dtypes[name])).cast("B")

    def write_header(self, fh, name: str) -> tuple[int, int]:
        """Member `name`'s .npy header in place: (CRC-32, bytes), the piece before row 0."""
        header = self.headers[name]
        fh.seek(self.data(name) - len(header))
        return zlib.crc32(header), fh.write(header)

    def finish(self, fh, pieces: dict) -> None:
        """The zip's headers into `fh` (opened on the archive's file, seekable), once every
        byte of data is written: `pieces` holds each member's (CRC-32, bytes) of its pieces
        in file order, which must cover its data."""
        infos = []
        for name in self.names:
            crc, size = 0, 0
            for piece_crc, length in pieces[name]:
                crc, size = crc32_combine(crc, piece_crc, length), size + length
            if size != self.sizes[name]:
                raise ValueError(f"{name}: {size} bytes written, {self.sizes[name]} planned")
            infos.append(_info(name, self.offsets[name], size, crc))
            fh.seek(infos[-1].header_offset)
            fh.write(infos[-1].FileHeader(zip64=True))
        fh.seek(self.end)
        with zipfile.ZipFile(fh, mode="w", allowZip64=True) as archive:
            archive.filelist.extend(infos)  # the directory of what is written before it
