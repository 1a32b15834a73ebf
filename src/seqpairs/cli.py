"""The `seqpairs` command: one subcommand per pipeline stage (stages/).

Each stage module defines `register(subparsers)`, which adds its subcommand and sets
`func` to a function taking the parsed arguments.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from . import __version__, parallel
from .errors import UserError
from .stages import STAGES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    parser = build_parser()
    args = parser.parse_args(argv)
    executor = parallel.current()
    where = f" rank {executor.rank}/{executor.size}" if executor.size > 1 else ""
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s{where} %(name)s: %(message)s", force=True)
    try:
        args.func(args)
    except UserError as exc:
        # Input is checked alike on every worker before any of them talks to the others, so
        # all of them stop here; one line is enough.
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
