"""The legend: every symbol the grid draws, with what it means, for the glyph set in use.

Made from the `GlyphSet` itself (observe/tui/glyphs.py), so a symbol added there shows
up here without anyone remembering to: the test compares the legend with
`GlyphSet.every_cell_glyph` and `every_narrow_glyph`. The help screen (?) shows it, and
`i` shows it beside the grid (`LegendPanel`).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.terrain import TERRAIN_ORDER, Terrain
from observe.tui.glyphs import GlyphSet, Part

AGENT_WORDS = {
    "awake": "an agent, awake",
    "asleep": "an agent, asleep",
    "journeying": "an agent on a journey",
    "talking": "an agent in a conversation",
}

Row = tuple[tuple[Part, ...], str]
"""The symbols of one legend line (each with its style) and what they mean."""


def legend_rows(glyphs: GlyphSet) -> list[tuple[str, list[Row]]]:
    """The legend in sections: (title, rows)."""
    ground = glyphs.terrain[TERRAIN_ORDER.index(Terrain.GRASS)][1]  # drawn over grass
    terrain: list[Row] = [((glyphs.terrain[code],), kind.value)
                          for code, kind in enumerate(TERRAIN_ORDER)]
    agents: list[Row] = []
    for state in glyphs.agent_states:
        text, style = glyphs.agent_part(("Ember",), state)
        words = AGENT_WORDS.get(state, f"an agent, {state}")
        if glyphs.initial_agent and not agents:
            words += " (E: its name's first letter)"
        agents.append((((text, ground + style),), words))
    crowd = glyphs.agent_part(("Ash", "Birch"), "awake")
    many = glyphs.agent_part(tuple(f"A{i}" for i in range(12)), "awake")
    crowd_parts = (crowd,) if crowd == many else (crowd, many)
    agents.append((tuple((t, ground + s) for t, s in crowd_parts),
                   "two or more agents in one cell"
                   + (" (how many; + for ten or more)" if glyphs.initial_agent else "")))
    agents.append(((("  ", ground + glyphs.selected),), "the chosen or followed agent's cell"))
    agents.append(((("  ", ground + glyphs.cursor),), "the cursor (the Cell tab describes it)"))
    things: list[Row] = [
        (((glyphs.sign[0], ground + glyphs.sign[1]),), "a sign an agent wrote"),
        (((glyphs.item[0], ground + glyphs.item[1]),), "an item or resource on the ground"),
    ]
    for kind, part in glyphs.landmarks.items():
        things.append((((part[0], ground + part[1]),), "landmark: " + kind.replace("_", " ")))
    things.append((((glyphs.landmark[0], ground + glyphs.landmark[1]),),
                   "another landmark" if glyphs.landmarks else "a landmark"))
    walls = glyphs.walls
    wall_style = ground + walls.style
    corners = sorted({piece for piece in walls.junctions.values() if piece.strip()}
                     - {walls.vertical, walls.horizontal})
    building: list[Row] = [
        (((walls.vertical, wall_style),), "a wall on a cell's east side"),
        (((walls.horizontal * 2, wall_style),), "a wall along a cell's south side"),
        (tuple((c, wall_style) for c in corners), "where walls meet"),
        ((("  ", ground),), "a door: a gap in a wall"),
    ]
    marks = glyphs.marks
    narrow: list[Row] = [
        (((marks.agent[0], ground + marks.agent[1]),), "an agent"),
        (((marks.sign[0], ground + marks.sign[1]),), "a sign"),
        (((marks.item[0], ground + marks.item[1]),), "an item"),
        (((marks.landmark[0], ground + marks.landmark[1]),), "a landmark"),
    ]
    narrow += [(((text, glyphs.terrain[code][1] + Style()),), TERRAIN_ORDER[code].value)
               for code, (text, _) in enumerate(marks.terrain)]
    return [
        ("Ground", terrain),
        ("Agents", agents),
        ("Things", things),
        ("Walls", building),
        ("Beside a wall (in and around shelters) a cell has one column left, so it shows "
         "a one-column mark", narrow),
    ]


def legend_text(glyphs: GlyphSet) -> Text:
    """The legend as one Text, a symbol and its meaning a line."""
    text = Text(end="")
    text.append(f"Legend ({glyphs.name}; a switches emoji / ASCII)", "bold")
    for title, rows in legend_rows(glyphs):
        text.append(f"\n{title}", "underline")
        for parts, words in rows:
            text.append("\n ")
            width = 0
            for i, (piece, style) in enumerate(parts):
                if i:
                    text.append(" ")
                    width += 1
                text.append(piece, style)
                width += Text(piece).cell_len
            text.append(" " * max(1, 6 - width))
            text.append(words)
    return text


class LegendPanel(VerticalScroll):
    """The legend beside the grid, shown and hidden with `i`."""

    DEFAULT_CSS = """
    LegendPanel {
        width: 44;
        max-width: 60%;
        height: 1fr;
        display: none;
        border-left: tall $primary-darken-2;
    }
    LegendPanel.-shown { display: block; }
    LegendPanel > Static { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._glyphs: GlyphSet | None = None
        self._body = Static("")

    def compose(self) -> ComposeResult:
        yield self._body

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show_for(self, glyphs: GlyphSet) -> None:
        """Describe `glyphs` (only redrawn when the set changes)."""
        if glyphs is not self._glyphs:
            self._glyphs = glyphs
            self._body.update(legend_text(glyphs))
