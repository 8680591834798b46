"""tool_specs: one plain-JSON-Schema tool per action, whose examples the real parser accepts,
whose gaps the parser refuses, and whose bytes never change between processes."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from anthropic.types import ToolParam

from core.actions import ACTION_TYPES
from core.types import Direction, Position
from services.mind import ToolSpec
from services.tool_input import ToolInputError, parse_action
from services.tool_specs import (
    ARGUMENT_NOTES,
    TOOL_ARGUMENT_NOTES,
    TOOL_DESCRIPTIONS,
    input_schema,
    tool_specs,
)
from tests.conftest import PROJECT_DIR

SPECS = {spec.name: spec for spec in tool_specs()}
ONE_OF = {"journey": ("destination", "place_name")}
"""Rules JSON Schema cannot say at the top level (the API allows no oneOf there); the
description says them instead, and the parser enforces them."""

KEYWORDS = {"type", "properties", "required", "additionalProperties", "enum", "items",
            "description", "default"}
PY_TYPES = {"string": str, "integer": int, "object": dict, "array": list}


def check_shape(schema: Any, where: str) -> None:
    """Plain JSON Schema of the kinds tools use, and nothing else ($defs, titles, refs)."""
    assert isinstance(schema, dict), where
    assert set(schema) <= KEYWORDS, f"{where}: unexpected {set(schema) - KEYWORDS}"
    kind = schema["type"]
    assert kind in PY_TYPES, where
    if "enum" in schema:
        values = schema["enum"]
        assert values and len(set(values)) == len(values), where
        assert all(isinstance(v, PY_TYPES[kind]) for v in values), where
    if "default" in schema:
        assert conforms(schema["default"], schema), where
    if kind == "object":
        props = schema["properties"]
        assert isinstance(props, dict), where
        required = schema.get("required", [])
        assert required != [] or "required" not in schema, f"{where}: empty required"
        assert len(set(required)) == len(required) and set(required) <= set(props), where
        assert schema["additionalProperties"] is False, where
        for name, prop in props.items():
            check_shape(prop, f"{where}.{name}")
    if kind == "array":
        check_shape(schema["items"], f"{where}[]")


def conforms(value: Any, schema: dict) -> bool:
    kind = PY_TYPES[schema["type"]]
    if not isinstance(value, kind) or isinstance(value, bool):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind is dict:
        return (set(schema.get("required", [])) <= set(value) <= set(schema["properties"])
                and all(conforms(v, schema["properties"][k]) for k, v in value.items()))
    if kind is list:
        return all(conforms(v, schema["items"]) for v in value)
    return True


def example(schema: dict) -> Any:
    """A value of the schema's shape: the first enum value, or a plain sample."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema["type"]
    if kind == "object":
        return {k: example(schema["properties"][k]) for k in schema.get("required", [])}
    if kind == "array":
        return [example(schema["items"])] * 2
    return {"string": "stone", "integer": 1}[kind]


def spec_bytes() -> str:
    return json.dumps([dataclasses.asdict(s) for s in tool_specs()], sort_keys=True)


# ------------------------------------------------------------------ coverage


def test_there_is_one_spec_per_action_in_action_order():
    specs = tool_specs()
    assert all(isinstance(s, ToolSpec) for s in specs)
    assert [s.name for s in specs] == list(ACTION_TYPES)
    assert set(TOOL_DESCRIPTIONS) == set(ACTION_TYPES)


def test_every_argument_of_every_action_is_in_its_schema():
    for name, cls in ACTION_TYPES.items():
        fields = [f.name for f in dataclasses.fields(cls)]
        assert list(SPECS[name].input_schema["properties"]) == fields, name


def test_no_note_is_written_for_an_argument_that_does_not_exist():
    fields = {f.name for cls in ACTION_TYPES.values() for f in dataclasses.fields(cls)}
    assert set(ARGUMENT_NOTES) <= fields
    for tool, field in TOOL_ARGUMENT_NOTES:
        assert field in {f.name for f in dataclasses.fields(ACTION_TYPES[tool])}, (tool, field)


# ------------------------------------------------------------------ shape


@pytest.mark.parametrize("name", list(ACTION_TYPES))
def test_each_schema_is_plain_json_schema_the_api_accepts(name):
    spec = SPECS[name]
    check_shape(spec.input_schema, name)
    assert spec.input_schema["type"] == "object"
    assert "$defs" not in json.dumps(spec.input_schema) and "title" not in spec.input_schema
    # `informs` is Hearth's own note for the mind (adapters/claude_mind/levers.py), never sent.
    assert set(dataclasses.asdict(spec)) - {"informs"} <= set(ToolParam.__annotations__)
    for prop in spec.input_schema["properties"].values():
        assert prop["description"].strip(), name


