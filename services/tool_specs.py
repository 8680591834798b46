"""The tools a mind is offered, one per action, generated from the actions themselves.

Each input schema is derived from the action dataclass's fields and type hints in
`core.actions`, the same declarations `tool_input.parse_action` checks a call
against, so the schema a model is shown and the parser that judges its call
cannot drift apart (there are no separate pydantic input models to keep in step).
Which directions an action accepts is found by asking the action itself (building
it with each direction), because the "no 'down'" rule lives in its constructor.

What is written here by hand is prose only: one or two sentences per tool, and a
note per argument, addressed to the agent who will use them. The schemas are plain
JSON Schema (type object, properties, required, enums; no $defs or titles), and
`json.dumps(..., sort_keys=True)` of a spec gives the same bytes in every process:
no sets, no hashes, nothing from the environment.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from types import MappingProxyType, UnionType
from typing import Any

from config.settings import SchedulingSettings
from core.actions import ACTION_TYPES, Action
from core.constants import (
    MAX_PLACE_NAME_LENGTH,
    MAX_SIGN_LENGTH,
    MAX_SPEECH_LENGTH,
    MAX_WALK_STEPS,
)
from core.conversation import INVITE_EXPIRY_TICKS, Privacy
from core.types import AgentName, Direction, Position
from services.crafting_request import TECHNIQUES
from services.mind import ToolSpec

_TECHNIQUE_LIST = ", ".join(TECHNIQUES[:-1]) + " or " + TECHNIQUES[-1]
"""Every technique `work` accepts (services/crafting_request.py), as a sentence lists them."""

DEFAULT_MAX_ACTIONS: int = SchedulingSettings.model_fields["max_actions_per_turn"].default
"""The per-turn action limit settings.yaml gives when it says nothing else."""

MAX_ACTIONS_MARK = "{max_actions}"
"""Where a description names the per-turn action limit (filled in by `tool_specs`)."""

TOOL_DESCRIPTIONS: Mapping[str, str] = MappingProxyType({
    "walk": (
        f"Step north, south, east or west, one cell or up to {MAX_WALK_STEPS} in a row, "
        "stopping early before ground that cannot be crossed, a wall or the world's edge, "
        "or when someone comes into view. Fails, leaving you where you are, if even the "
        "first step is blocked."
    ),
    "approach": (
        "Take one step toward someone or something you can see: an agent's name, a "
        "landmark, a named place, a sign or a kind of ground such as 'forest'; call it again "
        "for each further step. Fails if nothing by that name is in sight or no way leads "
        "there."
    ),
    "journey": (
        "Set out for a distant spot, given as a destination or as the name of a place or "
        "landmark: the way is planned, and from the next tick you are carried one cell a "
        "tick, taking no turns (no looking, talking or anything else) until you arrive, "
        "someone comes into view or the way is blocked. Your next turn tells you where you "
        "are and after how many ticks; fails if the spot cannot be reached or stood on."
    ),
    "examine": (
        "Look closely at your own cell or the next one in a direction: the ground, what can "
        "be gathered and how much is left, things lying there, walls, doors and who is "
        "there. It changes nothing, but like every tool call it is one of the {max_actions} "
        "you may make in a turn."
    ),
    "sense_others": (
        "Feel roughly where the agents you have met are: a direction and nearby, far or "
        "very far, never an exact place; those you have never met cannot be sensed. It "
        "changes nothing, but like every tool call it is one of the {max_actions} you may "
        "make in a turn."
    ),
    "take": (
        "Pick up a thing or a pile lying on your cell or the next one in a direction. Fails "
        "if nothing (by that name) lies there or a wall is in the way."
    ),
    "drop": (
        "Set down something you carry on your own cell, where anyone may pick it up. Fails "
        "if you do not carry that many."
    ),
    "give": (
        "Hand something you carry to an agent on your cell or right beside you. Fails if "
        "they are farther away, a wall stands between you, or you do not carry that many."
    ),
    "gather": (
        "Collect raw material from your cell or the next one: forest gives wood, stone gives "
        "stone, sand gives clay, grass gives grass. A cell holds only a little and regrows "
        "with time; fails on ground that gives nothing or is spent for now."
    ),
    "combine": (
        "Make something new from two or more things you carry, using them up. Fails, "
        "keeping everything, if nothing comes of that mix, often with a hint at what would."
    ),
    "work": (
        "Shape one thing you carry by hand with one of the techniques "
        f"{_TECHNIQUE_LIST} (for example split wood into planks), using it up. Fails, "
        "keeping everything, if nothing comes of it, often with a hint."
    ),
    "apply": (
        "Use a tool you carry on another thing you carry; the tool is kept, the thing is "
        "used up. Fails, keeping everything, if nothing comes of that pairing."
    ),
    "build_shelter": (
        "Wall in the cell you stand on, on every open side, with a door to the south: a "
        "one-cell shelter. Every wall and the door use up building material you carry "
        "(wood, stone, planks and the like); if you lack it, nothing is built and you are "
        "told how much is needed."
    ),
    "place_wall": (
        "Raise a wall on one side of the cell you stand on, using up building material you "
        "carry (wood, stone, planks and the like); walls that close a space make a shelter. "
        "Fails at the world's edge, where a wall already stands, or without the material."
    ),
    "place_door": (
        "Fit a door into a wall on one side of your cell so it can be passed through, using "
        "up a little wood or planks. Fails where there is no wall or already a door."
    ),
    "place_item": (
        "Set one thing you carry on your own cell or the next one in a direction. Fails if "
        "you do not carry it, the ground there cannot hold anything, or a wall is in the way."
    ),
    "remove_wall": (
        "Take down the wall on one side of your cell and get back the material it was made "
        "of; a shelter it closed is open again. Fails where there is no wall."
    ),
    "write_sign": (
        f"Write a sign of up to {MAX_SIGN_LENGTH} characters on your cell or the next one, "
        "for anyone passing to read; writing where a sign stands replaces its words. It uses "
        "no material, but like every tool call it is one of the {max_actions} you may make "
        "in a turn."
    ),
    "read_sign": (
        "Read the sign on your cell or the next one in a direction; fails if there is no "
        "sign there. Like every tool call it is one of the {max_actions} you may make in a "
        "turn."
    ),
    "name_place": (
        f"Give the spot you stand on a name of up to {MAX_PLACE_NAME_LENGTH} characters that "
        "everyone can use, for instance to journey there. Fails if the name is taken."
    ),
    "sleep": "Lie down and sleep until morning; you can do nothing else until you wake.",
    "speak": (
        f"Say something, up to {MAX_SPEECH_LENGTH} characters, to everyone in your "
        "conversation. Fails if you are not in one: invite someone you can see first."
    ),
    "invite": (
        "Invite an agent you can see to talk, or to join the conversation you are in; they "
        f"have {INVITE_EXPIRY_TICKS} ticks to accept. Fails if they are out of sight, "
        "already talking with someone, or already invited."
    ),
    "accept_invite": (
        "Accept the invitation you have been given and begin talking. Fails if none is "
        "waiting or you are already in a conversation."
    ),
    "decline_invite": (
        "Turn down the invitation you have been given. Fails if none is waiting."
    ),
    "join_conversation": (
        "Join the public conversation of someone you can see, by naming them. Fails if they "
        "are not talking, their conversation is private, or you are already in one."
    ),
    "leave_conversation": (
        "Leave the conversation you are in; it ends when fewer than two remain. Fails if "
        "you are not in one."
    ),
})
"""Tool name -> what the tool does, what it costs and when it fails, for the agent."""

ARGUMENT_NOTES: Mapping[str, str] = MappingProxyType({
    "target": (
        "A name you can see: an agent, a landmark, a named place, 'sign', or a kind of "
        "ground such as 'forest'."
    ),
    "destination": "The cell to travel to; x grows to the east, y to the south.",
    "place_name": "The name of a named place or landmark.",
    "item": "The name of a thing you carry, as your inventory shows it.",
    "quantity": "How many; at least 1.",
    "steps": f"How many cells to walk, 1 to {MAX_WALK_STEPS}.",
    "recipient": "The name of the agent to give to.",
    "items": "The names of two or more things you carry.",
    "technique": f"How to work it: one of {_TECHNIQUE_LIST}.",
    "tool": "The name of the tool you carry.",
    "text": "What the sign says.",
    "message": "What you say.",
    "invitee": "The name of the agent to invite.",
    "privacy": (
        "public (others in sight may join) or private (by invitation only); if left out, "
        "that of the conversation you are in, or public."
    ),
    "participant": "The name of someone you can see who is in the conversation.",
})
"""Argument name -> what to put there; the same meaning wherever the name appears."""

TOOL_ARGUMENT_NOTES: Mapping[tuple[str, str], str] = MappingProxyType({
    ("apply", "target"): "The name of the thing you carry to use the tool on.",
    ("name_place", "place_name"): "The new name for the spot you stand on.",
    ("take", "item"): "Which thing, when several lie there; if left out, the first.",
    ("journey", "place_name"): (
        "The name of a named place or landmark to travel to; give this or destination, "
        "not both."
    ),
    ("journey", "destination"): (
        "The cell to travel to; x grows to the east, y to the south. Give this or "
        "place_name, not both."
    ),
})
"""(tool, argument) -> a note that replaces the general one for that tool."""


LOOKING = frozenset({"examine", "sense_others", "read_sign"})
"""World actions that only tell the agent something (ToolSpec.informs)."""


def tool_specs(max_actions: int = DEFAULT_MAX_ACTIONS) -> tuple[ToolSpec, ...]:
    """One ToolSpec per action, in ACTION_TYPES order; fresh plain dicts on every call.

    `max_actions` is the per-turn action limit (settings.yaml
    `scheduling.max_actions_per_turn`), which the descriptions of the tools that change
    nothing name: every call counts toward it, those too."""
    return tuple(
        ToolSpec(name, description(name, max_actions), input_schema(cls),
                 informs=name in LOOKING)
        for name, cls in ACTION_TYPES.items()
    )


def description(name: str, max_actions: int = DEFAULT_MAX_ACTIONS) -> str:
    """The description of tool `name`, naming the per-turn action limit where it does."""
    return TOOL_DESCRIPTIONS[name].replace(MAX_ACTIONS_MARK, str(max_actions))


def input_schema(cls: type[Action]) -> dict[str, Any]:
    """The JSON Schema of an action's arguments, from its dataclass fields."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        hint, _ = _unwrap_optional(hints[f.name])
        prop = _type_schema(cls, f.name, hint)
        prop["description"] = _note(cls.name, f.name, prop)
        if f.default is not dataclasses.MISSING and f.default is not None:
            prop["default"] = _json_value(f.default)
        properties[f.name] = prop
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:  # older JSON Schema drafts refuse an empty list here
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _unwrap_optional(hint: Any) -> tuple[Any, bool]:
    """(the hint without None, whether None was allowed)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is UnionType:
        options = [h for h in typing.get_args(hint) if h is not type(None)]
        if len(options) != 1:
            raise TypeError(f"only `X | None` unions can be tools' arguments, not {hint}")
        return options[0], True
    return hint, False


def _type_schema(cls: type[Action], field: str, hint: Any) -> dict[str, Any]:
    """The schema of one argument type, for every type `tool_input` can parse."""
    if hint is Direction:
        return {"type": "string", "enum": _accepted_directions(cls, field)}
    if hint is Privacy:
        return {"type": "string", "enum": [p.value for p in Privacy]}
    if hint is Position:
        return {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
            "additionalProperties": False,
        }
    if hint is int:
        return {"type": "integer"}
    if hint is str and cls.name == "work" and field == "technique":
        return {"type": "string", "enum": list(TECHNIQUES)}
    if hint is str or hint is AgentName:
        return {"type": "string"}
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...):
        return {"type": "array", "items": {"type": "string"}}
    raise TypeError(f"{cls.name}.{field} has a type no tool schema is written for: {hint}")


def _accepted_directions(cls: type[Action], field: str) -> list[str]:
    """The direction words `cls` accepts for `field`, found by building it with each one."""
    others = {
        f.name: _sample(cls, f.name)
        for f in dataclasses.fields(cls)
        if f.name != field
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    }
    accepted = []
    for direction in Direction:
        try:
            cls(**others, **{field: direction})
        except ValueError:
            continue
        accepted.append(direction.value)
    if not accepted:
        raise TypeError(f"{cls.name} accepts no direction for {field} with sample arguments")
    return accepted


def _sample(cls: type[Action], field: str) -> Any:
    """A plausible value for a required field, only to probe a constructor's rules."""
    hint, _ = _unwrap_optional(typing.get_type_hints(cls)[field])
    samples: dict[Any, Any] = {
        str: "stone", AgentName: AgentName("Ash"), int: 1, Position: Position(0, 0),
        Privacy: Privacy.PUBLIC, Direction: Direction.NORTH,
    }
    if hint in samples:
        return samples[hint]
    if typing.get_origin(hint) is tuple:
        return ("stone", "stone")
    raise TypeError(f"{cls.name}.{field}: no sample value for {hint}")


def _note(tool: str, field: str, prop: Mapping[str, Any]) -> str:
    note = TOOL_ARGUMENT_NOTES.get((tool, field)) or ARGUMENT_NOTES.get(field)
    if note is not None:
        return note
    if field == "direction":
        if "down" in prop["enum"]:
            return "Your own cell (down) or the next cell north, south, east or west."
        return "One of north, south, east or west."
    raise KeyError(f"no note is written for {tool}'s argument {field!r}")


def _json_value(value: Any) -> Any:
    """A field default as JSON: enums by their value."""
    if isinstance(value, Direction | Privacy):
        return value.value
    return value
