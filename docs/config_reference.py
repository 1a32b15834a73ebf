"""Write docs/configuration.md from config/schema.yaml (the one source of every key).

    python docs/config_reference.py            # rewrite docs/configuration.md
    python docs/config_reference.py --check    # exit 1 when it is out of date

tests/test_config.py runs the check, so a schema change without this file's rerun fails.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
OUTPUT = REPO / "docs" / "configuration.md"


def text(value) -> str:
    return " ".join(str(value).split())


def allowed(spec: dict) -> str:
    """Type, range and choices of one key, in words."""
    if "enum" in spec:
        return " / ".join(f"`{v}`" for v in spec["enum"])
    kind = spec.get("type", "")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    if spec.get("type") == "array" and "enum" in spec.get("items", {}):
        kind = "list of " + ", ".join(f"`{v}`" for v in spec["items"]["enum"])
    bounds = [f">= {spec['minimum']}" if "minimum" in spec else "",
              f"<= {spec['maximum']}" if "maximum" in spec else ""]
    return " ".join(part for part in [kind, *bounds] if part)


def table(properties: dict, defaults: dict, header: bool = True, prefix: str = "") -> list[str]:
    """Rows of the keys, a nested section's keys after it as `section.key`."""
    rows = ["| key | default | allowed | meaning |", "|---|---|---|---|"] if header else []
    for key, spec in properties.items():
        default = defaults.get(key, spec.get("default"))
        rows.append(f"| `{prefix}{key}` | `{json.dumps(default)}` | {allowed(spec)} | "
                    f"{text(spec.get('description', ''))} |")
        if "properties" in spec:
            rows += table(spec["properties"], default or {}, False, f"{prefix}{key}.")
    return rows


def render(schema: dict) -> str:
    defs, top = schema["$defs"], schema["properties"]
    lines = ["# Configuration reference", "",
             "Generated from config/schema.yaml by docs/config_reference.py; do not edit.", "",
             text(schema["description"]), "", "## `simulate`", "",
             text(top["simulate"]["description"]), "",
             *table(top["simulate"]["properties"], {}), "",
             "## `defaults` and the datasets' stage sections", "",
             text(top["defaults"]["description"]), ""]
    for stage, entry in top["defaults"]["properties"].items():
        stage_defs = defs[stage]
        defaults = {k: v["default"] if "properties" not in v else
                    {kk: vv["default"] for kk, vv in v["properties"].items()}
                    for k, v in entry.get("properties", {}).items()}
        lines += [f"### `{stage}`", "", text(stage_defs["description"]), "",
                  *table(stage_defs["properties"], defaults), ""]
    dataset = defs["dataset"]
    lines += ["## `datasets`", "", text(top["datasets"]["description"]), "",
              f"Names: {text(defs['name']['description'])} "
              f"Samples: {text(defs['sample_name']['description'])}", "",
              f"Each dataset: {text(dataset['description'])}", "",
              f"- `samples` (required): {text(dataset['properties']['samples']['description'])}",
              *[f"- `{stage}`: overrides of `defaults.{stage}` (keys as above)"
                for stage in dataset["properties"] if stage != "samples"], ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    content = render(yaml.safe_load(SCHEMA.read_text()))
    if args.check:
        if not OUTPUT.is_file() or OUTPUT.read_text() != content:
            print(f"{OUTPUT} is out of date: run python docs/config_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(content)
    return 0


if __name__ == "__main__":
    sys.exit(main())
