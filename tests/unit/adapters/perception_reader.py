"""An independent reader of perception texts: it rebuilds, from the words alone, what
the agent was shown (the window's terrain, walls and doors, agents, objects,
landmarks, named places, the world's edge, the four steps around, the nearest
ground of each kind).

It shares no code with the builder (`adapters.perception*`): its glyph table is
written out here from the legend the agents are given, and it measures symbols the
way a terminal draws them. A text it cannot read raises `Unreadable`; a text whose
parts disagree with each other (an offset that is not the coordinates' offset, a
key entry whose cell shows another mark) does too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

GROUND = {"💧": "water", "〰️": "coast", "░": "sand", "·": "grass", "🌲": "forest",
          "⛰️": "hill", "🪨": "stone"}
EDGE = "▓▓"
SIGN, ITEM = "📜", "✨"
UPPER, LOWER, DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "123456789"
RANK = {"self": 0, "agent": 1, "landmark": 2, "place": 3, "sign": 4, "item": 5}
"""Which mark a cell shows when it holds several (the legend's order)."""
WALL_GLYPHS = set("│─┌┐└┘├┤┬┴┼╎╌▓ ")
SIDES = ("north", "east", "south", "west")
STEP = {"north": (0, -1), "east": (1, 0), "south": (0, 1), "west": (-1, 0)}


class Unreadable(ValueError):
    """The text does not say what it should, or contradicts itself."""


def mark_kind(mark: str) -> str:
    if mark == "@":
        return "self"
    if mark in UPPER or mark == "👤":
        return "agent"
    if mark in DIGITS or mark == "▲":
        return "landmark"
    if mark in LOWER or mark == "⚑":
        return "place"
    if mark == SIGN:
        return "sign"
    if mark == ITEM:
        return "item"
    raise Unreadable(f"unknown mark {mark!r}")


@dataclass
class Reading:
    me: tuple[int, int] = (0, 0)
    ground: str = ""
    night: bool = False
    radius: int = 0
    xs: range = range(0)
    ys: range = range(0)
    edges: set[str] = field(default_factory=set)
    terrain: dict[tuple[int, int], str] = field(default_factory=dict)
    walls: dict[tuple[int, int, str], str] = field(default_factory=dict)
    """(x, y, "e" or "s") -> "wall" or "door", for edges between two cells of the window."""
    agents: dict[str, tuple[tuple[int, int], str]] = field(default_factory=dict)
    """name -> (position, "asleep", "talking" or "")."""
    landmarks: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Landmarks in view (on the map)."""
    far_landmarks: dict[str, tuple[int, int]] = field(default_factory=dict)
    places: list[tuple[str, tuple[int, int]]] = field(default_factory=list)
    objects: list[tuple[str, tuple[int, int]]] = field(default_factory=list)
    """(phrase, position): "a sign", "a pile of 3 wood", "a carved_bowl"."""
    steps: dict[str, tuple[str, bool, str]] = field(default_factory=dict)
    """side -> (terrain or "edge", can step, "wall", "door" or "")."""
    nearest: dict[str, tuple[int, int]] = field(default_factory=dict)
    shelter: bool = False
    offsets: int = 0
    """Offsets read and checked against their coordinates."""


# ---------------------------------------------------------------------- text pieces


def graphemes(line: str) -> list[str]:
    out: list[str] = []
    for ch in line:
        if ch == "\ufe0f" and out:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def columns(g: str) -> int:
    if "\ufe0f" in g:
        return 2
    return 2 if unicodedata.east_asian_width(g[0]) in "WF" else 1


def chunks(line: str) -> list[str]:
    """A map line cut into its slots: two columns, one column, two columns, ..."""
    out, current, width, want = [], "", 0, 2
    for g in graphemes(line):
        current += g
        width += columns(g)
        if width > want:
            raise Unreadable(f"a symbol straddles a slot in {line!r}")
        if width == want:
            out.append(current)
            current, width, want = "", 0, 3 - want
    if current:
        raise Unreadable(f"{line!r} ends inside a slot")
    return out


OFFSET = r"(?:\d+ (?:north|south)(?:, \d+ (?:east|west))?|\d+ (?:east|west))"
PLACE_AT = re.compile(rf"(?P<off>{OFFSET}), at \((?P<x>\d+), (?P<y>\d+)\)")


def parse_offset(text: str) -> tuple[int, int]:
    dx = dy = 0
    for part in text.split(", "):
        n, side = part.split(" ")
        ddx, ddy = STEP[side]
        dx, dy = dx + ddx * int(n), dy + ddy * int(n)
    return dx, dy


def located(reading: Reading, match: re.Match[str]) -> tuple[int, int]:
    """The coordinates of "<offset>, at (x, y)", checked against the offset."""
    x, y = int(match["x"]), int(match["y"])
    dx, dy = parse_offset(match["off"])
    if (x - reading.me[0], y - reading.me[1]) != (dx, dy):
        raise Unreadable(f"{match[0]!r} is not that offset from {reading.me}")
    reading.offsets += 1
    return x, y


# ---------------------------------------------------------------------- the reader


HEADER = re.compile(
    r"Map, north at the top: by (?P<when>day|night) you see (?P<r>\d+) cells? each way; "
    r"columns x (?P<x0>\d+) to (?P<x1>\d+) from west to east, rows y (?P<y0>\d+) to "
    r"(?P<y1>\d+) from north to south\.(?: ▓▓ is the world's edge, to the (?P<ends>.+)\.)?$")
KEY = re.compile(
    rf"^(?P<mark>\S+) (?P<what>.*): (?:(?P<here>here(?: with you)?)|"
    rf"(?P<off>{OFFSET}), at \((?P<x>\d+), (?P<y>\d+)\), on (?P<on>[a-z]+))\.$")
ONE_STEP = re.compile(
    r"^One step (?P<side>north|east|south|west)(?::(?P<edge> the world's edge; nobody goes "
    r"that way)|, \((?P<x>\d+), (?P<y>\d+)\): (?P<ground>[a-z]+); (?P<verdict>.*))\.$")
VERDICTS = {
    "you can step there": (True, ""),
    "through a door in a wall, you can step there": (True, "door"),
    "it cannot be entered": (False, ""),
    "a wall without a door stands in the way": (False, "wall"),
    "a wall without a door stands in the way, and the cell cannot be entered": (False, "wall"),
    "a door in a wall leads there, but the cell cannot be entered": (False, "door"),
}


def read(text: str) -> Reading:
    """Everything the text says about the window; Unreadable if it cannot be read."""
    reading = Reading()
    lines = text.split("\n")
    where = re.search(r"^You are at \((\d+), (\d+)\), standing on ([a-z]+)\.$", text, re.M)
    if where is None:
        raise Unreadable("no position")
    reading.me = (int(where[1]), int(where[2]))
    reading.ground = where[3]
    at = next((i for i, line in enumerate(lines) if line.startswith("Map, north")), None)
    if at is None:
        raise Unreadable("no map")
    head = HEADER.match(lines[at])
    if head is None:
        raise Unreadable(f"unreadable map header {lines[at]!r}")
    reading.night = head["when"] == "night"
    reading.radius = int(head["r"])
    reading.xs = range(int(head["x0"]), int(head["x1"]) + 1)
    reading.ys = range(int(head["y0"]), int(head["y1"]) + 1)
    if head["ends"]:
        words = head["ends"].replace(" and ", ", ").split(", ")
        reading.edges = set(words)
    drawn, i = _read_map(reading, lines, at + 1)
    entries = _read_key(reading, lines, i)
    _check_marks(reading, entries, drawn)
    _read_surroundings(reading, text)
    reading.shelter = "You are inside a shelter" in text
    return reading


def _read_map(reading: Reading, lines: list[str],
              i: int) -> tuple[dict[tuple[int, int], str], int]:
    """The map's cells and walls; (the marks drawn by cell, the next line's index)."""
    west, east = "west" in reading.edges, "east" in reading.edges
    width = len(reading.xs) + west + east
    drawn: dict[tuple[int, int], str] = {}

    def border(line: str) -> None:
        if chunks(line)[::2] != [EDGE] * width or any(c != " " for c in chunks(line)[1::2]):
            raise Unreadable(f"not the world's edge: {line!r}")

    def inner(line: str) -> list[str]:
        parts = chunks(line)
        if len(parts) != 2 * width - 1:
            raise Unreadable(f"{line!r} has {len(parts)} slots, not {2 * width - 1}")
        if west:
            if parts[0] != EDGE:
                raise Unreadable(f"no edge to the west in {line!r}")
            parts = parts[2:]
        if east:
            if parts[-1] != EDGE:
                raise Unreadable(f"no edge to the east in {line!r}")
            parts = parts[:-2]
        return parts

    corners: dict[int, list[str]] = {}
    """y -> the characters where walls meet below row y (a line of walls drawn)."""
    if "north" in reading.edges:
        border(lines[i])
        i += 1
    for row, y in enumerate(reading.ys):
        parts = inner(lines[i])
        i += 1
        for col, x in enumerate(reading.xs):
            symbol = parts[2 * col].rstrip(" ") if parts[2 * col] != "  " else ""
            if symbol in GROUND:
                reading.terrain[(x, y)] = GROUND[symbol]
            else:
                drawn[(x, y)] = symbol
            if col:
                between = parts[2 * col - 1]
                if between == "│":
                    reading.walls[(x - 1, y, "e")] = "wall"
                elif between == "╎":
                    reading.walls[(x - 1, y, "e")] = "door"
                elif between != " ":
                    raise Unreadable(f"{between!r} between two cells")
        last = row == len(reading.ys) - 1
        if not last and i < len(lines) and lines[i] and set(lines[i]) <= WALL_GLYPHS \
                and set(lines[i]) - {" ", "▓"}:
            parts = inner(lines[i])
            i += 1
            corners[y] = parts[1::2]
            for col, x in enumerate(reading.xs):
                under = parts[2 * col]
                if under == "──":
                    reading.walls[(x, y, "s")] = "wall"
                elif under == "╌╌":
                    reading.walls[(x, y, "s")] = "door"
                elif under != "  ":
                    raise Unreadable(f"{under!r} between two rows")
    if "south" in reading.edges:
        border(lines[i])
        i += 1
    _check_corners(reading, corners)
    return drawn, i


CORNERS = {  # (up, down, left, right) walls meeting -> the character drawn there
    (0, 0, 0, 0): " ", (1, 0, 0, 0): "│", (0, 1, 0, 0): "│", (1, 1, 0, 0): "│",
    (0, 0, 1, 0): "─", (0, 0, 0, 1): "─", (0, 0, 1, 1): "─",
    (0, 1, 0, 1): "┌", (0, 1, 1, 0): "┐", (1, 0, 0, 1): "└", (1, 0, 1, 0): "┘",
    (1, 1, 0, 1): "├", (1, 1, 1, 0): "┤", (0, 1, 1, 1): "┬", (1, 0, 1, 1): "┴",
    (1, 1, 1, 1): "┼",
}


def _check_corners(reading: Reading, corners: dict[int, list[str]]) -> None:
    """Where walls meet, the character agrees with the walls read (doors join nothing);
    a line of walls left out holds none."""
    def wall(x: int, y: int, side: str) -> int:
        return int(reading.walls.get((x, y, side)) == "wall")

    for y in reading.ys[:-1]:
        drawn = corners.get(y)
        for col, x in enumerate(reading.xs[1:]):
            want = CORNERS[(wall(x - 1, y, "e"), wall(x - 1, y + 1, "e"),
                            wall(x - 1, y, "s"), wall(x, y, "s"))]
            got = " " if drawn is None else drawn[col]
            if got != want:
                raise Unreadable(f"walls meet as {got!r} below row {y}, not {want!r}")
        if drawn is None and any((x, y, "s") in reading.walls for x in reading.xs):
            raise Unreadable(f"a wall below row {y} with no line drawn for it")


def _read_key(reading: Reading, lines: list[str], i: int) -> list[tuple[str, str, tuple]]:
    """The key's entries: (mark, what, position); the ground under each goes in terrain."""
    entries = []
    while i < len(lines) and lines[i] and lines[i] != "Nobody else is in sight.":
        m = KEY.match(lines[i])
        if m is None:
            raise Unreadable(f"unreadable key line {lines[i]!r}")
        if m["here"]:
            pos = reading.me
        else:
            pos = located(reading, m)
            if reading.terrain.setdefault(pos, m["on"]) != m["on"]:
                raise Unreadable(f"{lines[i]!r}: the map says {reading.terrain[pos]}")
        entries.append((m["mark"], m["what"], pos))
        i += 1
    for mark, what, pos in entries:
        kind = mark_kind(mark)
        if kind == "agent":
            state = ""
            for s in ("asleep", "talking"):
                if what.endswith(f" ({s})"):
                    what, state = what[: -len(s) - 3], s
            if what in reading.agents:
                raise Unreadable(f"{what} named twice")
            reading.agents[what] = (pos, state)
        elif kind == "landmark":
            if not what.endswith(" (landmark)"):
                raise Unreadable(f"{what!r} is marked as a landmark")
            reading.landmarks[what[: -len(" (landmark)")]] = pos
        elif kind == "place":
            if not what.endswith(" (named place)"):
                raise Unreadable(f"{what!r} is marked as a place")
            reading.places.append((what[: -len(" (named place)")], pos))
        else:
            if (kind == "sign") != (what == "a sign") or not what.startswith("a "):
                raise Unreadable(f"{mark} cannot be {what!r}")
            reading.objects.append((what, pos))
    return entries


