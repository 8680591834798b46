"""Turning a model's tool call (a name and a JSON object) into an Action, or a reason.

Tool arguments come from a language model and may be anything: missing or extra
keys, wrong types, a number where a name belongs, a list where a word belongs.
Each field is checked against the action's own declared type before the action
is built; the action's constructor then checks values (limits, directions). Any
problem becomes one clear sentence; nothing here raises for bad input.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Any

from core.actions import ACTION_TYPES, Action
from core.conversation import Privacy
from core.types import AgentName, Direction, Position


class ToolInputError(ValueError):
    """The tool call cannot become an action; the message says why."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _convert(field: str, hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        options = [h for h in typing.get_args(hint) if h is not type(None)]
        if value is None:
            return None
        return _convert(field, options[0], value)
    if hint is Direction:
        if not isinstance(value, str):
            raise ToolInputError(f"{field} must be a direction word, not {_describe(value)}")
        try:
            return Direction.parse(value)
        except ValueError as exc:
            raise ToolInputError(f"{field}: {exc}") from None
    if hint is Privacy:
        if not isinstance(value, str) or value.strip().lower() not in {"public", "private"}:
            raise ToolInputError(f"{field} must be 'public' or 'private', not {_describe(value)}")
        return Privacy(value.strip().lower())
    if hint is Position:
        if isinstance(value, Mapping) and set(value) == {"x", "y"}:
            x, y = value["x"], value["y"]
        elif isinstance(value, list | tuple) and len(value) == 2:
            x, y = value
        else:
            raise ToolInputError(f"{field} must be {{'x': ..., 'y': ...}}, not {_describe(value)}")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
            raise ToolInputError(f"{field} needs whole-number x and y")
        return Position(x, y)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolInputError(f"{field} must be a whole number, not {_describe(value)}")
        return value
    if hint is str or hint is AgentName:
        if not isinstance(value, str):
            raise ToolInputError(f"{field} must be text, not {_describe(value)}")
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ToolInputError(f"{field} must be a list of words, not {_describe(value)}")
        return tuple(value)
    raise ToolInputError(f"{field} has a type this tool cannot take")  # pragma: no cover


@functools.cache
def _shape(cls: type[Action]) -> tuple[dict[str, Any], dict[str, dataclasses.Field]]:
    """Field type hints and fields of an action class, worked out once per class.

    `typing.get_type_hints` evaluates string annotations with `eval` and cost ~400 µs
    a call: more than the action itself, on every tool call of every turn.
    """
    return typing.get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def parse_action(tool: Any, arguments: Any) -> Action:
    """The Action a tool call asks for; ToolInputError says what is wrong with it."""
    if not isinstance(tool, str) or tool not in ACTION_TYPES:
        known = ", ".join(sorted(ACTION_TYPES))
        raise ToolInputError(f"there is no tool called {_describe(tool)}; tools are: {known}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ToolInputError(f"{tool} takes named arguments, not {_describe(arguments)}")
    cls = ACTION_TYPES[tool]
    hints, fields = _shape(cls)
    extra = sorted(str(k) for k in arguments if k not in fields)
    if extra:
        allowed = ", ".join(fields) or "no arguments"
        raise ToolInputError(f"{tool} does not take {', '.join(extra)} (it takes: {allowed})")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        required = (
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        )
        if name not in arguments:
            if required:
                raise ToolInputError(f"{tool} needs {name}")
            continue
        values[name] = _convert(name, hints[name], arguments[name])
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise ToolInputError(str(exc)) from None
