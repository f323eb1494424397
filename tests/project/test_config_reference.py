"""config/README.md, the reference of every config key, is what scripts/config_reference.py
writes from the schema; every key the schema allows has a description there."""
import copy
import importlib.util
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("config_reference", ROOT / "scripts" / "config_reference.py")
reference = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = reference  # dataclasses look their module up
SPEC.loader.exec_module(reference)

# JSON Schema 2020-12's keywords: a misspelt keyword (or a flow mapping broken by a comma, which
# turns the rest of a description into a key) would be ignored by the validator.
KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "format", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "properties",
    "patternProperties", "additionalProperties", "propertyNames", "items", "prefixItems", "contains",
    "unevaluatedItems", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "dependentSchemas", "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
}
NAMED_SCHEMAS = {"properties", "$defs", "patternProperties", "dependentSchemas"}  # keys are names, values schemas


def schema():
    return reference.load(reference.SCHEMA)


def config():
    return reference.load(reference.CONFIG)


def test_the_committed_config_reference_is_what_the_schema_gives():
    expected = reference.render(schema(), config())
    assert reference.OUTPUT.read_text(encoding="utf-8") == expected, "config/README.md is stale: run make config-docs"
    assert reference.main(["--check"]) == 0


def test_check_fails_naming_the_make_target_when_the_file_is_stale(tmp_path, capsys):
    stale = tmp_path / "README.md"
    stale.write_text(reference.render(schema(), config()).replace("zCDP budgets", "budgets"), encoding="utf-8")
    assert reference.main(["--check", "--output", str(stale)]) == 1
    assert "run make config-docs" in capsys.readouterr().err


def test_every_key_has_a_type_and_a_description():
    rows = [row for rows in reference.reference_rows(schema(), config()).values() for row in rows]
    assert len(rows) > 100
    undescribed = [row.key for row in rows if not row.description]
    assert not undescribed, f"add a description to these keys in workflow/schemas/config.schema.yaml: {undescribed}"
    assert all(row.type and row.type != "any" for row in rows), [row.key for row in rows if row.type in ("", "any")]


def test_every_property_the_schema_declares_has_a_row():
    # whatever construct a property sits in ($defs, allOf, oneOf, items), the walk reaches it
    def names(node):
        if isinstance(node, list):
            for item in node:
                yield from names(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key == "properties":
                    yield from value
                if key in NAMED_SCHEMAS:
                    for sub in value.values():
                        yield from names(sub)
                elif key not in ("enum", "const", "default", "required", "examples"):
                    yield from names(value)

    declared = set(names(schema()))
    rows = {row.key.split(".")[-1].removesuffix("[]")
            for rows in reference.reference_rows(schema(), config()).values() for row in rows}
    assert declared - rows == set()


def test_the_reference_shows_types_defaults_and_required_keys():
    rows = {row.key: row for rows in reference.reference_rows(schema(), config()).values() for row in rows}
    assert rows["seed"].default == "**required** (`20240801` in config.yaml)"
    assert rows["seed"].type == "integer >= 0"
    assert rows["experiments.<experiment>.share_rho"].default == "`false`"
    assert rows["experiments.<experiment>.trials"].default == "**required**"
    assert rows["experiments.<experiment>.batch_size"].default == "—"
    assert rows["figures.<figure>.panels[].statistic"].type == ("one of `mean_sd`, `median_iqr`, `mean_se`, "
                                                                "`trimmed_mean_se`")
    assert rows["experiments.<experiment>.grid.rho"].type == "list (each number > 0; at least 1)"  # via $ref
    assert rows["datasets.pos.sources[].format"].type == "one of `bms_pos_csv`"  # an allOf part merged in
    assert rows["datasets.kosarak.expect.n"].default == "`75462` in config.yaml"  # under a oneOf alternative
    assert rows["fidelity.<experiment>.required_share"].type == "number > 0, <= 1"
    assert rows["table2.names"].type == "mapping: `<label>` to string or null"  # null: a merged config drops a method


def test_a_key_added_to_the_schema_appears_with_its_type_default_and_description():
    changed = copy.deepcopy(schema())
    changed["properties"]["run"] = {"type": "array", "items": {"type": "string"}, "description": "what to build"}
    changed["$defs"]["experiment"]["properties"]["label"] = {"type": "string", "default": "", "description": "a label"}
    configured = {**config(), "run": ["figures"]}
    text = reference.render(changed, configured)
    assert "| `run` | list (each string) | `[\"figures\"]` in config.yaml | what to build |" in text
    assert "| `experiments.<experiment>.label` | string | `` | a label |" in text


def test_the_reference_is_deterministic_and_escapes_table_cells():
    first = reference.render(schema(), config())
    assert first == reference.render(schema(), config())
    for line in first.splitlines():
        if line.startswith("| `"):
            cells = line.replace("\\|", "").split("|")
            assert len(cells) == 6, line  # 4 columns: no stray pipe from a description
            assert "<" not in cells[4].replace("&lt;", ""), line  # raw <name> would vanish as HTML


def test_the_schema_uses_only_json_schema_keywords():
    def walk(node, where):
        if isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}[{i}]")
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in NAMED_SCHEMAS:
                    for name, sub in value.items():
                        yield from walk(sub, f"{where}.{key}.{name}")
                elif key in ("enum", "const", "default", "required", "examples"):
                    continue
                else:
                    if key not in KEYWORDS:
                        yield f"{where}: {key!r}"
                    yield from walk(value, f"{where}.{key}")

    unknown = list(walk(yaml.safe_load(reference.SCHEMA.read_text()), ""))
    assert not unknown, unknown