def _check_marks(reading: Reading, entries: list[tuple[str, str, tuple]],
                 drawn: dict[tuple[int, int], str]) -> None:
    """Each marked cell shows the first of its things' marks; each cell's ground is known."""
    if reading.terrain.setdefault(reading.me, reading.ground) != reading.ground:
        raise Unreadable("your own cell shows ground")
    at: dict[tuple[int, int], list[str]] = {reading.me: ["@"]}
    for mark, _, pos in entries:
        at.setdefault(pos, []).append(mark)
    for pos, marks in at.items():
        top = min(marks, key=lambda m: RANK[mark_kind(m)])
        if drawn.get(pos) != top:
            raise Unreadable(f"{pos} shows {drawn.get(pos)!r}, the key says {marks}")
    for pos in drawn:
        if pos not in at:
            raise Unreadable(f"{pos} shows {drawn[pos]!r}, which the key does not name")
    missing = [(x, y) for y in reading.ys for x in reading.xs if (x, y) not in reading.terrain]
    if missing:
        raise Unreadable(f"no ground known for {missing}")


def _read_surroundings(reading: Reading, text: str) -> None:
    for line in text.split("\n"):
        step = ONE_STEP.match(line)
        if step:
            if step["edge"]:
                reading.steps[step["side"]] = ("edge", False, "")
                continue
            dx, dy = STEP[step["side"]]
            if (int(step["x"]), int(step["y"])) != (reading.me[0] + dx, reading.me[1] + dy):
                raise Unreadable(f"{line!r} is not one step away")
            if step["verdict"] not in VERDICTS:
                raise Unreadable(f"unreadable verdict in {line!r}")
            can, edge = VERDICTS[step["verdict"]]
            reading.steps[step["side"]] = (step["ground"], can, edge)
        elif line.startswith("Nearest of each ground in view: "):
            body = line[len("Nearest of each ground in view: "):].removesuffix(".")
            for part in body.split("; "):
                ground, rest = part.split(" ", 1)
                m = PLACE_AT.fullmatch(rest)
                if m is None or ground in reading.nearest:
                    raise Unreadable(f"unreadable ground {part!r}")
                reading.nearest[ground] = located(reading, m)
        elif line.startswith("Landmarks beyond your view: "):
            body = line[len("Landmarks beyond your view: "):].removesuffix(".")
            for m in re.finditer(rf"(?P<name>.+?), {PLACE_AT.pattern}(?:; |$)", body):
                reading.far_landmarks[m["name"]] = located(reading, m)
