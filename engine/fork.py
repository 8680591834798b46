"""`hearth --fork T --into DIR`: a new world that is the parent exactly as it stood at tick T.

    report = await fork_world(parent_data_dir, config, 77, Path("branch"))

How (DESIGN.md "Branches"): the newest snapshot of the parent at or before T is copied as
a new world (an identity of its own) and walked on to T by the engine itself, each agent's
decisions taken again: the offline mind's by running it again (it is deterministic, and
its memory is rebuilt with it), a model's from its stored turns by the replay mind (no
model call; that mind's memory is rebuilt from each turn's record,
adapters/memory_rebuild.py). The agents' homes are made as a new world's are and every
file call the stored turns record before the snapshot is done again, in order; the walk
does the rest.
What the walk did is then checked against the stored turns, row for row: a parent run
with other settings than the fork's is refused, not silently forked into another past.

The parent is only read (`mode=ro`, snapshots that never change), never locked, so a fork
can be made beside a running world. Everything is built in DIR/.fork-partial and moved
to DIR/data and DIR/agents only once whole; a failure leaves DIR as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from adapters.agent_files import AgentFiles
from adapters.memory_rebuild import MemoryLimits
from adapters.offline_mind import OfflineMind
from adapters.tools import TOOLS
from adapters.tools.files import run_file_tool
from config import HearthConfig, RuntimeEnv
from engine.engine import HearthEngine
from engine.replay import replay_parts
from services.mind import Mind
from storage import Storage
from storage.database import utc_stamp
from storage.errors import StorageError, WorldNotFoundError
from storage.homes import AgentHomes
from storage.limits_file import read_limits, write_limits
from storage.lineage import Lineage, write_lineage
from storage.world_fork import (
    ForkError,
    WorldPast,
    copy_as_new_world,
    copy_event_lines,
    directory_bytes,
    read_only,
    restore_requests,
)

PARTIAL = ".fork-partial"
_PART = r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*"
SIMPLE_PATH = re.compile(rf"^{_PART}(/{_PART})*$")
"""A path the sandbox takes as it is written (no `.`, `..`, empty or hidden parts)."""
USAGE = 2


@dataclass(frozen=True, slots=True)
class ForkReport:
    parent: Path
    into: Path
    tick: int
    base: int
    """The tick of the snapshot the fork was walked on from."""
    seconds: float
    bytes: int
    """What the fork's data and homes take on disk."""
    notes: tuple[str, ...] = ()
    """One line per agent whose model mind's memory could not be rebuilt to `tick`."""


def _usage(message: str) -> ForkError:
    error = ForkError(message)
    error.code = USAGE  # type: ignore[attr-defined]
    return error


def _check_into(into: Path) -> None:
    if into.exists() or into.is_symlink():
        if not into.is_dir() or into.is_symlink():
            raise _usage(f"{into} exists and is not a folder; choose a new folder for the fork")
        if any(into.iterdir()):
            raise _usage(f"{into} is not empty; choose a new or empty folder for the fork")


async def fork_world(parent: Path, config: HearthConfig, tick: int, into: Path,
                     personalities: Mapping[str, str] | None = None) -> ForkReport:
    """Make `into`/data and `into`/agents: the world in `parent` as at tick `tick`, with
    each agent in `personalities` given that personality from the fork on."""
    started = time.perf_counter()
    parent, into = Path(parent), Path(into)
    personalities = dict(personalities or {})
    if not (parent / "world.db").is_file():
        raise ForkError(f"{parent}: no world here to fork (no world.db)")
    _check_into(into)
    _check_names(parent / "world.db", personalities)
    try:
        past = WorldPast.open(parent)
    except WorldNotFoundError as exc:
        raise ForkError(str(exc)) from None
    with past:
        if tick >= past.tick:
            raise _usage(f"tick {tick} is not in the past of {parent}: its clock reads "
                         f"{past.tick}, so a fork can be made at ticks 0 to {past.tick - 1} "
                         "(to copy it as it is now, copy its folders)")
        base = past.base_snapshot(tick)
        made = not into.exists()
        into.mkdir(parents=True, exist_ok=True)
        staging = into / PARTIAL
        try:
            staging.mkdir()
            data, homes = staging / "data", staging / "agents"
            (data / "snapshots").mkdir(parents=True)
            homes.mkdir()
            copy_as_new_world(base.path, data / "world.db")
            shutil.copyfile(data / "world.db", data / "snapshots" / f"snapshot_{base.tick}.db")
            copy_event_lines(parent / "events.jsonl", data / "events.jsonl", data / "world.db")
            _make_homes(past, data / "world.db", homes, base.tick)
            notes = await _walk(past, config, data, homes, base.tick, tick)
            _check_walk(past, data / "world.db", base.tick, tick)
            _settle(data / "world.db")
            _change_personalities(data / "world.db", personalities)
            write_lineage(data, Lineage(str(parent.resolve()), past.world_id, tick,
                                        utc_stamp(), base.tick, {
                                            name: {"personality": text}
                                            for name, text in sorted(personalities.items())}))
            (data / "writer.lock").unlink(missing_ok=True)
            os.sync()  # the homes were written without a sync per file
            data.rename(into / "data")
            homes.rename(into / "agents")
            staging.rmdir()
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            if made:
                shutil.rmtree(into, ignore_errors=True)
            raise
    size = directory_bytes(into / "data") + directory_bytes(into / "agents")
    return ForkReport(parent, into, tick, base.tick, time.perf_counter() - started, size,
                      notes)


