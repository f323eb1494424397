"""Write config/README.md, the reference of every config key, from the config schema.

`make config-docs` runs it (`--check` only compares); tests/project/test_config_reference.py checks that
the committed config/README.md is what it writes. It walks workflow/schemas/config.schema.yaml:
`$ref`s into `$defs` are followed (keys beside a `$ref` win), `allOf` parts are merged, the
object alternatives of `oneOf`/`anyOf` contribute their keys. Each key gets its type (from
`type`, `enum`, `items`, the bounds), its default (the schema's `default`, else the value
config/config.yaml sets at that path) and its `description`. Names a config chooses (an
experiment id, a figure name) appear as `<experiment>`, `<figure>`, ...; the entries of a list
as `[]`. The output depends on the two files alone.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
CONFIG = ROOT / "config" / "config.yaml"
OUTPUT = ROOT / "config" / "README.md"

# The placeholder for the names under a mapping whose keys the config chooses; otherwise the
# singular of the mapping's own key (experiments -> <experiment>).
PLACEHOLDERS = {"grid": "parameter", "where": "parameter", "paper": "parameter", "names": "label",
                "fidelity": "experiment", "libraries": "experiment"}

HEADER = """\
# Configuration reference

Every key a config may have (`config/config.yaml`, `config/smoke.yaml` or a config of your own),
generated from the schema `workflow/schemas/config.schema.yaml` by `make config-docs`
(`scripts/config_reference.py`): edit the schema's `description`s, not this file. A `<name>` in a
key stands for a name the config chooses (an experiment id, a figure name, ...), `[]` for each
entry of a list. **Default**: the schema's default; else the value `config/config.yaml` sets
there; **required** keys must be set, keys marked — may be left out. A run validates its config
against the schema before any job starts and names the first offending key. What the experiment
and figure entries do is explained in [docs/workflow.md](../docs/workflow.md#configs), which
config a run reads in [docs/configuration.md](../docs/configuration.md).
"""


@dataclass(frozen=True)
class Row:
    key: str
    type: str
    default: str
    description: str


def merge(base, extra):
    """``extra`` deep-merged over ``base`` (mappings merge key by key, anything else is replaced)."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return extra
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = merge(merged[key], value) if key in merged else value
    return merged


def resolve(node, defs):
    """``node`` with its ``$ref`` (into ``$defs``) and ``allOf`` parts merged in; the node's own
    keys win over what they bring."""
    if not isinstance(node, dict):
        return node
    node = dict(node)
    while "$ref" in node:
        reference = node.pop("$ref")
        if not reference.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {reference!r}: only #/$defs/<name>")
        node = merge(resolve(defs[reference.removeprefix("#/$defs/")], defs), node)
    if "allOf" in node:
        merged = {}
        for part in node.pop("allOf"):
            merged = merge(merged, resolve(part, defs))
        node = merge(merged, node)
    return node


def alternatives(node, defs):
    """The resolved alternatives of ``oneOf``/``anyOf`` that say what a value is (alternatives
    that only constrain, e.g. ``{required: [url]}``, are left out)."""
    found = []
    for key in ("oneOf", "anyOf"):
        for alternative in node.get(key, ()):
            alternative = resolve(alternative, defs)
            if any(k in alternative for k in ("type", "enum", "const", "properties", "oneOf", "anyOf")):
                found.append(alternative)
    return found


def placeholder(key: str) -> str:
    key = key.removesuffix("[]")
    name = PLACEHOLDERS.get(key) or (key[:-1] if key.endswith("s") and len(key) > 1 else "name")
    return f"<{name}>"


def is_object(node) -> bool:
    """A schema for mappings whose keys get rows of their own."""
    return isinstance(node, dict) and ("properties" in node or isinstance(node.get("additionalProperties"), dict))


def value_text(value) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def bounds_text(node) -> str:
    parts = []
    for keyword, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if keyword in node:
            parts.append(f"{sign} {value_text(node[keyword])}")
    return " " + ", ".join(parts) if parts else ""


def type_text(node, defs, key="") -> str:
    node = resolve(node, defs)
    if node is True or node == {}:
        return "any"
    if "const" in node:
        return f"`{value_text(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{value_text(value)}`" for value in node["enum"])
    types = node.get("type")
    if types is None:
        texts = list(dict.fromkeys(type_text(alternative, defs, key) for alternative in alternatives(node, defs)))
        return " or ".join(texts) if texts else "any"
    texts = []
    for kind in [types] if isinstance(types, str) else types:
        if kind in ("integer", "number"):
            texts.append(kind + bounds_text(node))
        elif kind == "string":
            text = "string"
            if node.get("minLength", 0) >= 1:
                text = "non-empty string"
            if "pattern" in node:
                text += f" matching `{node['pattern']}`"
            texts.append(text)
        elif kind == "array":
            texts.append(array_text(node, defs, key))
        elif kind == "object":
            extra = resolve(node.get("additionalProperties"), defs)
            if isinstance(extra, dict) and not is_object(extra) and "properties" not in node:
                texts.append(f"mapping: `{placeholder(key)}` to {type_text(extra, defs)}")
            else:
                texts.append("mapping")
        else:
            texts.append(kind)
    return " or ".join(texts)


