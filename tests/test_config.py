"""The workflow's config schema: defaults, documentation, and errors that name the key."""
from __future__ import annotations

import copy
import os
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
STAGES = ("qc", "ingest", "binning", "distance", "filter", "psse", "cluster", "annotate")


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


def test_distance_takes_the_hybrid_backend_and_the_filter_does_not():
    config = minimal()
    config["defaults"] = {"distance": {"backend": "hybrid"}}
    validate(config, SCHEMA)
    assert config["defaults"]["distance"]["backend"] == "hybrid"
    config = minimal()
    config["defaults"] = {"filter": {"backend": "hybrid"}}
    with pytest.raises(Exception, match="hybrid"):
        validate(config, SCHEMA)


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
        if path.startswith("schema.defaults.") and path.count(".") >= 3 \
                and set(sub) <= {"default", "properties"}:
            continue  # default-value-only entries of `defaults.<stage>.<key>` (and nested)
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


# --- bounds: what sizes work or output, the same in the schema and on the command line ---

# (schema section, key, `seqpairs` command and its option, smallest, largest)
BOUNDS = [
    ("simulate", "references", ["simulate", "-o", "x"], "--references", 1, 100_000),
    ("simulate", "length", ["simulate", "-o", "x"], "--length", 20, 16383),
    ("simulate", "samples", ["simulate", "-o", "x"], "--samples", 1, 1000),
    ("simulate", "reads", ["simulate", "-o", "x"], "--reads", 1, 10_000_000),
    ("binning", "bin_width", ["binning", "-i", "x", "--bins", "b", "--tiles", "t"],
     "--bin-width", 1, 16383),
    ("binning", "tile_pairs", ["binning", "-i", "x", "--bins", "b", "--tiles", "t"],
     "--tile-pairs", 1, 4_000_000),
    ("psse", "shuffles", ["psse", "-i", "x", "--pairs", "p", "-o", "o"], "--shuffles", 2,
     100_000),
    ("psse", "seed", ["psse", "-i", "x", "--pairs", "p", "-o", "o"], "--seed", 0, 2**64 - 1),
]


def with_value(section: str, key: str, value) -> dict:
    if section == "simulate":
        return {**minimal(), "simulate": {key: value}}
    return {**minimal(), "defaults": {section: {key: value}}}


def parses(argv: list[str]) -> bool:
    from seqpairs.cli import build_parser
    from seqpairs.errors import UserError

    try:
        build_parser().parse_args(argv)
    except UserError:
        return False
    return True


@pytest.mark.parametrize("section, key, command, option, lo, hi", BOUNDS,
                         ids=[f"{b[0]}.{b[1]}" for b in BOUNDS])
def test_schema_and_command_line_take_the_same_range(section, key, command, option, lo, hi):
    for value, valid in ((lo - 1, False), (lo, True), (hi, True), (hi + 1, False)):
        assert parses([*command, option, str(value)]) == valid, (option, value)
        if valid:
            validate(with_value(section, key, value), SCHEMA)
        else:
            assert f"['{key}']" in error_text(with_value(section, key, value))


def test_shards_and_resolution_have_the_command_lines_bounds():
    from seqpairs.limits import MAX_MEMORY, MAX_RANK_TIMEOUT, MAX_SHARDS, MIN_RESOLUTION

    schema = yaml.safe_load(Path(SCHEMA).read_text())["$defs"]
    assert schema["distance"]["properties"]["shards"]["maximum"] == MAX_SHARDS == 1024
    assert schema["cluster"]["properties"]["resolution"]["minimum"] == MIN_RESOLUTION
    distance = ["distance", "-i", "x", "--edges", "e"]
    assert parses([*distance, "--shard", "1023/1024"])
    assert not parses([*distance, "--shard", "0/1025"])
    assert parses(["cluster", "-i", "d", "-o", "o", "--resolution", str(MIN_RESOLUTION)])
    assert not parses(["cluster", "-i", "d", "-o", "o", "--resolution", "9e-5"])
    limits = schema["distance"]["properties"]
    assert limits["memory"]["maximum"] == MAX_MEMORY
    assert limits["rank_timeout"]["maximum"] == MAX_RANK_TIMEOUT
    for option, bound in (("--memory", MAX_MEMORY), ("--rank-timeout", MAX_RANK_TIMEOUT)):
        assert parses([*distance, option, str(bound)])
        assert not parses([*distance, option, str(bound + 1)])
        assert not parses([*distance, option, "nan"])
    assert not parses([*distance, "--rank-timeout", "0"])


@pytest.mark.parametrize("name", ["s1\n", "-s1", "-", "s1\n\n", "s\n1", "\ns1"])
def test_names_match_in_full_and_do_not_start_like_an_option(name):
    assert repr(name) in error_text({"datasets": {"d1": {"samples": {name: "r.fastq"}}}})
    assert repr(name) in error_text({"datasets": {name: {"samples": {"s1": "r.fastq"}}}})


# --- the workflow's own checks (workflow/rules/common.smk): what the schema lets through ---

ALIAS_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['x'] * 9)}]\n"
    for prev, name in zip([None, *"abcdefgh"], "abcdefghi"))


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    from test_workflow import copy_workflow

    workdir = copy_workflow(tmp_path_factory.mktemp("config-checks"))
    (workdir / "reads.fastq").write_text("@r1\nACGT\n+\nIIII\n")
    return workdir


