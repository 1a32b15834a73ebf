"""Fuzzing the config loader (the schema validation the Snakefile runs first).

Any value at any key either validates or fails naming that key; any dataset or sample
name it accepts is safe as a path component and as a command-line word (no separators, no
'..', no leading '.' or '-', no blanks or line ends anywhere, not a reserved name).
Budget: 100 examples per test (about 10 s each in CI).
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

REPO = Path(__file__).resolve().parents[1]
SCHEMA = str(REPO / "config" / "schema.yaml")
BASE = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
RESERVED_SAMPLES = {"all", "id", "total"}


def leaves(node, path=()):
    """Key paths of every scalar or list value under `node`."""
    for key, value in node.items():
        if isinstance(value, dict):
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key)


LEAVES = sorted(leaves({k: v for k, v in BASE.items() if k != "datasets"}))
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(-2, 2),
                   st.text(max_size=6), st.lists(st.integers(), max_size=2),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=1))


def outcome(config):
    """None when the config validates, else the error text (message and its causes)."""
    try:
        validate(config, SCHEMA)
    except WorkflowError as exc:
        return str(exc) + "\n" + "\n".join(str(a) for a in exc.args)
    return None


@SETTINGS
@given(st.sampled_from(LEAVES), VALUES)
def test_any_value_validates_or_names_its_key(path, value):
    config = copy.deepcopy(BASE)
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    error = outcome(config)
    if error is not None:
        assert repr(path[-1]) in error or f"['{path[-1]}']" in error, (path, value, error)


def safe_name(name: str) -> bool:
    return (bool(name) and "/" not in name and "\\" not in name and ".." not in name
            and not name.startswith((".", "-")) and not re.search(r"\s", name))


NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8) | \
    st.from_regex(r"[A-Za-z0-9._/ -]{1,6}", fullmatch=True)


@SETTINGS
@given(NAMES, NAMES)
@example("d1", "s1\n")  # Python's `$` matches before a final line end
@example("-d1", "s1")
def test_accepted_names_are_safe_path_components(dataset, sample):
    error = outcome({"datasets": {dataset: {"samples": {sample: "reads.fastq"}}}})
    if error is None:
        assert safe_name(dataset) and safe_name(sample), (dataset, sample)
        assert sample not in RESERVED_SAMPLES
    else:  # the schema reports one violation: a name it refuses
        assert repr(dataset) in error or repr(sample) in error, (dataset, sample, error)
