"""The one table of symbols: what everything any view draws means, in every way it is drawn.

The observer's emoji and ASCII grids (observe/tui/glyphs.py builds its glyph sets from
here), its legend and help (observe/tui/legend.py, made from those sets), `--map` in a
terminal and the PNG it writes with a legend beside it (observe/worldmap.py) all draw
from this table, so a symbol means one thing everywhere and every symbol drawn is in
the one legend (`tests/unit/observe/test_one_legend.py` draws them all and looks).

- `emoji`: the two terminal columns the emoji grid draws ("" where it draws none);
- `ascii`: the one character the ASCII grid draws (twice, for a cell; an agent's is
  followed by its name's first letter) and `--map` draws (one per block);
- `rgb`: the colour the PNG and the colour terminal map paint (None: not painted).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from core.terrain import TERRAIN_ASCII, TERRAIN_ORDER, Terrain

RGB = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Symbol:
    meaning: str
    emoji: str
    ascii: str
    rgb: RGB | None = None


TERRAIN_COLORS: dict[Terrain, RGB] = {
    Terrain.WATER: (24, 66, 140),     # deep blue
    Terrain.COAST: (72, 176, 190),    # turquoise shallows
    Terrain.SAND: (232, 214, 158),    # pale sand
    Terrain.GRASS: (112, 184, 76),    # fresh green
    Terrain.FOREST: (30, 98, 46),     # dark green
    Terrain.HILL: (142, 124, 72),     # olive brown
    Terrain.STONE: (138, 138, 138),   # grey
}
AGENT_COLOR: RGB = (255, 36, 36)       # bright red
LANDMARK_COLOR: RGB = (236, 40, 236)   # magenta

_TERRAIN_EMOJI = {
    Terrain.WATER: "🌊", Terrain.COAST: "〰", Terrain.SAND: "░░", Terrain.GRASS: "· ",
    Terrain.FOREST: "🌲", Terrain.HILL: "🗻", Terrain.STONE: "🪨",
}
TERRAIN = MappingProxyType({
    kind: Symbol(kind.value, _TERRAIN_EMOJI[kind], TERRAIN_ASCII[kind], TERRAIN_COLORS[kind])
    for kind in TERRAIN_ORDER})
"""The ground, by kind: its one ASCII character is core/terrain.py's (terrain.yaml's)."""

AGENT_STATES = MappingProxyType({
    "awake": Symbol("an agent, awake", "🧑", "@", AGENT_COLOR),
    "asleep": Symbol("an agent, asleep", "😴", "z", AGENT_COLOR),
    "journeying": Symbol("an agent on a journey", "🚶", ">", AGENT_COLOR),
    "talking": Symbol("an agent in a conversation", "💬", '"', AGENT_COLOR),
})
AGENT = AGENT_STATES["awake"]
"""An agent where a view tells no state (`--map`, the PNG)."""
CROWD = Symbol("two or more agents in one cell", "👥", "@", AGENT_COLOR)
SIGN = Symbol("a sign an agent wrote", "📜", "?")
ITEM = Symbol("an item or resource on the ground", "✨", "*")
LANDMARK = Symbol("a landmark", "⭐", "!", LANDMARK_COLOR)
LANDMARK_KINDS = MappingProxyType({
    kind: Symbol("landmark: " + kind.replace("_", " "), emoji, "!", LANDMARK_COLOR)
    for kind, emoji in (("spring", "⛲"), ("old_tree", "🌳"), ("standing_stone", "🗿"),
                        ("cave_mouth", "🦇"), ("reed_bed", "🌾"), ("hot_spring", "💨"),
                        ("lookout", "🔭"), ("ancient_ruins", "🏺"),
                        ("driftwood_shore", "🪵"))})
WALL_EAST = Symbol("a wall on a cell's east side", "│", "|")
WALL_SOUTH = Symbol("a wall along a cell's south side", "─", "-")
WALL_CORNER = Symbol("where walls meet", "┌┐└┘├┤┬┴┼", "+")
"""Every corner piece the emoji grid draws, and the ASCII grid's one."""

LEGEND: tuple[Symbol, ...] = (
    *TERRAIN.values(), *AGENT_STATES.values(), CROWD, SIGN, ITEM, LANDMARK,
    *LANDMARK_KINDS.values(), WALL_EAST, WALL_SOUTH, WALL_CORNER)
"""Every symbol, in the order legends list them."""
MAP_LEGEND: tuple[Symbol, ...] = (*TERRAIN.values(), AGENT, LANDMARK)
"""What `--map` and its PNG draw: the ground, agents and landmarks."""