DATASET = "datasets:\n  d1:\n    samples: {s1: reads.fastq}\n"


@pytest.mark.parametrize("text, words", [
    (DATASET + "    filter: {identity: .nan}\n",
     ["config: datasets.d1.filter.identity: nan is not a finite number"]),
    (DATASET + "    distance: {max_distance: .inf}\n",
     ["config: datasets.d1.distance.max_distance: inf is not a finite number"]),
    ("defaults:\n  cluster: {cutoff: .nan}\n" + DATASET,
     ["config: defaults.cluster.cutoff: nan is not a finite number"]),
    ("simulate: {divergence: .nan}\n" + DATASET,
     ["config: simulate.divergence: nan is not a finite number"]),
    (DATASET + "    distance: {shards: 2.0}\n",
     ["config: datasets.d1.distance.shards: 2.0 is not a whole number"]),
    (DATASET + "    psse: {shuffles: 100.0}\n",
     ["config: datasets.d1.psse.shuffles: 100.0 is not a whole number"]),
    (DATASET + "    distance: {max_distance: 100000}\n    cluster: {linkage: complete, distance: seqdist}\n",
     ["config: datasets.d1:", "cluster.resolution (0.01)", "more than 1,000,000 levels"]),
    (ALIAS_BOMB + DATASET, ["config: more than 1,000,000 keys and list items"]),
], ids=["nan", "inf", "nan-in-defaults", "nan-in-simulate", "float-shards", "float-shuffles",
        "list-lines", "alias-bomb"])
def test_what_the_schema_lets_through_stops_the_dry_run_naming_the_key(workflow_copy, text,
                                                                        words):
    from test_workflow import snakemake

    (workflow_copy / "config" / "config.yaml").write_text(text)
    proc = snakemake(workflow_copy, "--dry-run", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for word in words:
        assert word in output, output
    assert not (workflow_copy / "results").exists()


def test_a_config_that_passes_every_check_plans_its_jobs(workflow_copy):
    from test_workflow import planned_jobs, snakemake

    (workflow_copy / "config" / "config.yaml").write_text(
        DATASET + "    distance: {shards: 2, max_distance: 10000}\n"
        "    cluster: {linkage: complete, distance: seqdist, resolution: 0.01}\n")
    jobs = planned_jobs(snakemake(workflow_copy, "--dry-run", "--cores", "2"))
    assert sorted({rule for rule, _ in jobs}) == [
        "all", "binning", "cluster", "distance_merge", "distance_shard", "filter", "ingest_qc",
        "qc_chimeras", "qc_filter", "qc_select", "report", "report_times"]


@pytest.mark.parametrize("with_vsearch", [False, True])
def test_read_qc_without_vsearch_on_path_says_so_when_it_plans(workflow_copy, tmp_path,
                                                               with_vsearch):
    """The read QC's rules run vsearch: where it is not on PATH (and no --sdm conda) the
    plan says so in one line, and still plans (a cluster's nodes may have it)."""
    bin_dir = tmp_path / "bin"  # this PATH's programs, but vsearch only with_vsearch
    bin_dir.mkdir()
    if with_vsearch:
        (bin_dir / "vsearch").write_text("#!/bin/sh\n")
        (bin_dir / "vsearch").chmod(0o755)
    for folder in [os.path.dirname(sys.executable), *os.environ["PATH"].split(os.pathsep)]:
        for program in Path(folder).glob("*") if os.path.isdir(folder) else ():
            link = bin_dir / program.name
            if program.name != "vsearch" and not link.exists() and not link.is_symlink():
                link.symlink_to(program)
    (workflow_copy / "config" / "config.yaml").write_text(DATASET)
    env = {**os.environ, "PATH": str(bin_dir)}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1"],
                          cwd=workflow_copy, env=env, capture_output=True, text=True,
                          timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "qc_filter" in output  # planned all the same
    warning = "seqpairs: the read QC of d1 runs vsearch, which is not on PATH"
    assert (warning in output) != with_vsearch, output


def test_every_export_and_average_linkage_plan_one_distance_job_per_dataset(workflow_copy):
    """The embedded example (config/config.yaml) with every export and average linkage,
    and a second dataset of other samples: one all-pairs job per dataset; the exports are
    written from what it wrote, mothur's from the edge list."""
    from test_workflow import planned_jobs, snakemake

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["defaults"]["distance"]["exports"] = ["seqdist", "mothur", "phylip"]
    config["defaults"]["cluster"].update(linkage="average", distance="seqdist")
    config["datasets"]["pair"] = {"samples": {k: v for k, v in list(
        config["datasets"]["example"]["samples"].items())[:2]}}
    (workflow_copy / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_jobs(snakemake(workflow_copy, "--dry-run", "--cores", "2"))
    all_pairs = [(rule, dataset) for rule, dataset in jobs
                 if rule in ("distance", "distance_dense", "distance_shard", "distance_matrix")]
    assert sorted(all_pairs) == [("distance_dense", "example"), ("distance_dense", "pair")]
    exports = sorted(rule for rule, dataset in jobs if dataset == "example"
                     and rule.startswith("distance_"))
    assert exports == ["distance_dense", "distance_export", "distance_export",
                       "distance_mothur"]
