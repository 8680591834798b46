"""What an offline agent remembers between turns, as one small frozen value.

The engine stores `Memory.to_state()` with every committed turn and hands it
back after a crash, so everything the mind carries from one turn to the next
lives here and nowhere else; a restored mind behaves exactly as the original.
Every collection is capped (oldest entries go first), so the stored state
stays a few hundred bytes however long the agent lives.

Positions are (x, y) pairs. Recipe keys read like "work:wood:split",
"combine:clay+grass" (inputs sorted) or "apply:torch:wood".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import compress
from operator import is_not
from typing import Any

STATE_VERSION = 1

MAX_VISITED = 16
MAX_RECIPES = 32
MAX_IDEAS = 16
MAX_FAILED = 48
MAX_SIGNS = 12
MAX_NAMED = 8
MAX_MET = 8
MAX_DIARY = 6
MAX_WALLS = 12
MAX_MARKS = 12
MAX_TEXT = 80
"""Longest string kept anywhere in memory (names, diary lines)."""

OBVIOUS_IDEAS: tuple[str, ...] = (
    "work:wood:split", "work:stone:break", "work:clay:shape", "work:grass:weave",
)
"""What anyone would think of trying first; the rest is learned by trying."""

# Bits of Memory.done: what the agent has done at least once.
GATHERED, CRAFTED, BUILT, WROTE, TALKED = 1, 2, 4, 8, 16

Pos = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Field:
    """One thing a memory holds: its name, default, JSON shape and what it is for."""

    name: str
    default: Any
    shape: str
    """How it looks in JSON: value (as is), pair (a list), rows (a list of lists),
    items (a list of plain values)."""
    doc: str


FIELDS: tuple[Field, ...] = (
    Field("anchor", None, "pair", "Where wandering centres: where it woke, then its haunt "
          "(or its home, if it has no haunt)."),
    Field("haunt", "", "value", "The landmark it has made its own (\"\" until it sees one): of "
          "all it has seen, the one nearest where it woke; others who woke nearby choose it too."),
    Field("home", None, "pair", "Its own shelter, once built."),
    Field("heading", "", "value", "Current walking direction (\"\" until the first walk)."),
    Field("target", None, "pair", "A landmark being walked to: (name, x, y)."),
    Field("visited", (), "items", "Landmarks it has stood by."),
    Field("recipes", (), "rows", "(recipe key, what it made): learned from success."),
    Field("ideas", OBVIOUS_IDEAS, "items", "Recipe keys worth trying: obvious ones, and what "
          "failures hinted at."),
    Field("failed", (), "items", "Recipe keys that made nothing (\"work:x:*\": no more guesses "
          "on x), never tried again."),
    Field("read", (), "rows", "Signs already read: (x, y)."),
    Field("wrote", (), "rows", "Signs it wrote: (x, y)."),
    Field("named", (), "rows", "Places it named: (name, x, y)."),
    Field("met", (), "rows", "(agent, tick of the last invitation or talk): a pause between "
          "chats."),
    Field("seen", None, "pair", "The last agent seen, or whose sign it read: (name, x, y, "
          "tick); social agents head that way."),
    Field("lines", 0, "value", "Lines spoken in the current conversation."),
    Field("journal_day", 0, "value", "The last in-world day it wrote in its journal."),
    Field("diary", (), "items", "Notable things since the last journal entry."),
    Field("done", 0, "value", "Bits: GATHERED, CRAFTED, BUILT, WROTE, TALKED."),
    Field("walls", (), "rows", "Walls it walked into: (x, y, direction)."),
    Field("search", (0, 0), "pair", "Its search spiral: (leg, steps walked on it)."),
    Field("origin", None, "pair", "Where it first woke."),
    Field("marks", (), "rows", "Landmarks it has seen: (name, x, y)."),
    Field("company", "", "value", "Whose sign made its haunt its haunt (\"\" if it chose "
          "alone): a haunt shared with someone stays."),
    Field("stock", None, "pair", "Where building material (wood, stone, clay) was seen, the "
          "sighting nearest its place kept, while it has built nothing: (x, y)."),
    Field("since", 0, "value", "The tick it set out for its target: a landmark not reached "
          "in two days is given up (a lake, or company it will not journey away from, in "
          "the way)."),
)
NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
_SHAPES = tuple((f.name, f.default, f.shape) for f in FIELDS)
_ALL = range(len(FIELDS))
DEFAULTS: tuple[Any, ...] = tuple(f.default for f in FIELDS)


@dataclass(frozen=True, slots=True)
class Memory:
    """Everything one agent remembers, as one immutable tuple in the order of FIELDS.

    Why a tuple and not one dataclass field each? A turn reads every field at its
    start and, most turns, writes a new memory at its end; a frozen dataclass of
    twenty-two fields costs about twenty times as much to build as one wrapping
    a tuple, and the offline mind's whole turn has a budget of microseconds. Each
    field is still a named, documented, read-only property (see FIELDS).
    """

    values: tuple[Any, ...] = DEFAULTS

    def __post_init__(self) -> None:
        if not isinstance(self.values, tuple) or len(self.values) != len(FIELDS):
            raise ValueError(f"a memory holds {len(FIELDS)} values ({', '.join(NAMES)}), "
                             f"not {self.values!r:.80}")

    @classmethod
    def of(cls, **values: Any) -> Memory:
        """A memory with these fields set and the rest at their defaults."""
        unknown = sorted(set(values) - set(NAMES))
        if unknown:
            raise ValueError(f"a memory has no {', '.join(unknown)}; it has {', '.join(NAMES)}")
        return cls(tuple(values.get(f.name, f.default) for f in FIELDS))

    def replace(self, **values: Any) -> Memory:
        """This memory with some fields changed."""
        merged = dict(zip(NAMES, self.values, strict=True))
        merged.update(values)
        return Memory.of(**merged)

    def to_state(self, before: tuple[Memory, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """Plain JSON values (lists, not tuples), equal after json.dumps/loads.

        Fields at their default are left out (`from_state` restores them), so the
        state stored with every turn stays small. `before`, an earlier memory and
        the state it gave, makes this a copy of that state with only the changed
        fields converted: most turns change one or two fields of twenty-three, and
        the fields that did not change are the very same objects, found by identity
        in one pass of C (`map(is_not, ...)`), not a Python loop over all of them.
        """
        values = self.values
        if before is None:
            state: dict[str, Any] = {"v": STATE_VERSION}
            changed: Any = _ALL
        else:
            state = dict(before[1])
            changed = compress(_ALL, map(is_not, values, before[0].values))
        for index in changed:
            name, default, shape = _SHAPES[index]
            value = values[index]
            if value is default or value == default:
                state.pop(name, None)
            elif shape == "value" or value is None:
                state[name] = value
            elif shape == "rows":
                state[name] = [list(row) for row in value]
            else:
                state[name] = list(value)
        return state

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> Memory:
        """The memory a stored state describes.

        What `to_state` wrote comes back equal. Anything else that does not fit
        (a field of the wrong shape, an unknown version) falls back to that
        field's default rather than failing the agent's turn: memory is the
        mind's own convenience, and forgetting is a gentler failure than a
        crash. Collections are cut to their caps.
        """
        if not isinstance(state, Mapping) or state.get("v") != STATE_VERSION:
            return cls()
        values = []
        for f in FIELDS:
            parsed = _PARSERS[f.name](state[f.name]) if f.name in state else _BAD
            values.append(f.default if parsed is _BAD else parsed)
        return cls(tuple(values))


def _getter(index: int, doc: str) -> property:
    return property(lambda self: self.values[index], doc=doc)


for _index, _field in enumerate(FIELDS):
    setattr(Memory, _field.name, _getter(_index, _field.doc))


# ------------------------------------------------------------------ parsing helpers

_BAD = object()


def _int(raw: Any) -> Any:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else _BAD


def _str(raw: Any) -> Any:
    return raw[:MAX_TEXT] if isinstance(raw, str) else _BAD


def _pos(raw: Any) -> Any:
    if isinstance(raw, list | tuple) and len(raw) == 2 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in raw
    ):
        return (raw[0], raw[1])
    return _BAD


def _opt(parse):
    def parser(raw: Any) -> Any:
        return None if raw is None else parse(raw)
    return parser


def _shaped(*kinds: type):
    """A parser for a fixed-length list whose items have these types, in order."""
    def parser(raw: Any) -> Any:
        if not isinstance(raw, list | tuple) or len(raw) != len(kinds):
            return _BAD
        out = []
        for value, kind in zip(raw, kinds, strict=True):
            if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
                return _BAD
            if kind is str:
                if not isinstance(value, str):
                    return _BAD
                value = value[:MAX_TEXT]
            out.append(value)
        return tuple(out)
    return parser


def _many(item, cap: int):
    """A parser for a list of items; bad items are dropped, the newest `cap` kept."""
    def parser(raw: Any) -> Any:
        if not isinstance(raw, list | tuple):
            return _BAD
        kept = [v for v in (item(r) for r in raw) if v is not _BAD]
        return tuple(kept[-cap:])
    return parser


_PARSERS = {
    "anchor": _opt(_pos),
    "haunt": _str,
    "home": _opt(_pos),
    "heading": _str,
    "target": _opt(_shaped(str, int, int)),
    "visited": _many(_str, MAX_VISITED),
    "recipes": _many(_shaped(str, str), MAX_RECIPES),
    "ideas": _many(_str, MAX_IDEAS),
    "failed": _many(_str, MAX_FAILED),
    "read": _many(_pos, MAX_SIGNS),
    "wrote": _many(_pos, MAX_SIGNS),
    "named": _many(_shaped(str, int, int), MAX_NAMED),
    "met": _many(_shaped(str, int), MAX_MET),
    "seen": _opt(_shaped(str, int, int, int)),
    "lines": _int,
    "journal_day": _int,
    "diary": _many(_str, MAX_DIARY),
    "walls": _many(_shaped(int, int, str), MAX_WALLS),
    "search": _shaped(int, int),
    "origin": _opt(_pos),
    "marks": _many(_shaped(str, int, int), MAX_MARKS),
    "company": _str,
    "stock": _opt(_pos),
    "done": _int,
    "since": _int,
}


def capped(values: tuple, new: Any, cap: int) -> tuple:
    """`values` with `new` appended (moved to the end if present), the newest `cap` kept."""
    kept = tuple(v for v in values if v != new) + (new,)
    return kept[-cap:]
