"""The workflow's config schema: defaults, documentation, and errors that name the key."""
from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

REPO = Path(__file__).resolve().parents[1]
SCHEMA = str(REPO / "config" / "schema.yaml")
CONFIG = REPO / "config" / "config.yaml"
STAGES = ("ingest", "binning", "distance", "filter", "psse", "cluster")


def minimal(**dataset_extra):
    return {"datasets": {"d1": {"samples": {"s1": "reads.fastq"}, **dataset_extra}}}


def error_text(config) -> str:
    with pytest.raises(WorkflowError) as info:
        validate(config, SCHEMA)
    # WorkflowError keeps the jsonschema ValidationError as an argument
    return str(info.value) + "\n" + "\n".join(str(a) for a in info.value.args)


def load_config():
    return yaml.safe_load(CONFIG.read_text())


def test_default_config_is_valid_and_spells_out_every_default():
    config = load_config()
    explicit = copy.deepcopy(config)
    validate(config, SCHEMA)
    # config.yaml lists every simulate/defaults key with the schema's default value
    assert config == explicit


def test_defaults_are_filled_for_a_minimal_config():
    config = minimal()
    validate(config, SCHEMA)
    assert set(config["defaults"]) == set(STAGES)
    reference = load_config()
    assert config["defaults"] == reference["defaults"]
    assert config["simulate"] == reference["simulate"]


def test_dataset_overrides_are_not_filled_with_defaults():
    # An override section must hold only what the user wrote; otherwise schema
    # defaults would silently replace values set in `defaults`.
    config = minimal(filter={"identity": 0.9})
    config["defaults"] = {"filter": {"iddef": 0}}
    validate(config, SCHEMA)
    assert config["datasets"]["d1"]["filter"] == {"identity": 0.9}
    assert config["defaults"]["filter"]["iddef"] == 0  # the user's value stays
    assert config["defaults"]["filter"]["identity"] == 0.97  # the omitted key is filled


def test_default_example_dataset_reads_the_simulated_samples():
    config = load_config()
    validate(config, SCHEMA)
    n = config["simulate"]["samples"]
    expected = {f"resources/simulated/sample{k}.fastq.gz" for k in range(1, n + 1)}
    assert set(config["datasets"]["example"]["samples"].values()) == expected


@pytest.mark.parametrize(
    "patch, expected",
    [
        ({"defaults": {"filter": {"identity": 1.5}}}, ["identity", "1.5"]),
        ({"defaults": {"distance": {"backend": "tpu"}}}, ["backend", "tpu"]),
        ({"defaults": {"filter": {"iddef": 7}}}, ["iddef", "7"]),
        ({"defaults": {"binning": {"bin_width": 0}}}, ["bin_width"]),
        ({"defaults": {"distance": {"threads": "four"}}}, ["threads", "four"]),
        ({"defaults": {"distance": {"exports": ["png"]}}}, ["exports", "png"]),
        ({"defaults": {"distance": {"shards": 0}}}, ["shards", "0 is less than the minimum"]),
        ({"defaults": {"distance": {"shards": 1.5}}}, ["shards", "1.5 is not of type"]),
        ({"defaults": {"cluster": {"linkage": "single"}}}, ["linkage", "single"]),
        ({"defaults": {"psse": {"enabled": "yes"}}}, ["enabled", "'yes' is not of type"]),
        ({"defaults": {"psse": {"shuffles": 1}}}, ["shuffles", "1 is less than the minimum"]),
        ({"defaults": {"psse": {"alpha": 1.5}}}, ["alpha", "1.5 is greater than the maximum"]),
        ({"defaults": {"psse": {"seed": -1}}}, ["seed", "-1 is less than the minimum"]),
        ({"defaults": {"psse": {"mismatch": 3}}}, ["mismatch", "3 is greater than the maximum"]),
        ({"defaults": {"psse": {"backend": "tpu"}}}, ["backend", "tpu"]),
        ({"defaults": {"psse": {"tasks": 0}}}, ["tasks", "0 is less than the minimum"]),
        ({"simulate": {"reads": 0}}, ["reads"]),
    ],
)
def test_invalid_value_names_the_key(patch, expected):
    config = minimal()
    config.update(patch)
    text = error_text(config)
    for word in expected:
        assert word in text