@pytest.mark.parametrize("name", list(ACTION_TYPES))
def test_each_description_is_one_or_two_sentences_for_the_agent(name):
    text = SPECS[name].description
    assert 20 <= len(text) <= 400, name
    assert text[0].isupper() and text.endswith("."), name
    assert text.count(". ") <= 1, f"{name}: more than two sentences"


# ------------------------------------------------------------------ agreement with the parser


@pytest.mark.parametrize("name", list(ACTION_TYPES))
def test_a_minimal_example_from_the_schema_parses(name):
    schema = SPECS[name].input_schema
    args = example(schema)
    assert conforms(args, schema)
    if name in ONE_OF:
        with pytest.raises(ToolInputError, match="exactly one"):
            parse_action(name, args)
        for choice in ONE_OF[name]:
            one = {**args, choice: example(schema["properties"][choice])}
            assert conforms(one, schema)
            assert type(parse_action(name, one)) is ACTION_TYPES[name]
        return
    assert type(parse_action(name, args)) is ACTION_TYPES[name]


@pytest.mark.parametrize(
    ("name", "field"),
    [(n, f) for n, s in SPECS.items() for f in s.input_schema.get("required", [])],
)
def test_a_missing_required_argument_is_refused(name, field):
    args = example(SPECS[name].input_schema)
    del args[field]
    with pytest.raises(ToolInputError, match=f"{name} needs {field}"):
        parse_action(name, args)


@pytest.mark.parametrize("name", list(ACTION_TYPES))
def test_an_argument_the_schema_does_not_list_is_refused(name):
    with pytest.raises(ToolInputError, match="does not take"):
        parse_action(name, {**example(SPECS[name].input_schema), "mood": "calm"})


def test_every_enum_value_offered_is_accepted_and_down_only_where_offered():
    offered_down = set()
    for name, spec in SPECS.items():
        prop = spec.input_schema["properties"].get("direction")
        if prop is None:
            continue
        for value in prop["enum"]:
            args = {**example(spec.input_schema), "direction": value}
            assert parse_action(name, args).direction is Direction(value)
        if "down" in prop["enum"]:
            offered_down.add(name)
            continue
        with pytest.raises(ToolInputError, match="north, south, east or west"):
            parse_action(name, {**example(spec.input_schema), "direction": "down"})
    assert {"walk", "place_wall", "place_door", "remove_wall"}.isdisjoint(offered_down)
    assert {"examine", "take", "gather", "write_sign", "read_sign"} <= offered_down


def test_defaults_in_the_schema_are_the_actions_defaults():
    assert SPECS["examine"].input_schema["properties"]["direction"]["default"] == "down"
    assert SPECS["drop"].input_schema["properties"]["quantity"]["default"] == 1
    assert parse_action("examine", {}).direction is Direction.DOWN
    assert "default" not in SPECS["invite"].input_schema["properties"]["privacy"]


def test_every_optional_argument_filled_in_still_parses():
    for name, spec in SPECS.items():
        props = spec.input_schema["properties"]
        full = {k: example(p) for k, p in props.items()}
        if name in ONE_OF:
            continue
        assert type(parse_action(name, full)) is ACTION_TYPES[name], name
    privacy = SPECS["invite"].input_schema["properties"]["privacy"]["enum"]
    assert privacy == ["public", "private"]


def test_a_destination_in_the_schemas_shape_becomes_a_position():
    schema = SPECS["journey"].input_schema["properties"]["destination"]
    value = {"x": 3, "y": 4}
    assert conforms(value, schema)
    assert parse_action("journey", {"destination": value}).destination == Position(3, 4)


# ------------------------------------------------------------------ stability


def test_the_bytes_are_the_same_on_every_call_and_calls_do_not_share_dicts():
    first = tool_specs()
    first[0].input_schema["properties"].clear()
    assert spec_bytes() == spec_bytes()
    assert tool_specs()[0].input_schema == input_schema(ACTION_TYPES["walk"])
    assert tool_specs()[0].input_schema["properties"]


def test_the_bytes_are_the_same_in_another_process_with_another_hash_seed():
    code = (
        "import dataclasses, json; from services.tool_specs import tool_specs; "
        "print(json.dumps([dataclasses.asdict(s) for s in tool_specs()], sort_keys=True))"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_DIR, env=env,
                              capture_output=True, text=True, check=True, timeout=60)
        outputs.add(done.stdout.strip())
    assert outputs == {spec_bytes()}
