"""Conda environments: every rule names one, pinned, and it provides what the rule's code imports.

No conda channel is reachable in CI, so the environments are checked statically here: the
imports of the seqpairs package (read from its source, function-level imports included)
against each rule's env file, through the map from import names to conda packages below.
tests/test_deployment.py runs the whole workflow in an environment of the env files'
packages (from PyPI).
"""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from seqpairs import cli

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "seqpairs"
# Import name -> conda-forge package. A new third-party import must be added here and to
# the env files (the test below fails until it is).
CONDA = {"numpy": "numpy", "numba": "numba", "scipy": "scipy", "pandas": "pandas",
         "Bio": "biopython", "matplotlib": "matplotlib-base", "cupy": "cupy", "mpi4py": "mpi4py"}
# PyPI distribution (pyproject.toml) -> conda-forge package, where the names differ.
PYPI_TO_CONDA = {"matplotlib": "matplotlib-base"}
# Imported only on the GPU or under an MPI launcher: needed by the rules that can run there.
GPU_OR_MPI = {"cupy", "mpi4py"}


def third_party_imports() -> set[str]:
    """Top-level names of every non-stdlib module that the package's source imports."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("seqpairs",)}


def rules() -> dict[str, dict[str, str]]:
    """Rule name -> {'conda': env path, 'shell': command, 'script': path} from the
    workflow's rule files; `use rule A as B with:` inherits A's."""
    found = {}
    for smk in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        blocks = re.split(r"^(?:rule (\w+)|use rule (\w+) as (\w+) with):\n", smk.read_text(),
                          flags=re.M)
        for name, parent, child, body in zip(*(blocks[k::4] for k in range(1, 5))):
            if child:
                found[child] = found[parent]
                continue
            conda = re.search(r"^    conda:\n\s+\"([^\"]+)\"", body, flags=re.M)
            shell = re.search(r"^    shell:\n((?:\s+\".*\"\n?)+)", body, flags=re.M)
            script = re.search(r"^    script:\n\s+\"([^\"]+)\"", body, flags=re.M)
            found[name] = {"conda": conda.group(1) if conda else None,
                           "shell": "".join(re.findall(r"\"(.*)\"", shell.group(1)))
                           if shell else "",
                           "script": script.group(1) if script else None}
    return found


def env_packages(path: Path) -> dict[str, str]:
    """Package -> pinned spec of a conda env file (pip entries left out)."""
    env = yaml.safe_load(path.read_text())
    specs = [d for d in env["dependencies"] if isinstance(d, str)]
    return {re.split(r"[=<>]", spec)[0]: spec for spec in specs}


def gpu_capable(subcommand: str) -> bool:
    """True when `seqpairs SUBCOMMAND` has a --backend option (GPU) and so runs under MPI too."""
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    return any("--backend" in action.option_strings
               for action in sub.choices[subcommand]._actions)


RULES = rules()
TOOL_RULES = {name: rule for name, rule in RULES.items() if rule["shell"] or rule["script"]}


def test_every_rule_that_runs_a_tool_names_an_env_file():
    assert {"ingest", "distance", "distance_shard", "filter", "cluster", "distance_merge",
            "report_times"} <= set(TOOL_RULES)
    for name, rule in TOOL_RULES.items():
        assert rule["conda"], f"rule {name} has no conda directive"
        assert (REPO / "workflow" / "rules" / rule["conda"]).resolve().is_file(), name


@pytest.mark.parametrize("env", sorted((REPO / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_files_are_pinned_to_conda_forge_and_bioconda(env):
    content = yaml.safe_load(env.read_text())
    assert content["channels"][:2] == ["conda-forge", "bioconda"]
    for package, spec in env_packages(env).items():
        assert re.fullmatch(rf"{re.escape(package)}=\d[\w.]*(=\S+)?", spec), f"{spec} unpinned"


@pytest.mark.parametrize("name", sorted(TOOL_RULES))
def test_rule_env_provides_every_import_of_its_code(name):
    imports = third_party_imports()
    unknown = imports - set(CONDA)
    assert not unknown, f"map {sorted(unknown)} to conda packages in CONDA and the env files"
    rule = TOOL_RULES[name]
    env = env_packages((REPO / "workflow" / "rules" / rule["conda"]).resolve())
    tool = re.match(r"(\w+) ", rule["shell"])
    if tool and tool.group(1) != "python3":  # another tool's command: its package
        assert tool.group(1) in env, f"rule {name}: {rule['conda']} lacks {tool.group(1)}"
        return
    needed = imports - GPU_OR_MPI
    if rule["shell"]:  # seqpairs SUBCOMMAND ...: the command's GPU and MPI needs too
        subcommand = re.search(r"-m seqpairs (\w+)", rule["shell"]).group(1)
        if gpu_capable(subcommand):
            needed |= imports & GPU_OR_MPI
    missing = {CONDA[n] for n in needed} - set(env)
    assert not missing, f"rule {name}: {rule['conda']} lacks {missing}"


def test_pypi_dependencies_map_onto_every_env():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"]:
        dist = re.split(r"[<>=!~ \[]", spec)[0]
        for env in (REPO / "envs").glob("seqpairs*.yaml"):  # vsearch.yaml: vsearch only
            assert PYPI_TO_CONDA.get(dist, dist) in env_packages(env), (dist, env.name)
