"""The executor of one process: it computes every item and is its own root."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ordered


def launched() -> bool:
    return True


def start():
    return Local()


@dataclass(frozen=True)
class Local:
    rank: int = 0
    size: int = 1
    device: int = 0
    root: bool = True

    def share(self, costs) -> np.ndarray:
        return np.arange(len(costs))

    def pull(self, costs):
        yield np.arange(len(costs))  # one worker: nothing to balance, every item in order

    def gather(self, key, columns):
        return ordered(key, columns)

    def merge_dense(self, array):
        return array

    def broadcast(self, value):
        return value

    def barrier(self) -> None:
        pass

    def set_timeout(self, seconds: float) -> None:
        pass

    def fail(self, error: Exception):
        raise error

    def abort(self, code: int) -> None:
        raise SystemExit(code)
