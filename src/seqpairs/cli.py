"""The `seqpairs` command: one subcommand per pipeline stage (stages/).

Each stage module defines `register(subparsers)`, which adds its subcommand and sets
`func` to a function taking the parsed arguments.

Every way the command fails that is the user's to fix is one line `seqpairs: error: ...`
and exit status 2, bad options included. SIGTERM (what Snakemake, SLURM and mpiexec send
to stop a job) and SIGHUP end it as Ctrl-C does: through the `finally` and `except` blocks
on the way out, so that no temporary output file survives (formats/atomic.py).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import logging
import signal
import sys
import threading

from . import __version__, parallel
from .errors import UserError
from .stages import COMMANDS, STAGES, TOOLS
from .stages.options import check_environment

# Signals that ask the process to end; each is raised as Terminated in the main thread.
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# The cyclic collector's first threshold for a command's process (Python's is 700):
# Numba's registries (about 160,000 objects) filled the young generation hundreds of times
# a run, each full collection walking them all (as mypy, which sets 200,000 for its run)
YOUNG_OBJECTS = 200_000


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line (the stage's usage is --help's)."""

    def error(self, message):
        raise UserError(f"{message} (see `{self.prog} --help`)")


class Terminated(BaseException):
    """An ending signal arrived. A BaseException, as KeyboardInterrupt: `except Exception`
    does not catch it, the cleanups on the way out run."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, frame):
    signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once
    raise Terminated(signum)


@contextlib.contextmanager
def ending_signals_raise():
    """Within the block, ENDING_SIGNALS raise Terminated (in the main thread, where Python
    runs signal handlers); an ignored one (nohup's SIGHUP) stays ignored."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in ENDING_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _terminate)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command's parser: with the subcommand found in `argv`, only its stage registered
    (importing every stage costs about 0.2 s); otherwise (help, a wrong command) all."""
    parser = Parser(
        prog="seqpairs",
        description="All-pairs alignment distances, identity filtering and clustering of sequences.",
    )
    parser.add_argument("--version", action="version", version=f"seqpairs {__version__}")
    chatter = parser.add_mutually_exclusive_group()
    chatter.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    chatter.add_argument("-v", "--verbose", action="store_true",
                         help="log details too (under MPI: each rank's work lists)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = next((word for word in argv or () if not word.startswith("-")), None)
    for name in [COMMANDS[command]] if command in COMMANDS else STAGES + TOOLS:
        importlib.import_module(f"seqpairs.stages.{name}").register(sub)
    # every subcommand's --help opens with its line of the list above
    for choice in sub._choices_actions:  # argparse keeps those lines only there
        command = sub.choices[choice.dest]
        command.description = command.description or f"{choice.help[0].upper()}{choice.help[1:]}."
    return parser


def main(argv: list[str] | None = None) -> int:
    executor = parallel.current()
    with ending_signals_raise():
        try:
            check_environment()
            args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
            where = f" rank {executor.rank}/{executor.size}" if executor.size > 1 else ""
            logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                                stream=sys.stderr, force=True,
                                format=f"%(asctime)s{where} %(name)s: %(message)s")
            # seqpairs' own details only: the libraries' debug output is not for users
            logging.getLogger("seqpairs").setLevel(logging.DEBUG if args.verbose else
                                                   logging.NOTSET)
            args.func(args)
        except UserError as exc:
            # Options and input are checked alike on every worker before any of them talks
            # to the others, so all of them stop here; one line is enough.
            if executor.root:
                print(f"seqpairs: error: {exc}", file=sys.stderr)
            return 2
        except Exception:
            if executor.size > 1:  # the other workers would wait for this one forever
                logging.getLogger("seqpairs").exception("rank %d failed; aborting all ranks",
                                                        executor.rank)
                executor.abort(1)
            raise
        except KeyboardInterrupt:
            print("seqpairs: interrupted", file=sys.stderr)
            return 130
        except Terminated as exc:
            if executor.root:
                print(f"seqpairs: terminated by {signal.Signals(exc.signum).name}",
                      file=sys.stderr)
            if executor.size > 1:  # a rank that got it alone must not leave others waiting
                executor.abort(128 + exc.signum)
            return 128 + exc.signum
    return 0


def command() -> None:
    """The console script: main() with the cyclic collector set for one process that
    ends when the command does. The stages make few reference cycles; the collector's
    passes over Numba's objects, during the run and once more at the interpreter's exit,
    were 0.45 s of 2.9 s on C005's distinct reads (a short run's cost: the example
    workflow runs seqpairs a dozen times). Frozen objects are left to the exit."""
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    command()
