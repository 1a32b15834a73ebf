"""The pipeline's stages, in order; one module each, holding its `seqpairs` subcommand
(`register`) and the wiring from the command's options to its engine (`run`): read the
options and input files, call the engine with plain values, write the outputs. The
algorithms live in the engines: reads/ (simulate, ingest), pairs/ (binning, distance,
filter), stats/ (psse), cluster/, report/.
"""

STAGES = ("simulate", "ingest", "binning", "distance", "filter", "psse", "cluster", "report")
# Commands beside the pipeline's stages, built the same way.
TOOLS = ("align", "scan")
# The module of each subcommand (aliases too), so that a command imports only its own
# stage (tests/test_cli.py checks it against what the modules register).
COMMANDS = {**{name: name for name in STAGES + TOOLS}, "bin": "binning", "merge": "distance"}