def _agent_names(db: Path) -> list[str]:
    conn = read_only(db)
    try:
        return [str(r[0]) for r in conn.execute("SELECT name FROM agents ORDER BY name")]
    finally:
        conn.close()


def _check_names(db: Path, personalities: Mapping[str, str]) -> None:
    """Refuse, before anything is made, a personality for an agent the world has not."""
    if not personalities:
        return
    names = _agent_names(db)
    if unknown := sorted(set(personalities) - set(names)):
        raise _usage(f"--personality: no agent called {', '.join(unknown)} lives in "
                     f"{db.parent} (its agents: {', '.join(names)})")


def _change_personalities(db: Path, personalities: Mapping[str, str]) -> None:
    """The fork's agents' new personalities (the parent's rows are never touched)."""
    if not personalities:
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("UPDATE agents SET personality = ? WHERE name = ?",
                             [(text, name) for name, text in personalities.items()])
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _make_homes(past: WorldPast, db: Path, homes_dir: Path, before: int) -> None:
    """Every agent's home as a new world's, then every recorded file call before `before`
    done again in order: the homes as they stood at the snapshot's tick. An agent whose
    calls only append to or write files at plain paths has each file's final text worked
    out first and written once (an offline agent's journal: hundreds of appends); any
    other call goes through the sandbox call by call. No fsync per file: the fork is
    built aside and synced once before it is moved into place."""
    names = _agent_names(db)
    homes = AgentHomes(homes_dir)
    for name in names:
        homes.create(name, "")
    calls: dict[str, list[tuple[str, dict]]] = {}
    for agent, tool, args in past.file_calls(before, TOOLS.changing_files()):
        calls.setdefault(agent, []).append((tool, args))
    for agent, done in calls.items():
        if not homes.exists(agent):
            homes.create(agent, "")
        files = AgentFiles(homes.path(agent), durable=False)
        if all(tool in ("append_file", "write_file") and isinstance(args.get("text"), str)
               and isinstance(args.get("path"), str) and SIMPLE_PATH.match(args["path"])
               for tool, args in done):
            texts: dict[str, str] = {}  # a new home's files are all empty
            for tool, args in done:
                path = args["path"]
                texts[path] = (texts.get(path, "") if tool == "append_file" else "") + args["text"]
            done = [("write_file", {"path": path, "text": text}) for path, text in texts.items()]
        for tool, args in done:
            result = run_file_tool(files, tool, args)
            if not result.success:
                raise ForkError(f"{agent}'s {tool} of {args.get('path')!r}, which worked in "
                                f"{past.data_dir}, failed when done again ({result.message});"
                                " the stored turns do not account for that home")


