"""The symbols the grid draws, in two sets: emoji, and plain ASCII for terminals without emoji.

Every cell of the grid is exactly two terminal columns wide, whatever is in it, so a
row of cells lines up and a horizontal scroll by whole cells never cuts a symbol in
half. That rules out two kinds of symbol the rest of Hearth uses freely:

- emoji written with the U+FE0F presentation selector (`core.terrain`'s '〰️', '⛰️'):
  terminals disagree about whether the pair is one or two columns wide, so a row
  holding one drifts by a column in some of them. Only emoji that are wide on their
  own (East Asian Width "W") are used here, without a selector;
- one-column symbols ('░', '·'): they are doubled or padded with a space.

Walls are drawn with one-column box-drawing pieces (`WallParts`): the grid puts them
in the column beside a cell or inside a cell's own two columns (see
`observe.tui.widgets.grid`). Where a wall takes one of a cell's columns, what the cell
holds is shown by its one-column *mark* (`Marks`) in the other.

The ASCII set is pure printable ASCII (two characters per cell, an agent is '@' and
the first letter of its name), coloured by terrain so the world stays readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rich.color import Color
from rich.style import Style

from adapters.perception import wall_junction
from core.terrain import TERRAIN_ORDER, Terrain
from observe.symbols import (
    AGENT,
    AGENT_STATES,
    CROWD,
    ITEM,
    LANDMARK,
    LANDMARK_KINDS,
    SIGN,
    TERRAIN,
    TERRAIN_COLORS,
    WALL_EAST,
    WALL_SOUTH,
)

Part = tuple[str, Style]
"""Some text and the style to draw it in: what a grid row is made of."""


def _rgb(rgb: tuple[int, int, int], scale: float = 1.0) -> Color:
    r, g, b = (max(0, min(255, round(c * scale))) for c in rgb)
    return Color.from_rgb(r, g, b)


# ---------------------------------------------------------------------- walls


def _ascii_junction(up: bool, down: bool, left: bool, right: bool) -> str:
    vertical, horizontal = up or down, left or right
    if vertical and horizontal:
        return "+"
    return "|" if vertical else ("-" if horizontal else " ")


_SIDES = [(u, d, lt, rt) for u in (False, True) for d in (False, True)
          for lt in (False, True) for rt in (False, True)]


@dataclass(frozen=True, slots=True)
class WallParts:
    """One-column pieces of wall; a door is drawn as the gap where its wall would be."""

    vertical: str
    """The edge column beside a cell with a wall on its east side."""
    horizontal: str
    """Half of a wall along a cell's south side (a cell's two columns take two)."""
    junctions: Mapping[tuple[bool, bool, bool, bool], str]
    """(up, down, left, right) -> the piece at the corner where those segments meet."""
    style: Style

    def junction(self, up: bool, down: bool, left: bool, right: bool) -> str:
        return self.junctions[(up, down, left, right)]


# ---------------------------------------------------------------------- marks


@dataclass(frozen=True, slots=True)
class Marks:
    """One-column stand-ins for a cell's contents, used where a wall takes a column."""

    agent: Part
    sign: Part
    item: Part
    landmark: Part
    terrain: tuple[Part, ...]
    """By terrain code."""


# ---------------------------------------------------------------------- glyph sets


@dataclass(frozen=True, slots=True)
class GlyphSet:
    """Everything the grid needs to draw one way (emoji or ASCII)."""

    name: str
    terrain: tuple[Part, ...]
    """Two-column glyph and style by terrain code (`core.terrain.TERRAIN_ORDER`)."""
    agent_states: Mapping[str, Part]
    """awake, asleep, journeying, talking -> glyph. With `initial_agent` it is one column
    and the agent's initial makes the second."""
    agents_many: Part
    """More than one agent in a cell (with `initial_agent`: one column, then the count)."""
    sign: Part
    item: Part
    landmarks: Mapping[str, Part]
    """Landmark kind -> glyph; kinds not listed use `landmark`."""
    landmark: Part
    marks: Marks
    walls: WallParts
    selected: Style
    """Added to the followed or selected agent's cell."""
    cursor: Style
    """Added to the cursor's cell (after everything else, so it always shows)."""
    initial_agent: bool = False
    """The ASCII set shows an agent as its state symbol and the first letter of its name."""

    def agent_part(self, names: tuple[str, ...], state: str) -> Part:
        """The glyph for the agents in one cell: one agent by state, several as a crowd."""
        if len(names) > 1:
            text, style = self.agents_many
            if self.initial_agent:
                text += str(len(names)) if len(names) < 10 else "+"
            return text, style
        text, style = self.agent_states.get(state, self.agent_states["awake"])
        if self.initial_agent:
            text += names[0][0].upper()
        return text, style

    def landmark_part(self, kind: str) -> Part:
        return self.landmarks.get(kind, self.landmark)

    def every_cell_glyph(self) -> tuple[str, ...]:
        """All two-column glyphs of the set (for the width tests)."""
        agents = [self.agent_part(names, state) for state in self.agent_states
                  for names in (("Ember",), ("Ash", "Birch"), tuple(f"A{i}" for i in range(12)))]
        parts = [*self.terrain, *agents, self.sign, self.item, *self.landmarks.values(),
                 self.landmark]
        return tuple(text for text, _ in parts)

    def every_narrow_glyph(self) -> tuple[str, ...]:
        """All one-column pieces of the set (walls and marks)."""
        marks = self.marks
        texts = [marks.agent[0], marks.sign[0], marks.item[0], marks.landmark[0],
                 *(text for text, _ in marks.terrain), self.walls.vertical,
                 self.walls.horizontal, *self.walls.junctions.values()]
        return tuple(texts)


