"""Progress of a long stage as people see it: a log line at once with the size of the work,
then a line at most every EVERY seconds (done, rate, time left) and one at the end; on a
terminal the periodic lines are a bar on standard error, redrawn in place.

Rule logs (files) get the lines; a person at a terminal gets the bar. Under MPI each rank
reports what it has done of the job's work, without a time left (eta=False): it cannot
know how much of it it will pull, so a time left would mislead.
"""
from __future__ import annotations

import logging
import sys
import time

EVERY = 10.0  # seconds between log lines
REDRAW = 0.25  # seconds between redraws of the bar
BAR = 30  # characters of the bar


def seconds(value: float) -> str:
    """A duration as people read it: 42 s, 7.5 min, 3.2 h."""
    if value != value or value == float("inf"):
        return "unknown"
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


class Progress:
    """`total` units of work (cells, pairs) of a stage, reported on `log`.

    rate(done, elapsed) -> text: how fast, for the lines (default: units per second).
    """

    def __init__(self, log: logging.Logger, what: str, total: float, unit: str,
                 every: float | None = None, rate=None, stream=None, eta: bool = True):
        self.log, self.what, self.total, self.unit, self.eta = log, what, total, unit, eta
        self.every = EVERY if every is None else every
        self.rate = rate or (lambda done, elapsed: f"{done / elapsed:.3g} {unit}/s")
        self.stream = sys.stderr if stream is None else stream
        self.bar = getattr(self.stream, "isatty", lambda: False)() and log.isEnabledFor(
            logging.INFO)
        self.done = 0.0
        self.start = self.last_line = self.last_draw = time.perf_counter()
        log.info("%s: %.4g %s to do", what, total, unit)

    def _status(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        left = (self.total - self.done) * elapsed / self.done if self.done else float("inf")
        share = self.done / self.total if self.total else 1.0
        status = (f"{share:.0%} ({self.done:.4g}/{self.total:.4g} {self.unit}), "
                  f"{self.rate(self.done, elapsed)}")
        return f"{status}, {seconds(left)} left" if self.eta else f"{status} of the job's"

    def update(self, amount: float) -> None:
        self.done += amount
        now = time.perf_counter()
        if self.bar:
            if now - self.last_draw >= REDRAW or self.done >= self.total:
                self.last_draw = now
                filled = int(BAR * min(self.done / self.total, 1.0)) if self.total else BAR
                self.stream.write(f"\r{self.what} [{'#' * filled}{'.' * (BAR - filled)}] "
                                  f"{self._status(now)}\033[K")
                self.stream.flush()
        elif now - self.last_line >= self.every:
            self.last_line = now
            self.log.info("%s: %s", self.what, self._status(now))

    def finish(self) -> float:
        """The end line; returns the seconds the work took."""
        now = time.perf_counter()
        if self.bar:
            self.stream.write("\n")
        elapsed = max(now - self.start, 1e-9)
        self.log.info("%s: done, %.4g %s in %s, %s", self.what, self.done, self.unit,
                      seconds(elapsed), self.rate(self.done, elapsed))
        return elapsed