async def _walk(past: WorldPast, config: HearthConfig, data: Path, homes: Path,
                start: int, end: int) -> tuple[str, ...]:
    """Run the engine on the copied snapshot from `start` until its clock reads `end`.
    Model minds' memories are rebuilt turn by turn from the records (with the compaction
    limits of `config`, which must be the parent's); gives a line for each agent whose
    memory could not be, and so is as at the snapshot."""
    kinds = past.turn_kinds(start, end)
    replayed = sorted(name for name, used in kinds.items() if used - {"offline"})
    async with Storage(data, create=False,
                       synchronous=config.settings.storage.synchronous) as storage:
        state = await storage.world.get_world_state()
        if state is None:
            raise ForkError(f"the snapshot of tick {start} in {past.data_dir} holds no world")
        agents = await storage.agents.get_all_agents()
        offline = OfflineMind(state.seed, {a.name: a.personality for a in agents})
        minds: dict[str, Mind] = {}
        narrator = None
        parts = None
        if replayed:
            parts = await replay_parts(storage, data, replayed, source_db=past.db,
                                       limits=MemoryLimits.of(config.settings.claude))
            minds.update(parts.minds)
            narrator = parts.narrator
        engine = await HearthEngine.open(
            storage, config, mind=offline, minds=minds, narrator=narrator,
            agents_dir=homes)
        if parts is not None:
            engine.on_close.append(parts.close)
        engine.write_behind_on()  # as `--run` does: each commit overlaps the next tick
        try:
            while engine.tick < end:
                cycles, requests = past.pending_requests(engine.tick)
                if requests:
                    await engine.flush()
                    restore_requests(data / "world.db", cycles, requests)
                await engine.tick_once()
                if engine.halted is not None or engine.stop_requested:
                    raise ForkError(f"walking {past.data_dir} on from its snapshot of tick "
                                    f"{start} stopped at tick {engine.tick}: "
                                    f"{engine.halted or 'asked to stop'}")
        finally:
            await engine.close()
    if parts is None:
        return ()
    kept = {name: why for mind in parts.minds.values() for name, why in mind.not_rebuilt.items()}
    return tuple(f"{name}'s memory is as at the snapshot of tick {start}, not tick {end}: "
                 f"{why}" for name, why in sorted(kept.items()))


def _settle(db: Path) -> None:
    """Fold the walk's WAL into the database: a fork at rest takes only its own size."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _check_walk(past: WorldPast, db: Path, start: int, end: int) -> None:
    """The walked ticks' turns must be the stored ones, row for row."""
    recorded = past.turn_rows(start, end)
    conn = read_only(db)
    try:
        walked = {(int(t), str(a)): (m, n, e, r) for t, a, m, n, e, r in conn.execute(
            "SELECT tick, agent, mind, actions, ended, record FROM turns "
            "WHERE tick >= ? AND tick < ?", (start, end))}
        clock = int(conn.execute("SELECT tick FROM world_state").fetchone()[0])
    except sqlite3.Error as exc:
        raise ForkError(f"{db}: the fork could not be read back ({exc})") from None
    finally:
        conn.close()
    if walked == recorded and clock == end:
        return
    differing = sorted(k for k in recorded.keys() | walked.keys()
                       if recorded.get(k) != walked.get(k))
    at, agent = differing[0] if differing else (end, "?")
    raise ForkError(f"walking {past.data_dir} on from its snapshot of tick {start} did not "
                    f"give back {agent}'s turn at tick {at} as stored: the parent was run "
                    "with other settings or minds than these (fork with its --config-dir)")


async def fork_command(env: RuntimeEnv, config: HearthConfig, tick: int, into: Path,
                       personalities: Mapping[str, str] | None = None) -> int:
    """`hearth --fork T --into DIR [--personality NAME=TEXT ...]`, said in a few lines."""
    try:
        report = await fork_world(env.data_dir, config, tick, into, personalities)
    except OSError as exc:
        raise StorageError(f"the fork could not be written in {into}: "
                           f"{exc.strerror or exc}") from None
    # Rate limits are the key's, not the world's: the fork's first run starts knowing
    # what the parent's answers said (storage/limits_file.py), not one round trip
    # behind with `model_requests_start` requests.
    write_limits(report.into / "data", read_limits(env.data_dir))
    walked = report.tick - report.base
    how = (f"from its snapshot of tick {report.base}, {walked} tick(s) walked again"
           if walked else "its snapshot of that tick")
    print(f"Forked {report.parent} at tick {report.tick} into {report.into} ({how}; "
          f"{report.seconds:.1f} s, {report.bytes / 1e6:.1f} MB).")
    for name in sorted(personalities or {}):
        print(f"{name} has a new personality in the fork (the parent's is unchanged).")
    for note in report.notes:
        print(note)
    data, homes = report.into / "data", report.into / "agents"
    print(f"Run it with: hearth --data-dir {data} --agents-dir {homes} --run N "
          "(--mind replay takes the parent's recorded decisions)", file=sys.stdout)
    return 0