def _by_code(table: Mapping[Terrain, Part]) -> tuple[Part, ...]:
    return tuple(table[kind] for kind in TERRAIN_ORDER)


_TERRAIN_LETTER: dict[Terrain, str] = {kind: TERRAIN[kind].ascii for kind in TERRAIN_ORDER}
"""The one-column terrain mark, in both sets: the one table's (observe/symbols.py)."""


def _emoji_set() -> GlyphSet:
    # A darkened terrain colour behind each cell keeps regions readable at a glance
    # (emoji alone make a busy picture) and lets narrow symbols keep their meaning.
    ground = {kind: Style(bgcolor=_rgb(TERRAIN_COLORS[kind], 0.45)) for kind in TERRAIN_ORDER}
    light = {kind: _rgb(TERRAIN_COLORS[kind], 1.3) for kind in TERRAIN_ORDER}
    terrain = {kind: (TERRAIN[kind].emoji, ground[kind] + Style(color=light[kind]))
               for kind in TERRAIN_ORDER}
    bold = Style(bold=True)
    marks = Marks(
        agent=(AGENT.ascii, Style(color="bright_red", bold=True)),
        sign=(SIGN.ascii, Style(color="bright_yellow", bold=True)),
        item=(ITEM.ascii, Style(color="bright_cyan", bold=True)),
        landmark=(LANDMARK.ascii, Style(color="bright_magenta", bold=True)),
        terrain=_by_code({kind: (_TERRAIN_LETTER[kind], Style(color=light[kind]))
                          for kind in TERRAIN_ORDER}),
    )
    return GlyphSet(
        name="emoji",
        terrain=_by_code(terrain),
        agent_states=MappingProxyType({state: (symbol.emoji, bold)
                                       for state, symbol in AGENT_STATES.items()}),
        agents_many=(CROWD.emoji, bold),
        sign=(SIGN.emoji, Style()),
        item=(ITEM.emoji, Style()),
        landmarks=MappingProxyType({kind: (symbol.emoji, Style())
                                    for kind, symbol in LANDMARK_KINDS.items()}),
        landmark=(LANDMARK.emoji, Style()),
        marks=marks,
        walls=WallParts(WALL_EAST.emoji, WALL_SOUTH.emoji,
                        MappingProxyType({s: wall_junction(*s) for s in _SIDES}),
                        Style(color="bright_white", bold=True)),
        selected=Style(bgcolor="dark_orange3"),
        cursor=Style(bgcolor="grey85", color="black"),
    )


def _ascii_set() -> GlyphSet:
    colour = {kind: Style(color=_rgb(TERRAIN_COLORS[kind], 1.15)) for kind in TERRAIN_ORDER}
    agent = Style(color="bright_red", bold=True)
    return GlyphSet(
        name="ascii",
        terrain=_by_code({kind: (_TERRAIN_LETTER[kind] * 2, colour[kind])
                          for kind in TERRAIN_ORDER}),
        agent_states=MappingProxyType({
            state: (symbol.ascii, Style(color="red") if state == "asleep" else agent)
            for state, symbol in AGENT_STATES.items()}),
        agents_many=(CROWD.ascii, agent),
        sign=(SIGN.ascii * 2, Style(color="bright_yellow", bold=True)),
        item=(ITEM.ascii * 2, Style(color="bright_cyan", bold=True)),
        landmarks=MappingProxyType({}),
        landmark=(LANDMARK.ascii * 2, Style(color="bright_magenta", bold=True)),
        marks=Marks(
            agent=(AGENT.ascii, agent),
            sign=(SIGN.ascii, Style(color="bright_yellow", bold=True)),
            item=(ITEM.ascii, Style(color="bright_cyan", bold=True)),
            landmark=(LANDMARK.ascii, Style(color="bright_magenta", bold=True)),
            terrain=_by_code({kind: (_TERRAIN_LETTER[kind], colour[kind])
                              for kind in TERRAIN_ORDER}),
        ),
        walls=WallParts(WALL_EAST.ascii, WALL_SOUTH.ascii,
                        MappingProxyType({s: _ascii_junction(*s) for s in _SIDES}),
                        Style(color="bright_white", bold=True)),
        selected=Style(bgcolor="yellow", color="black"),
        cursor=Style(reverse=True),
        initial_agent=True,
    )


EMOJI = _emoji_set()
ASCII = _ascii_set()
