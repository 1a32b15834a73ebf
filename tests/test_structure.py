"""The seams of the code: one backend contract chosen in one place, the scoring and
clustering registries (and the workflow's use of them), the kernel variant table, the
executors. Each test checks a promise that docs/design.md makes."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from seqpairs import backends, cluster, parallel, scoring
from seqpairs.backends.gpu import kernels
from seqpairs.cli import build_parser
from seqpairs.errors import UserError
from seqpairs.scoring.alphabet import AMINO_ACIDS, DNA, encode_all

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "seqpairs"


def schema_enum(stage: str, key: str) -> list:
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    return schema["$defs"][stage]["properties"][key]["enum"]


def choices(command: str, option: str) -> tuple:
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    return tuple(next(a for a in sub._actions if option in a.option_strings).choices)


# --- scoring ----------------------------------------------------------------------------


def test_registry_names_are_the_stages_choices_and_the_config_enums():
    assert scoring.names("distance") == ("seqdist", "vsearch", "blosum62")
    assert scoring.names("filter") == ("seqdist", "vsearch", "blosum62")
    for stage in ("distance", "filter"):
        assert choices(stage, "--scoring") == scoring.names(stage)
        assert schema_enum(stage, "scoring") == list(scoring.names(stage))
    with pytest.raises(UserError, match="unknown scoring scheme 'blosum'; registered: seqdist"):
        scoring.get("blosum")


def test_every_scheme_is_one_kind_of_object_with_one_dna_encoding():
    for name in scoring.REGISTRY:
        scheme = scoring.get(name)
        assert isinstance(scheme, scoring.Scheme) and scheme.family == scoring.REGISTRY[name].family
        # one encoding per kind of letters: DNA's ACGT first, or the 20 amino acids first
        standard = {"dna": DNA, "protein": AMINO_ACIDS}[scoring.REGISTRY[name].letters]
        assert scheme.alphabet.startswith(standard)
        assert scheme.matrix().shape == (len(scheme.alphabet),) * 2
    codes, _ = encode_all(["ACGT"])
    assert list(codes) == [0, 1, 2, 3]
    assert scoring.get("blastn").encode("acgt", "x").tolist() == [0, 1, 2, 3]


def test_seqdist_costs_are_tran_dat_by_letter():
    """docs/seqdist.md's table (A, C, T, G order) in the scheme's ACGT order."""
    table = {"A": [0, 11.619259, 11.694004, 7.748623], "C": [11.619259, 0, 7.619657, 12.852562],
             "T": [11.694004, 7.619657, 0, 10.964048], "G": [7.748623, 12.852562, 10.964048, 0]}
    scheme = scoring.get("seqdist")
    for a, b in ((a, b) for a in DNA for b in DNA):
        assert scheme.subst[DNA.index(a)][DNA.index(b)] == table[a]["ACTG".index(b)]
    assert (scheme.gap, scheme.homopolymer_gap) == (15.0, 4.0)


def test_the_seqdist_kernel_has_no_copy_of_the_costs():
    """The gap costs reach seqdist.cu from the scheme (-D defines); its source states none."""
    source = kernels.source("seqdist.cu")
    assert "#define GAP" not in source and "#define HOMOPOLYMER_GAP" not in source
    assert kernels.seqdist_defines(scoring.get("seqdist")) == {
        "gap": "15.0", "homopolymer_gap": "4.0", "cheapest_gap_shrunk": "3.999999999996362",
        "lower_plain_gap": 959, "lower_least_gap": 255, "lower_shrink": "0.9999999990686774",
        "lower_units": 64, "upper_gap": 961, "upper_dear": 961}
    for module in (SRC / "backends" / "cpu" / "seqdist.py", SRC / "backends" / "cpu" /
                   "trace_seqdist.py"):
        assert "15.0" not in module.read_text() and "11.619259" not in module.read_text()


def test_what_the_workflow_imports_needs_no_numpy():
    """Snakemake asks the registries and reads the limits while it plans, in an environment
    that may have no NumPy."""
    code = ("import sys; sys.modules['numpy'] = None; import seqpairs.scoring as s, "
            "seqpairs.cluster as c, seqpairs.limits as l; s.names('filter'); "
            "c.METHODS['greedy'].reads; l.MAX_LIST_LINES")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr


def test_the_distance_command_runs_without_pandas(tmp_path):
    """pandas is a fifth of the distance command's start-up (benchmarks/RESULTS.md): its
    default path (tiling made in process, an edge list and a mothur column file written)
    runs with pandas unimportable."""
    fasta = tmp_path / "u.fasta"
    read = "ACGTTGCAAGGCTTACCGATCGGATACCTTGACAGTCCAT"
    fasta.write_text(f">a\n{read}\n>b\n{read[:20]}G{read[21:]}\n>c\nT{read[1:]}\n")
    code = ("import sys; sys.modules['pandas'] = None; from seqpairs.cli import main; "
            f"sys.exit(main(['-q', 'distance', '-i', {str(fasta)!r}, '--max-distance', '0.5', "
            f"'--edges', {str(tmp_path / 'e.npz')!r}, '--format', 'mothur', '-o', "
            f"{str(tmp_path / 'd.dist')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "d.dist").read_text().splitlines()) == 2  # a-b, a-c


def test_no_module_is_named_after_a_standard_library_module():
    for path in SRC.rglob("*.py"):
        name = path.stem if path.stem != "__init__" else path.parent.name
        assert name not in sys.stdlib_module_names, path


def test_workflow_tests_no_scheme_or_method_names():
    names = [*scoring.REGISTRY, *cluster.METHODS]
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for line in smk.read_text().splitlines():
            code = line.split("#")[0]
            assert not any(f'== "{n}"' in code or f'!= "{n}"' in code for n in names), (
                smk.name, line)


# --- clustering -------------------------------------------------------------------------


def test_clustering_methods_are_the_cli_choices_and_the_config_enum():
    assert choices("cluster", "--linkage") == tuple(cluster.METHODS)
    assert schema_enum("cluster", "linkage") == list(cluster.METHODS)
    for name, method in cluster.METHODS.items():
        module = __import__(f"seqpairs.cluster.{method.module}", fromlist=["cluster"])
        assert callable(module.cluster), name
        assert set(method.reads) <= set(cluster.DISTANCES) and method.reads, name
        assert set(method.reads.values()) <= {"edge list", "full matrix", "pairs"}, name
        # the identity distance is the filter's kept pairs, SeqDist's the distance stage's
        assert method.reads.get("identity", "pairs") == "pairs", name
        assert method.reads.get("seqdist") != "pairs", name
    assert schema_enum("cluster", "distance") == list(cluster.DISTANCES)
    # one default for the command line and the workflow
    defaults = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())[
        "properties"]["defaults"]["properties"]["cluster"]["properties"]
    assert defaults["linkage"]["default"] == cluster.DEFAULT_LINKAGE
    assert defaults["cutoff"]["default"] == cluster.DEFAULT_CUTOFF
    assert defaults["distance"]["default"] == "identity"


# --- backends ---------------------------------------------------------------------------


def test_backend_is_chosen_in_one_place():
    cpu = backends.select("cpu")
    assert cpu.name == "cpu" and cpu.xp is np and cpu.seqdist_screen is None
    assert cpu.trace_seqdist is not None and cpu.trace_affine is not None
    with pytest.raises(UserError, match="backend must be one of auto, cpu, gpu, hybrid"):
        backends.select("tpu")
    for stage in ("filter", "psse"):
        assert choices(stage, "--backend") == backends.NAMES
    # the stage that shares its tiles between the GPU and the cores beside it
    assert choices("distance", "--backend") == (*backends.NAMES, backends.HYBRID)
    # only backends/__init__.py picks a backend module
    for path in SRC.rglob("*.py"):
        if "backends" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(m.startswith(("backends.cpu", "backends.gpu")) for m in imported), path


def test_gpu_code_imports_nothing_from_cpu_code():
    for path in (SRC / "backends" / "gpu").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("cpu"), (path.name, node.module)
                assert "cpu" not in (node.module or "").split("."), (path.name, node.module)


# PyPI packages the CPU tests use that the GPU machine lacks (its image has CuPy, NumPy,
# SciPy, pandas, Numba, mpi4py; ../shared/tools/device-wheels.sh adds Snakemake and
# Biopython): a GPU test that imports one, even through a helper, does not run there.
NOT_ON_THE_GPU_MACHINE = {"parasail"}


def test_gpu_tests_import_only_what_the_gpu_machine_has():
    tests = REPO / "tests"
    local = {p.stem: p for p in [*tests.glob("*.py"), *(tests / "gpu").glob("*.py")]}
    seen, todo, packages = set(), list((tests / "gpu").glob("*.py")), {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                if top in local:  # a test helper: what it imports counts too
                    todo.append(local[top])
                else:
                    packages.setdefault(top, path.name)
    assert "cupy" in packages  # the walk found the GPU tests' imports
    absent = {p: by for p, by in packages.items() if p in NOT_ON_THE_GPU_MACHINE}
    assert not absent, f"imported by GPU tests, absent on the GPU machine: {absent}"


def test_without_a_gpu_auto_is_the_cpu_and_gpu_is_one_error():
    if backends.gpu.available():
        pytest.skip("a GPU is visible")
    assert backends.select("auto").name == "cpu"
    with pytest.raises(UserError, match="no CUDA GPU visible"):
        backends.select("gpu")


def test_kernel_variants_are_data_and_tuning_names_real_defines():
    variant = kernels.VARIANTS["seqdist"]
    tuned = variant.tuned(strip=8, max_registers=None)
    assert tuned.defines["STRIP"] == 8 and tuned.max_registers is None
    assert variant.defines["STRIP"] == 16  # the table is not changed
    assert "-DSTRIP=8" in tuned.options() and not any("maxrreg" in o for o in tuned.options())
    with pytest.raises(TypeError, match="no define strips"):
        variant.tuned(strips=8)
    for name, row in kernels.VARIANTS.items():
        source = kernels.source(row.source)
        entry = rf'extern "C" __global__ void (__launch_bounds__\([^)]*\) )?{row.function}\('
        assert re.search(entry, source), name


# --- executors --------------------------------------------------------------------------


def test_local_executor_computes_everything_and_gathers_in_key_order():
    executor = parallel.current()
    assert (executor.rank, executor.size, executor.root, executor.device) == (0, 1, True, 0)
    assert executor.share(np.array([5, 1, 9])).tolist() == [0, 1, 2]
    key = np.array([3, 1, 2])
    a, b = executor.gather(key, (np.array([30, 10, 20]), np.array([[3], [1], [2]])))
    assert a.tolist() == [10, 20, 30] and b.tolist() == [[1], [2], [3]]


def test_assign_balances_by_cost_longest_first():
    # by hand: 10 -> 0, 8 -> 1, 2 -> 1 (load 8 < 10), 1 (item 1) -> 0 (10 = 10: the lower
    # worker), 1 (item 2) -> 1
    assert parallel.assign([10, 1, 1, 8, 2], 2).tolist() == [0, 0, 1, 1, 1]
