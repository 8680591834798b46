"""Turning a model's tool call (a name and a JSON object) into an Action, or a reason.

Tool arguments come from a language model and may be anything: missing or extra
keys, wrong types, a number where a name belongs, a list where a word belongs.
Each field is checked against the action's own declared type before the action
is built; the action's constructor then checks values (limits, directions). Any
problem becomes one clear sentence; nothing here raises for bad input.

Every agent turn parses several tool calls, so the per-field work is decided once
per tool (`_plan`): which fields there are, which are required, and a converter
chosen for each field's type. A call then only runs those converters, whose first
test is the common, well-formed case (a plain str, a plain int, a lower-case
direction word); anything else falls through to the full checks and messages.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from core.actions import ACTION_TYPES, Action
from core.conversation import Privacy
from core.types import AgentName, Direction, Position


class ToolInputError(ValueError):
    """The tool call cannot become an action; the message says why."""


Converter = Callable[[str, Any], Any]
"""(field name, raw value) -> the value the action takes, or ToolInputError."""


def describe_value(value: Any) -> str:
    """A value as an error message may quote it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_DIRECTION_WORDS: dict[str, Direction] = {d.value: d for d in Direction}
"""Exact lower-case words: what models send almost always, found without parsing."""


def _to_direction(field: str, value: Any) -> Direction:
    if type(value) is str:
        found = _DIRECTION_WORDS.get(value)
        if found is not None:
            return found
    elif not isinstance(value, str):
        raise ToolInputError(f"{field} must be a direction word, not {describe_value(value)}")
    try:
        return Direction.parse(value)
    except ValueError as exc:
        raise ToolInputError(f"{field}: {exc}") from None


def _to_privacy(field: str, value: Any) -> Privacy:
    if not isinstance(value, str) or value.strip().lower() not in {"public", "private"}:
        raise ToolInputError(f"{field} must be 'public' or 'private', not {describe_value(value)}")
    return Privacy(value.strip().lower())


def _to_position(field: str, value: Any) -> Position:
    if type(value) is list and len(value) == 2:  # [x, y], as minds send it: no ABC check
        x, y = value
        if type(x) is int and type(y) is int:
            return Position(x, y)
    if isinstance(value, Mapping) and set(value) == {"x", "y"}:
        x, y = value["x"], value["y"]
    elif isinstance(value, list | tuple) and len(value) == 2:
        x, y = value
    else:
        raise ToolInputError(f"{field} must be {{'x': ..., 'y': ...}}, not {describe_value(value)}")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
        raise ToolInputError(f"{field} needs whole-number x and y")
    return Position(x, y)


def _to_int(field: str, value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolInputError(f"{field} must be a whole number, not {describe_value(value)}")
    return value


def _to_text(field: str, value: Any) -> str:
    if type(value) is str or isinstance(value, str):
        return value
    raise ToolInputError(f"{field} must be text, not {describe_value(value)}")


def _to_words(field: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ToolInputError(f"{field} must be a list of words, not {describe_value(value)}")
    return tuple(value)


def _untakeable(field: str, value: Any) -> Any:  # pragma: no cover - no action has one
    raise ToolInputError(f"{field} has a type this tool cannot take")


def _converter(hint: Any) -> Converter:
    """The converter for a field's type hint (Optional[X]: None, or X's converter)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        inner = _converter([h for h in typing.get_args(hint) if h is not type(None)][0])

        def optional(field: str, value: Any) -> Any:
            return None if value is None else inner(field, value)

        return optional
    if hint is Direction:
        return _to_direction
    if hint is Privacy:
        return _to_privacy
    if hint is Position:
        return _to_position
    if hint is int:
        return _to_int
    if hint is str or hint is AgentName:
        return _to_text
    if origin is tuple:
        return _to_words
    return _untakeable


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    """How to parse one tool's arguments, worked out once per tool.

    `typing.get_type_hints` evaluates string annotations with `eval` (~400 µs a call),
    and choosing a converter by inspecting the hint cost more than converting; both
    are done here, once, instead of on every tool call of every turn.
    """

    cls: type[Action]
    names: frozenset[str]
    allowed: str
    """The field names for the "it takes: ..." refusal."""
    fields: tuple[tuple[str, bool, Converter], ...]
    """(name, required, converter) in declaration order."""


_plans: dict[str, _Plan] = {}


def _plan(tool: str) -> _Plan:
    plan = _plans.get(tool)
    if plan is None:
        cls = ACTION_TYPES[tool]
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)
        plan = _plans[tool] = _Plan(
            cls,
            frozenset(f.name for f in fields),
            ", ".join(f.name for f in fields) or "no arguments",
            tuple(
                (f.name,
                 f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                 _converter(hints[f.name]))
                for f in fields
            ),
        )
    return plan


_parsed: dict[tuple, Action] = {}
"""(tool, *argument items) -> the Action those arguments made, for calls whose every
argument value is a plain str or int."""

PARSED_KEPT = 4096
"""At most this many parsed calls are kept; the whole table is dropped when it fills."""


def parse_action(tool: Any, arguments: Any) -> Action:
    """The Action a tool call asks for; ToolInputError says what is wrong with it.

    Minds repeat themselves (walk east 3 steps, gather here, the same remark), and an
    Action is a frozen value, so a call whose arguments are all plain text or whole
    numbers is answered from a table of the calls parsed before. Only exact `str` and
    `int` values qualify: among those, equal values are the same value (True == 1 and
    2.0 == 2, which the converters refuse, never get this far), so a kept Action is
    exactly the one parsing again would make. Refused calls are never kept.
    """
    if type(arguments) is dict:
        for value in arguments.values():
            kind = type(value)
            if kind is not str and kind is not int:
                return _parse(tool, arguments)
        key = (tool, *arguments.items())
        try:
            return _parsed[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable tool name: parsing says what is wrong
            return _parse(tool, arguments)
        action = _parse(tool, arguments)
        if len(_parsed) >= PARSED_KEPT:
            _parsed.clear()
        _parsed[key] = action
        return action
    return _parse(tool, arguments)


def _parse(tool: Any, arguments: Any) -> Action:
    """`parse_action` without the table of calls parsed before."""
    if not isinstance(tool, str) or tool not in ACTION_TYPES:
        known = ", ".join(sorted(ACTION_TYPES))
        raise ToolInputError(f"there is no tool called {describe_value(tool)}; tools are: {known}")
    if arguments is None:
        arguments = {}
    elif type(arguments) is not dict and not isinstance(arguments, Mapping):
        raise ToolInputError(f"{tool} takes named arguments, not {describe_value(arguments)}")
    plan = _plan(tool)
    names = plan.names
    for key in arguments:
        if key not in names:
            extra = sorted(str(k) for k in arguments if k not in names)
            raise ToolInputError(
                f"{tool} does not take {', '.join(extra)} (it takes: {plan.allowed})"
            )
    values: dict[str, Any] = {}
    for name, required, convert in plan.fields:
        if name in arguments:
            values[name] = convert(name, arguments[name])
        elif required:
            raise ToolInputError(f"{tool} needs {name}")
    try:
        return plan.cls(**values)
    except (ValueError, TypeError) as exc:
        raise ToolInputError(str(exc)) from None
