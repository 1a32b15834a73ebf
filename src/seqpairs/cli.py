"""The `seqpairs` command: one subcommand per pipeline stage (stages/).

Each stage module defines `register(subparsers)`, which adds its subcommand and sets
`func` to a function taking the parsed arguments.

Every way the command fails that is the user's to fix is one line `seqpairs: error: ...`
and exit status 2, bad options included.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from . import __version__, parallel
from .errors import UserError
from .stages import STAGES
from .stages.options import check_environment


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line (the stage's usage is --help's)."""

    def error(self, message):
        raise UserError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="seqpairs",
        description="All-pairs alignment distances, identity filtering and clustering of sequences.",
    )
    parser.add_argument("--version", action="version", version=f"seqpairs {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in STAGES:
        importlib.import_module(f"seqpairs.stages.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    executor = parallel.current()
    try:
        check_environment()
        args = build_parser().parse_args(argv)
        where = f" rank {executor.rank}/{executor.size}" if executor.size > 1 else ""
        logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                            stream=sys.stderr, force=True,
                            format=f"%(asctime)s{where} %(name)s: %(message)s")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