def array_text(node, defs, key) -> str:
    items = node.get("items")
    item = type_text(items, defs, key) if items is not None else "any"
    low, high = node.get("minItems", 0), node.get("maxItems")
    if high is not None and low == high:
        return f"list of {low} (each {item})"
    size = [f"at least {low}"] if low else []
    size += [f"at most {high}"] if high is not None else []
    return f"list (each {item}" + "".join(f"; {text}" for text in size) + ")"


def configured(config, path):
    """The value ``config`` has at ``path`` (a tuple of keys), or None; None as well where the
    path has a placeholder or a list entry (the values there differ per entry)."""
    value = config
    for part in path:
        if part.startswith("<") or part.endswith("[]") or not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def default_text(node, required: bool, config_value) -> str:
    if "default" in node:
        return f"`{value_text(node['default'])}`"
    shown = None
    if config_value is not None and not isinstance(config_value, dict):
        text = value_text(config_value)
        if not isinstance(config_value, list) or len(text) <= 40:
            shown = f"`{text}` in config.yaml"
    if required:
        return "**required**" + (f" (`{value_text(config_value)}` in config.yaml)" if shown else "")
    return shown or "—"


def description_text(node) -> str:
    text = " ".join(str(node.get("description", "")).split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def walk(node, path, defs, config, required=False):
    """The rows of ``node`` (at ``path``, a tuple of keys) and of everything under it."""
    node = resolve(node, defs)
    key = path[-1] if path else ""
    yield Row(".".join(path), type_text(node, defs, key), default_text(node, required, configured(config, path)),
              description_text(node))
    yield from children(node, path, defs, config)


def children(node, path, defs, config):
    key = path[-1] if path else ""
    for name, child in (node.get("properties") or {}).items():
        yield from walk(child, path + (name,), defs, config, required=name in node.get("required", ()))
    extra = resolve(node.get("additionalProperties"), defs)
    if is_object(extra) or (isinstance(extra, dict) and extra.get("type") == "object"):
        yield from walk(extra, path + (placeholder(key),), defs, config)
    items = resolve(node.get("items"), defs)
    if isinstance(items, dict):
        for candidate in [items, *alternatives(items, defs)]:
            yield from children(candidate, path[:-1] + (f"{key}[]",), defs, config)
    for alternative in alternatives(node, defs):
        yield from children(alternative, path, defs, config)


def unique(rows):
    """The first row of each key (an item and its alternatives may reach the same key)."""
    seen = set()
    for row in rows:
        if row.key not in seen:
            seen.add(row.key)
            yield row


def reference_rows(schema: dict, config: dict) -> dict[str, list[Row]]:
    """Top-level key -> the rows of that key and every key under it, in schema order."""
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    return {name: list(unique(walk(node, (name,), defs, config, required=name in required)))
            for name, node in schema.get("properties", {}).items()}


def render(schema: dict, config: dict) -> str:
    lines = [HEADER]
    for name, rows in reference_rows(schema, config).items():
        lines += [f"## `{name}`", ""]
        lines += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
        lines += [f"| `{row.key}` | {row.type.replace('|', chr(92) + '|')} | {row.default} | {row.description} |"
                  for row in rows]
        lines.append("")
    return "\n".join(lines)


def load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether the file is up to date")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render(load(SCHEMA), load(CONFIG))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        if current != text:
            print(f"{args.output} is out of date: run make config-docs", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
