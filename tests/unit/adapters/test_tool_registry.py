"""The registry's own rules (adapters/tools/registry.py); its use in a turn is in
tests/integration/ticks/test_tool_registry.py."""

from __future__ import annotations

import pytest

from adapters.tools import TOOLS, Narration, ToolRegistry
from core.actions import ACTION_TYPES
from services.tool_specs import tool_specs


def test_every_world_action_file_tool_and_recall_is_registered_once_in_order() -> None:
    names = [tool.name for tool in TOOLS]
    assert names[:len(ACTION_TYPES)] == list(ACTION_TYPES)
    assert names[len(ACTION_TYPES):] == ["read_file", "write_file", "append_file",
                                         "list_files", "edit_file", "recall"]
    assert TOOLS.named(Narration.AS_IS) == set(names[len(ACTION_TYPES):])
    assert TOOLS.changing_files() == {"write_file", "append_file", "edit_file"}


def test_the_world_actions_are_offered_as_their_specs_say_with_the_turn_limit_named() -> None:
    for limit in (3, 8):
        offered = TOOLS.specs(limit)[:len(ACTION_TYPES)]
        assert offered == tool_specs(limit)
        examine = next(s for s in offered if s.name == "examine")
        assert f"one of the {limit} you may make" in examine.description
        assert "{max_actions}" not in " ".join(s.description for s in TOOLS.specs(limit))


def test_two_tools_of_one_name_are_refused() -> None:
    (walk, *_) = TOOLS
    with pytest.raises(ValueError, match="two tools are called 'walk'"):
        TOOLS.with_tools(walk)
    assert "walk" in ToolRegistry(walk) and "hum" not in ToolRegistry(walk)
    assert ToolRegistry(walk).tool(["walk"]) is None  # a name that is no text finds nothing
    assert ["walk"] not in ToolRegistry(walk)


def test_every_tool_a_mind_is_offered_says_which_keys_it_takes() -> None:
    """Every schema closes its object (additionalProperties false), the file tools' too:
    a seat's client is held to it at the door (adapters/seats/server.py), and a model
    reads which keys a tool takes and no others."""
    from adapters.tools import TOOLS

    for spec in TOOLS.specs(8):
        schema = dict(spec.input_schema)
        assert schema["type"] == "object", spec.name
        assert schema.get("additionalProperties") is False, spec.name
