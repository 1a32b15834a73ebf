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


@pytest.fixture
def cli(capsys):
    """Run `seqpairs ARGS...` in-process; returns (exit code, stdout, stderr)."""
    from seqpairs.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
