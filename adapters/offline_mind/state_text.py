"""A memory's state as canonical JSON text, re-encoding only the fields that changed.

The engine stores every agent's mind state with its turn, as canonical JSON
(sorted keys, no spaces, not ASCII-escaped: see `state_json` in services/mind.py).
Encoding the whole state each turn cost more than the rest of an offline turn put
together (a sorted-keys encode of a small dict is ~10 µs here), yet a turn changes
one field of twenty-three, or none. So the text is kept as one fragment per field,
`"name":value`, in sorted key order; a new memory re-encodes only the fields whose
values are not the very same objects as before (Memory's fields are immutable, so
identity means unchanged), and the fragments are joined.

Tried and dropped: splicing the changed fragments into the last text (one string
read back instead of two dozen fragments), and keeping fragments by value across
agents; both cost more than this, measured with the caches cleared between turns
as the engine's work clears them.

The text is exactly what `json.dumps(memory.to_state(), sort_keys=True,
separators=(",", ":"), ensure_ascii=False)` gives (tuples encode as JSON arrays,
as the lists of `to_state` do); the tests hold it to that.
"""

from __future__ import annotations

import json
from itertools import compress
from operator import is_not
from typing import Any

from adapters.offline_mind.memory import DEFAULTS, NAMES, STATE_VERSION, Memory

_VERSION_KEY = "v"
_KEYS = sorted((*NAMES, _VERSION_KEY))
_SLOT = {name: i for i, name in enumerate(_KEYS)}
"""Where each key's fragment sits in the sorted text."""
_FIELD_SLOTS = tuple(_SLOT[name] for name in NAMES)
_PREFIXES = tuple(f'"{name}":' for name in NAMES)
_ALL = range(len(NAMES))
_NOTHING = (object(),) * len(NAMES)


def _value_encoder():
    """Compact JSON for one value (no dicts inside a memory, so no key order to keep)."""
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - CPython always has them
        c_make_encoder = None
    if c_make_encoder is None:  # pragma: no cover
        encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
        return encoder.encode, lambda value, _: [encoder.encode(value)]
    encoder = c_make_encoder(None, None, encode_basestring, None, ":", ",", True, False, True)
    return encode_basestring, encoder


_encode_str, _encode_many = _value_encoder()
"""JSON for a string, and the chunks of JSON for anything else (joined by the caller)."""


class StateText:
    """The canonical JSON of one agent's latest memory, kept between turns."""

    __slots__ = ("memory", "values", "parts", "text")

    def __init__(self) -> None:
        self.memory: Memory | None = None
        self.values: tuple[Any, ...] = _NOTHING
        self.parts: list[str] = [""] * len(_KEYS)
        self.parts[_SLOT[_VERSION_KEY]] = f'"{_VERSION_KEY}":{STATE_VERSION}'
        self.text = ""

    def of(self, memory: Memory) -> str:
        """The text for `memory`: the last one again if it is the same memory."""
        if memory is self.memory:
            return self.text
        values, parts = memory.values, self.parts
        for index in compress(_ALL, map(is_not, values, self.values)):
            value = values[index]
            default = DEFAULTS[index]
            if value is default or value == default:
                parts[_FIELD_SLOTS[index]] = ""
            elif value is None:
                parts[_FIELD_SLOTS[index]] = _PREFIXES[index] + "null"
            elif isinstance(value, str):  # the value's encoder, written out: no frame a field
                parts[_FIELD_SLOTS[index]] = _PREFIXES[index] + _encode_str(value)
            else:
                parts[_FIELD_SLOTS[index]] = _PREFIXES[index] + "".join(_encode_many(value, 0))
        self.memory, self.values = memory, values
        self.text = text = "{" + ",".join(filter(None, parts)) + "}"
        return text
