import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # so tests can `import reference`

# Real datasets live beside the checkout, never in the repo (SEQPAIRS_DATA overrides,
# e.g. on a GPU machine where a copy travels in a git-ignored folder).
SHARED_DATA = Path(os.environ.get("SEQPAIRS_DATA", TESTS.parent.parent / "shared" / "data"))


@pytest.fixture
def shared_data():
    """Path of ../shared/data; the test is skipped with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real datasets not found at {SHARED_DATA} (../shared/data beside the checkout)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def prune_every_run(monkeypatch):
    """Tests prune their small runs too: the backends' prune_least_cells (a run too small
    to repay the pruning kernels' first compilation is aligned in full) would leave the
    pruner untested; test_prune.py tests that gate."""
    from seqpairs.pairs import prune

    monkeypatch.setattr(prune, "worth_pruning", lambda backend, seqs: True)


@pytest.fixture
def cli(capsys):
    """Run `seqpairs ARGS...` in-process; returns (exit code, stdout, stderr)."""
    from seqpairs.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def run(tmp_path_factory) -> Path:
    """The workflow run once on tests/test_workflow.py's tiny configuration (its workdir);
    the workflow and deployment tests check and compare against it, without changing it."""
    from test_workflow import TINY, copy_workflow, snakemake

    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"), TINY)
    snakemake(workdir, "--cores", "2")
    return workdir
