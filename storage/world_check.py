"""Every stored row held to the domain's rules, read through SQLite only.

`check_world(db)` lists what is wrong with a world, one line a problem, each naming
the table, the row and what is wrong ("agents 'Ember': position (600, 3) lies
outside the 40x40 world"). It only reads: `hearth --check` prints the list, and a
run or the observer refuses to load a world that has any (the first, in one line),
so a damaged row is reported before it can raise a traceback mid-tick or be
written back over.

What is checked: values within the world's bounds, positive counts, names of known
kinds (terrain, weather, edges, privacy, statuses), JSON that parses and has the
shape its reader expects, references that resolve (agents, conversations), and a
tick counter not behind the turns, events and metrics recorded at it. Resource and
item names are held to the domain's form (`core.objects.item_type`), not to the
recipes of the day: config may change between runs and a stack stays meaningful.
The engine's records (minds, tick progress, events, turns, metrics, the events'
numbering in sqlite_sequence) and the world's identity are checked in
storage/world_check_records.py, events and turns only as far as a start reads them
(they can hold millions of rows).

The Gardener's tables are not checked, by design: anyone may write them, and the engine
judges each request as it applies it (CLAUDE.md). A request it cannot read (params not
JSON, a kind or its cycle's level unknown, a cycle that is not there, bytes that are
not text) is marked refused with the reason, which `--status` shows in its line; a
status it does not know leaves the row as written, never judged, shown as stored. The
engine parses no JSON of a cycle, and the Gardener takes reasons that do not parse as
none. Refusing the world over such a row would let any writer stop it;
test_damaged_rows.py (test_a_damaged_gardener_row_is_judged_not_fatal) proves this.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from core.agent import Journey
from core.conversation import InvitationStatus, Privacy
from core.objects import item_type
from core.places import NamedPlace, place_key
from core.raster import TerrainRaster
from core.terrain import Terrain, Weather
from core.types import Direction, Position, agent_name
from storage.database import Database
from storage.world_check_common import KnownWorld, Problems, is_int, read_json, show
from storage.world_check_records import check_records

RASTER_ENCODING = "zlib:u8"  # the one storage/repositories/world.py writes
_TERRAINS = frozenset(t.value for t in Terrain)
_WEATHERS = frozenset(w.value for w in Weather)
_EDGES = frozenset(d.value for d in Direction if d is not Direction.DOWN)
_PRIVACIES = frozenset(p.value for p in Privacy)
_STATUSES = frozenset(s.value for s in InvitationStatus)


async def check_world(db: Database) -> list[str]:
    """Every problem of the world in `db`, in table order; empty when it is sound. All
    read at one committed moment: a writer may be living the world meanwhile."""
    async with db.one_moment():
        return await _check_all(db)


async def _check_all(db: Database) -> list[str]:
    tables = {r[0] for r in await db.fetchall(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    found = Problems()
    world = await _check_world_state(db, tables, found)
    if world is None:
        return found.lines
    steps: list[tuple[str, Callable[[Database, KnownWorld, Problems], Awaitable[None]]]] = [
        ("terrain_raster", _check_raster), ("cells", _check_cells), ("agents", _check_agents),
        ("inventory_stacks", _check_inventory), ("objects", _check_objects),
        ("named_places", _check_places), ("structures", _check_structures),
        ("conversations", _check_conversations), ("edge_materials", _check_edges_and_spent),
    ]
    for table, step in steps:  # an old file's missing tables come with its migration
        if table in tables:
            await step(db, world, found)
    await check_records(db, world, found)
    return found.lines


async def _check_world_state(db: Database, tables: set[str], found: Problems) -> KnownWorld | None:
    if "world_state" not in tables or "agents" not in tables:
        found.add("world_state", "1", "the table is missing: this file holds no world")
        return None
    rows = await db.fetchall("SELECT id, width, height, seed, tick, weather FROM world_state")
    if not rows:
        found.add("world_state", "1", "no row: the world was never made (run hearth --init)")
        return None
    _id, width, height, seed, tick, weather = rows[0]
    sound = True
    for name, value in (("width", width), ("height", height)):
        if not is_int(value) or value < 1:
            found.add("world_state", "1", f"{name} {show(value)} is not a positive whole number")
            sound = False
    if not is_int(seed):
        found.add("world_state", "1", f"seed {show(seed)} is not a whole number")
    if not is_int(tick) or tick < 0:
        found.add("world_state", "1", f"tick {show(tick)} is not a whole number from 0")
        tick = None
    if weather not in _WEATHERS:
        found.add("world_state", "1", f"weather {show(weather)} is not one of "
                                      f"{', '.join(sorted(_WEATHERS))}")
    if tick is not None:
        ahead = []  # its own turns, events and metrics, recorded at later ticks
        for table, column in (("turns", "turns"), ("events", "events"),
                              ("tick_metrics", "tick metrics")):
            if table in tables:
                row = await db.fetchone(f"SELECT MAX(tick) FROM {table}")
                if row and is_int(row[0]) and row[0] > tick:
                    ahead.append((row[0], column))
        if ahead:
            latest, column = max(ahead)
            found.add("world_state", "1", f"tick {tick} is behind the world's own {column}, "
                                          f"recorded up to tick {latest} (the counter was "
                                          "set back)")
    names = frozenset(str(r[0]) for r in await db.fetchall("SELECT name FROM agents"))
    return KnownWorld(width, height, names, tables, tick) if sound else None


async def _check_raster(db: Database, world: KnownWorld, found: Problems) -> None:
    for width, height, encoding, data in await db.fetchall(
            "SELECT width, height, encoding, data FROM terrain_raster"):
        if (width, height) != (world.width, world.height):
            found.add("terrain_raster", "1", f"is {show(width)}x{show(height)}, the world "
                                             f"{world.width}x{world.height}")
            continue
        if encoding != RASTER_ENCODING:
            found.add("terrain_raster", "1", f"encoding {show(encoding)} is not "
                                             f"{RASTER_ENCODING!r}")
            continue
        try:
            TerrainRaster(width, height, zlib.decompress(data))
        except (zlib.error, ValueError, TypeError) as exc:
            found.add("terrain_raster", "1", f"the terrain is damaged ({show(str(exc))})")


def _edges_wrong(text: Any) -> str | None:
    if not isinstance(text, str):
        return f"{show(text)} is not a list of edges"
    stray = [p for p in text.split(",") if p and p not in _EDGES]
    if stray:
        return f"{show(stray[0])} is not an edge (north, south, east or west)"
    return None


async def _check_cells(db: Database, world: KnownWorld, found: Problems) -> None:
    for x, y, terrain, walls, doors in await db.fetchall(
            "SELECT x, y, terrain, walls, doors FROM cells"):
        key = f"({x}, {y})"
        if wrong := world.outside(x, y):
            found.add("cells", key, wrong)
        if terrain not in _TERRAINS:
            found.add("cells", key, f"terrain {show(terrain)} is not one of "
                                    f"{', '.join(t.value for t in Terrain)}")
        wall_wrong, door_wrong = _edges_wrong(walls), _edges_wrong(doors)
        if wall_wrong:
            found.add("cells", key, f"walls: {wall_wrong}")
        if door_wrong:
            found.add("cells", key, f"doors: {door_wrong}")
        if not (wall_wrong or door_wrong):
            stray = set(doors.split(",")) - set(walls.split(",")) - {""}
            if stray:
                found.add("cells", key, f"a door on the {sorted(stray)[0]} edge has no wall")


async def _check_agents(db: Database, world: KnownWorld, found: Problems) -> None:
    for name, model_id, x, y, journey, known, last_active in await db.fetchall(
            "SELECT name, model_id, x, y, journey, known_agents, last_active_tick FROM agents"):
        key = show(name)
        try:
            agent_name(name)
        except ValueError:
            found.add("agents", key, "the name is not an agent's name (1-32 letters, digits, "
                                     "'_' or '-', a letter first)")
        if not isinstance(model_id, str) or not model_id.strip():
            found.add("agents", key, f"model_id {show(model_id)} is empty")
        if wrong := world.outside(x, y):
            found.add("agents", key, wrong)
        if not is_int(last_active):
            found.add("agents", key, f"last_active_tick {show(last_active)} is not a whole number")
        if journey is not None and (wrong := _journey_wrong(journey, world)):
            found.add("agents", key, f"journey {wrong}")
        names, wrong = read_json(known)
        if wrong:
            found.add("agents", key, f"known_agents {wrong}")
        elif not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            found.add("agents", key, f"known_agents {show(names)} is not a list of names")
        elif name in names:
            found.add("agents", key, "known_agents names the agent itself")
        elif stray := [n for n in names if n not in world.agents]:
            found.add("agents", key, f"known_agents names {show(stray[0])}, who is no agent")


def _journey_wrong(text: Any, world: KnownWorld) -> str | None:
    raw, wrong = read_json(text)
    if wrong:
        return wrong
    if not isinstance(raw, dict) or not {"destination", "path", "progress"} <= raw.keys():
        return "is not an object with destination, path and progress"
    path = raw["path"]
    if not isinstance(path, list):
        return f"path {show(path)} is not a list of [x, y] pairs"
    points = []
    for step in [raw["destination"], *path]:
        point, wrong = world.point(step)
        if wrong:
            return f"goes to {wrong}"
        points.append(point)
    progress, seen = raw["progress"], raw.get("seen", [])
    if not is_int(progress):
        return f"progress {show(progress)} is not a whole number"
    if not isinstance(seen, list) or not all(isinstance(n, str) for n in seen):
        return f"seen {show(seen)} is not a list of names"
    try:
        Journey(points[0], tuple(points[1:]), progress, frozenset(seen))
    except ValueError as exc:
        return f"breaks a rule: {exc}"
    return None


async def _check_inventory(db: Database, world: KnownWorld, found: Problems) -> None:
    for owner, resource, quantity in await db.fetchall(
            "SELECT agent_name, resource, quantity FROM inventory_stacks"):
        key = f"{show(owner)} {show(resource)}"
        if owner not in world.agents:
            found.add("inventory_stacks", key, f"belongs to {show(owner)}, who is no agent")
        if not is_int(quantity) or quantity < 1:
            found.add("inventory_stacks", key, f"quantity {show(quantity)} is not positive")
        if wrong := _name_wrong(resource):
            found.add("inventory_stacks", key, f"resource {wrong}")
    for iid, owner, slot, kind, properties in await db.fetchall(
            "SELECT id, agent_name, slot, item_type, properties FROM inventory_items"):
        key = show(iid)
        if owner not in world.agents:
            found.add("inventory_items", key, f"belongs to {show(owner)}, who is no agent")
        if not is_int(slot):
            found.add("inventory_items", key, f"slot {show(slot)} is not a whole number")
        if wrong := _name_wrong(kind):
            found.add("inventory_items", key, f"item_type {wrong}")
        if wrong := _texts_wrong(properties):
            found.add("inventory_items", key, f"properties {wrong}")


def _name_wrong(name: Any) -> str | None:
    try:
        item_type(name)
    except ValueError:
        return f"{show(name)} is not a name of a thing (lowercase letters, digits and '_')"
    return None


def _texts_wrong(text: Any) -> str | None:
    value, wrong = read_json(text)
    if wrong:
        return wrong
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"{show(value)} is not a list of texts"
    return None


def _creator_wrong(creator: Any, world: KnownWorld) -> str | None:
    if creator is None or creator == "" or creator in world.agents:
        return None
    return f"made by {show(creator)}, who is no agent"


async def _check_objects(db: Database, world: KnownWorld, found: Problems) -> None:
    for oid, kind, x, y, creator, created, extras in await db.fetchall(
            "SELECT id, object_type, x, y, created_by, created_tick, extras FROM objects"):
        key = show(oid)
        if wrong := world.outside(x, y):
            found.add("objects", key, wrong)
        if wrong := _creator_wrong(creator, world):
            found.add("objects", key, wrong)
        if not is_int(created) or created < 0:
            found.add("objects", key, f"created_tick {show(created)} is not a whole number from 0")
        value, wrong = read_json(extras)
        if wrong:
            found.add("objects", key, f"extras {wrong}")
        elif wrong := _extras_wrong(kind, value):
            found.add("objects", key, wrong)


def _extras_wrong(kind: Any, extras: Any) -> str | None:
    if not isinstance(extras, dict):
        return f"extras {show(extras)} is not an object"
    if kind == "sign":
        text = extras.get("text")
        return None if isinstance(text, str) and text.strip() else "a sign with no text"
    if kind != "placed_item":
        return f"object_type {show(kind)} is not sign or placed_item"
    item = extras.get("item")
    if item is not None:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            return f"item {show(item)} is not an item with an id"
        if wrong := _name_wrong(item.get("type")):
            return f"item type {wrong}"
        props = item.get("properties", [])
        if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
            return f"item properties {show(props)} are not a list of texts"
        return None
    if wrong := _name_wrong(extras.get("resource")):
        return f"resource {wrong}"
    quantity = extras.get("quantity")
    if not is_int(quantity) or quantity < 1:
        return f"quantity {show(quantity)} is not positive"
    return None


async def _check_places(db: Database, world: KnownWorld, found: Problems) -> None:
    for key, name, x, y, named_by, tick in await db.fetchall(
            "SELECT key, name, x, y, named_by, tick FROM named_places"):
        row = show(key)
        if wrong := world.outside(x, y):
            found.add("named_places", row, wrong)
        if wrong := _creator_wrong(named_by, world):
            found.add("named_places", row, wrong.replace("made", "named"))
        if not is_int(tick):
            found.add("named_places", row, f"tick {show(tick)} is not a whole number")
        try:
            place = NamedPlace(name, Position(0, 0), None, 0)
        except (ValueError, AttributeError, TypeError) as exc:
            found.add("named_places", row, f"name {show(name)}: {exc}")
        else:
            if place.key != key:
                found.add("named_places", row, f"the key is not {place_key(name)!r}, "
                                               "the name's own")
    if "landmarks" in world.tables:
        for lid, x, y in await db.fetchall("SELECT id, x, y FROM landmarks"):
            if wrong := world.outside(x, y):
                found.add("landmarks", str(lid), wrong)


async def _check_structures(db: Database, world: KnownWorld, found: Problems) -> None:
    for sid, creator, created, private, interior, *box in await db.fetchall(
            "SELECT id, created_by, created_tick, is_private, interior, min_x, min_y, "
            "max_x, max_y FROM structures"):
        key = show(sid)
        if wrong := _creator_wrong(creator, world):
            found.add("structures", key, wrong)
        if not is_int(created):
            found.add("structures", key, f"created_tick {show(created)} is not a whole number")
        if private not in (0, 1):
            found.add("structures", key, f"is_private {show(private)} is not 0 or 1")
        cells, wrong = read_json(interior)
        if wrong:
            found.add("structures", key, f"interior {wrong}")
            continue
        if not isinstance(cells, list) or not cells:
            found.add("structures", key, f"interior {show(cells)} is not a list of cells")
            continue
        points = []
        for raw in cells:
            point, wrong = world.point(raw)
            if wrong:
                found.add("structures", key, f"interior: {wrong}")
                break
            points.append(point)
        else:
            xs, ys = [p.x for p in points], [p.y for p in points]
            if box != [min(xs), min(ys), max(xs), max(ys)]:
                found.add("structures", key, f"bounds {box} are not the interior's "
                                             f"{[min(xs), min(ys), max(xs), max(ys)]}")


async def _check_conversations(db: Database, world: KnownWorld, found: Problems) -> None:
    conversations: dict[str, Any] = {}
    for cid, privacy, creator, started, ended in await db.fetchall(
            "SELECT id, privacy, created_by, started_tick, ended_tick FROM conversations"):
        key = show(cid)
        conversations[cid] = ended
        if not cid:
            found.add("conversations", key, "the id is empty")
        if privacy not in _PRIVACIES:
            found.add("conversations", key, f"privacy {show(privacy)} is not public or private")
        if creator not in world.agents:
            found.add("conversations", key, f"started by {show(creator)}, who is no agent")
        if not is_int(started) or (ended is not None and not is_int(ended)):
            found.add("conversations", key, f"ticks {show(started)}, {show(ended)} are not "
                                            "whole numbers")
    talking: dict[str, str] = {}
    for cid, name, joined, left in await db.fetchall(
            "SELECT conversation_id, agent_name, joined_tick, left_tick "
            "FROM conversation_participants ORDER BY conversation_id, agent_name"):
        key = f"{show(cid)} {show(name)}"
        if not is_int(joined) or (left is not None and (not is_int(left) or left < joined)):
            found.add("conversation_participants", key,
                      f"joined at {show(joined)}, left at {show(left)}: ticks must be whole "
                      "numbers, leaving at or after joining")
        if cid not in conversations:
            found.add("conversation_participants", key, f"conversation {show(cid)} does not exist")
        if name not in world.agents:
            found.add("conversation_participants", key, f"{show(name)} is no agent")
        elif left is None and cid in conversations and conversations[cid] is None:
            if name in talking:
                found.add("conversation_participants", key,
                          f"{name} is also in conversation {show(talking[name])}; "
                          "an agent talks in one at a time")
            talking[name] = cid
    for tid, cid, speaker in await db.fetchall(
            "SELECT t.id, t.conversation_id, t.speaker FROM conversation_turns t "
            "LEFT JOIN conversations c ON c.id = t.conversation_id "
            "LEFT JOIN agents a ON a.name = t.speaker WHERE c.id IS NULL OR a.name IS NULL"):
        what = (f"conversation {show(cid)} does not exist" if cid not in conversations
                else f"spoken by {show(speaker)}, who is no agent")
        found.add("conversation_turns", str(tid), what)
    for iid, inviter, invitee, privacy, status, cid in await db.fetchall(
            "SELECT id, inviter, invitee, privacy, status, conversation_id FROM invitations"):
        key = str(iid)
        for who in (inviter, invitee):
            if who not in world.agents:
                found.add("invitations", key, f"{show(who)} is no agent")
        if inviter == invitee:
            found.add("invitations", key, "an agent invites itself")
        if privacy not in _PRIVACIES:
            found.add("invitations", key, f"privacy {show(privacy)} is not public or private")
        if status not in _STATUSES:
            found.add("invitations", key, f"status {show(status)} is not one of "
                                          f"{', '.join(sorted(_STATUSES))}")
        if cid is not None and cid != "" and cid not in conversations:
            found.add("invitations", key, f"conversation {show(cid)} does not exist")


async def _check_edges_and_spent(db: Database, world: KnownWorld, found: Problems) -> None:
    for x, y, side, part, material, quantity in await db.fetchall(
            "SELECT x, y, side, part, material, quantity FROM edge_materials"):
        key = f"({x}, {y}) {show(side)} {part}"
        if wrong := world.outside(x, y):
            found.add("edge_materials", key, wrong)
        if side not in ("e", "s"):
            found.add("edge_materials", key, f"side {show(side)} is not 'e' or 's'")
        if wrong := _name_wrong(material):
            found.add("edge_materials", key, f"material {wrong}")
        if not is_int(quantity) or quantity < 1:
            found.add("edge_materials", key, f"quantity {show(quantity)} is not positive")
    if "spent_cells" not in world.tables:
        return
    for x, y, units, since in await db.fetchall(
            "SELECT x, y, units, since_tick FROM spent_cells"):
        key = f"({x}, {y})"
        if wrong := world.outside(x, y):
            found.add("spent_cells", key, wrong)
        if not is_int(units) or units < 1:
            found.add("spent_cells", key, f"units {show(units)} is not positive")
        if not is_int(since):
            found.add("spent_cells", key, f"since_tick {show(since)} is not a whole number")