def test_invalid_value_in_a_dataset_override_names_dataset_and_key():
    text = error_text(minimal(ingest={"ambiguous": "keep"}))
    assert "'keep' is not one of" in text
    assert "['datasets']['d1']['ingest']['ambiguous']" in text


@pytest.mark.parametrize(
    "config, key",
    [
        ({**minimal(), "defualts": {}}, "defualts"),
        ({**minimal(), "defaults": {"filter": {"identy": 0.9}}}, "identy"),
        ({**minimal(), "defaults": {"report": {}}}, "report"),
        ({**minimal(), "defaults": {"psse": {"matrix": "BLOSUM62"}}}, "matrix"),
        (minimal(cluster={"cutof": 0.02}), "cutof"),
        (minimal(colour="blue"), "colour"),
        ({**minimal(), "simulate": {"reads_per_sample": 3}}, "reads_per_sample"),
    ],
)
def test_unknown_key_is_named(config, key):
    text = error_text(config)
    assert "Additional properties are not allowed" in text
    assert repr(key) in text


@pytest.mark.parametrize("name", ["a/b", "..", ".", ".hidden", "has space", "../up", "", "x*"])
def test_bad_dataset_name_is_named(name):
    config = {"datasets": {name: {"samples": {"s1": "reads.fastq"}}}}
    text = error_text(config)
    assert repr(name) in text
    assert "datasets" in text


@pytest.mark.parametrize("name", ["a/b", "..", "all", "total", "id", "s 1"])
def test_bad_sample_name_is_named(name):
    config = {"datasets": {"d1": {"samples": {name: "reads.fastq"}}}}
    text = error_text(config)
    assert repr(name) in text


@pytest.mark.parametrize("name", ["soil_1", "S-2", "run.3", "A"])
def test_good_names_pass(name):
    validate({"datasets": {name: {"samples": {name: "my reads/a b.fastq.gz"}}}}, SCHEMA)


@pytest.mark.parametrize(
    "config, words",
    [
        ({}, ["datasets", "required"]),
        ({"datasets": {}}, ["datasets"]),
        ({"datasets": {"d1": {}}}, ["samples", "required"]),
        ({"datasets": {"d1": {"samples": {}}}}, ["samples"]),
        ({"datasets": {"d1": {"samples": {"s1": ""}}}}, ["s1"]),
    ],
)
def test_missing_or_empty_required_parts_are_named(config, words):
    text = error_text(config)
    for word in words:
        assert word in text


def _walk(schema, path="schema"):
    """Yield (path, subschema) for every property schema and $defs entry."""
    for key, sub in schema.get("properties", {}).items():
        yield f"{path}.{key}", sub
        yield from _walk(sub, f"{path}.{key}")
    for key, sub in schema.get("$defs", {}).items():
        yield f"{path}.$defs.{key}", sub
        yield from _walk(sub, f"{path}.$defs.{key}")


def test_every_key_is_documented_and_closed():
    schema = yaml.safe_load(Path(SCHEMA).read_text())
    assert schema["additionalProperties"] is False
    for path, sub in _walk(schema):
        if "$ref" in sub and set(sub) <= {"$ref", "default", "properties"}:
            # `defaults.<stage>`: the documented $defs entry plus default values
            continue
        if path.startswith("schema.defaults.") and path.count(".") == 3:
            continue  # default-value-only entries of `defaults.<stage>.<key>`
        assert sub.get("description"), f"{path} has no description"
        if sub.get("type") == "object" and "properties" in sub:
            assert sub.get("additionalProperties") is False, f"{path} accepts unknown keys"


def test_every_stage_key_has_a_default():
    schema = yaml.safe_load(Path(SCHEMA).read_text())
    for stage in STAGES:
        documented = set(schema["$defs"][stage]["properties"])
        with_default = set(schema["properties"]["defaults"]["properties"][stage]["properties"])
        assert documented == with_default, stage


def test_configuration_reference_is_generated_from_the_schema():
    proc = subprocess.run([sys.executable, str(REPO / "docs" / "config_reference.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
