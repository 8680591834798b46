"""A summary of a world for `--status`: what exists, how big, who lives there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from config.settings import TimeSettings
from core.clock import time_of_day
from core.model_catalog import price_in
from core.spend import Price, Usage, cost
from core.terrain import TERRAIN_ORDER
from services.budget import requests_in_record
from services.world_view import terrain_codes
from storage import LATEST_VERSION, Storage
from storage.leftovers import find_leftovers
from storage.limits_file import read_limits
from storage.seats_file import read_states
from storage.world_lock import writer_there


@dataclass(frozen=True)
class AgentSummary:
    name: str
    x: int
    y: int
    model_id: str
    sleeping: bool
    journeying: bool
    state: str
    mind: str | None = None
    """The kind of mind that last took this agent's turn (offline, claude, local, seat),
    or None before its first turn: the model id alone says nothing of an offline run."""
    seat: str | None = None
    """For a seat: empty, waiting or held, as the world's writer last said (empty when
    no writer serves it)."""


@dataclass(frozen=True)
class LandmarkSummary:
    kind: str
    name: str
    x: int
    y: int


@dataclass(frozen=True)
class AgentSpend:
    """What the language-model calls made for one agent have cost, over the world's life."""

    name: str
    usd: float
    requests: int
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    unpriced_requests: int = 0
    """Requests through a model with no price in settings.yaml (not in `usd`)."""


GARDENER_SHOWN = 8
"""The Gardener's newest requests `--status` lists."""


@dataclass(frozen=True)
class GardenerLine:
    """One of the Gardener's requests and what the engine made of it."""

    cycle: int
    level: str | None
    kind: str
    status: str
    """pending, applied or refused."""
    tick: int | None
    """When the engine applied or refused it."""
    said: str
    """What happened (applied), why not (refused), or what was asked (pending)."""


@dataclass(frozen=True)
class TickTimes:
    """How long recent ticks took: the mean of the last `ticks`, whole and per phase."""

    ticks: int
    last_tick: int
    mean_ms: float
    max_ms: float
    phases_ms: dict[str, float]
    """Phase -> mean milliseconds, in pipeline order."""


@dataclass(frozen=True)
class LeftoverNote:
    """Something in the data folder the world does not need (storage/leftovers.py):
    where, how much, what it is and what removes it, in words."""

    path: str
    files: int
    bytes: int
    what: str
    fix: str

    def line(self) -> str:
        return f"{self.path}: {self.what} ({_size(self.bytes)}); {self.fix}"


def leftover_notes(data_dir: Path, hearth: str = "hearth") -> list[LeftoverNote]:
    """The data folder's leftovers in words; `hearth` is the command that reaches this
    world (with its --data-dir), which opens it to write and so cleans them."""
    opens = f"`{hearth}` (then q), or any run, removes {{}} as it opens the world"
    words = {
        "log": ("write-ahead log left with no writer running (a reader held it as the "
                "last run ended, or a run was killed): committed ticks, kept",
                f"`{hearth}` (then q), or the end of any run, folds it into world.db and "
                "empties it"),
        "unkept": ("{} -wal/-shm file(s) of snapshots no longer kept", opens.format("them")),
        "beside": ("{} empty -wal/-shm file(s) beside kept snapshots, left by reading them",
                   opens.format("them")),
        "partial": ("{} file(s) of a snapshot a stopped run left half-written",
                    opens.format("them")),
        "staging": ("a new world an interrupted --init did not finish ({} file(s))",
                    opens.format("it")),
    }
    notes = []
    for found in find_leftovers(data_dir):
        what, fix = words[found.kind]
        notes.append(LeftoverNote(str(found.path), found.files, found.bytes,
                                  what.format(found.files), fix))
    return notes


@dataclass(frozen=True)
class LimitNote:
    """What a model's endpoint last said of its rate limits (data/limits.json), and which
    of them paced the run that heard it, if one did."""

    model: str
    """The model and its endpoint, as `Capacities.key` names them."""
    per_minute: dict[str, float]
    """Bucket kind (requests, input-tokens, output-tokens) -> limit a minute."""
    paced_by: str | None = None
    waited_seconds: float = 0.0

    def line(self) -> str:
        limits = ", ".join(f"{limit:,.0f} {kind.replace('-', ' ')}"
                           for kind, limit in self.per_minute.items())
        text = f"{self.model}: {limits} a minute"
        if self.paced_by is not None:
            limit = self.per_minute.get(self.paced_by)
            at = f" ({limit:,.0f} a minute)" if limit is not None else ""
            text += (f"; the last run was paced by its {self.paced_by.replace('-', ' ')}{at}, "
                     f"requests waiting {self.waited_seconds:,.0f} s for room in all")
        return text


def limit_notes(data_dir: Path) -> list[LimitNote]:
    """What each endpoint last said of its limits, as the last run kept it."""
    notes = []
    for key, said in sorted(read_limits(data_dir).items()):
        buckets = said.get("buckets")
        if not isinstance(buckets, Mapping):
            continue
        per_minute = {str(kind): float(pair[0]) for kind, pair in buckets.items()
                      if isinstance(pair, list | tuple) and pair
                      and isinstance(pair[0], int | float)}
        paced = said.get("paced_by")
        kind = paced.get("kind") if isinstance(paced, Mapping) else None
        waited = paced.get("waited") if isinstance(paced, Mapping) else None
        notes.append(LimitNote(key, per_minute, kind if isinstance(kind, str) else None,
                               float(waited) if isinstance(waited, int | float) else 0.0))
    return notes


def _size(count: int) -> str:
    if count >= 1 << 20:
        return f"{count / (1 << 20):.1f} MiB"
    if count >= 1 << 10:
        return f"{count / (1 << 10):.0f} KiB"
    return f"{count} bytes"


@dataclass(frozen=True)
class WorldStatus:
    db_path: str
    db_bytes: int
    schema_version: int
    latest_schema_version: int
    initialised: bool
    width: int | None
    height: int | None
    seed: int | None
    tick: int | None
    weather: str | None
    time_of_day: str | None
    counts: dict[str, int]
    agents: list[AgentSummary]
    terrain_shares: dict[str, float] = field(default_factory=dict)
    landmarks: list[LandmarkSummary] = field(default_factory=list)
    tick_times: TickTimes | None = None
    unfinished_tick: int | None = None
    """A tick a stopped or crashed run left open (the next run finishes it)."""
    unfinished_turns: int = 0
    """How many of that tick's turns had run (0: it was begun and no turn had run)."""
    spend: list[AgentSpend] = field(default_factory=list)
    """Per agent Claude spoke for; empty when none ever did."""
    gardener: list[GardenerLine] = field(default_factory=list)
    """The Gardener's newest requests, newest first; empty when it never asked."""
    leftovers: list[LeftoverNote] = field(default_factory=list)
    """What the data folder holds that the world does not need (`leftover_notes`)."""
    limits: list[LimitNote] = field(default_factory=list)
    """What the models' endpoints last said of their rate limits (`limit_notes`)."""

    @property
    def spend_usd(self) -> float:
        return sum(s.usd for s in self.spend)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def world_status(
    storage: Storage, clock: TimeSettings | None = None,
    prices: Mapping[str, Price] | None = None,
) -> WorldStatus:
    """Everything `--status` shows; `clock` (settings.time) names the time of day, and
    `prices` (settings.yaml claude.prices) turn recorded token counts into dollars."""
    clock = clock or TimeSettings()
    state = await storage.world.get_world_state()
    shares: dict[str, float] = {}
    if state is not None:
        codes = await terrain_codes(storage, state.width, state.height)
        counts = np.bincount(codes.reshape(-1), minlength=len(TERRAIN_ORDER))
        shares = {t.value: round(float(counts[i]) / codes.size, 4)
                  for i, t in enumerate(TERRAIN_ORDER)}
    landmarks = await storage.world.get_landmarks() if state is not None else []
    agents = await storage.agents.get_all_agents()
    db_bytes = sum(
        p.stat().st_size
        for p in (storage.db_path, storage.db_path.with_name(storage.db_path.name + "-wal"))
        if p.exists()
    )
    schema = await storage.db.user_version()
    engine_records = schema >= 5  # older files have no engine tables yet
    counts_extra: dict[str, int] = {}
    times = None
    unfinished = None
    unfinished_turns = 0
    spend: list[AgentSpend] = []
    minds: dict[str, str] = {}
    # A writer that was killed leaves its note: with no writer, no seat is held.
    seats = read_states(storage.db_path.parent) if writer_there(storage.db_path.parent) else {}
    if engine_records:
        minds = {name: row.kind for name, row in (await storage.engine.get_minds()).items()}
        spend = _spend(await storage.engine.records_of_mind("claude"), prices or {})
        counts_extra = {"turns": await storage.engine.count_turns(),
                        "events": await storage.engine.count_events()}
        times = _tick_times(await storage.engine.recent_metrics(RECENT_TICKS))
        progress = await storage.engine.get_progress()
        unfinished = progress.tick if progress is not None else None
        if progress is not None:
            unfinished_turns = len(await storage.engine.turns_done(progress.tick))
    gardener: list[GardenerLine] = []
    if schema >= 7:  # the Gardener's tables came with version 7
        gardener = [GardenerLine(r.cycle, r.level, r.kind, r.status, r.done_tick,
                                 r.reason if r.reason else r.params)
                    for r in await storage.gardener.recent(GARDENER_SHOWN)]
    return WorldStatus(
        db_path=str(storage.db_path),
        db_bytes=db_bytes,
        schema_version=schema,
        latest_schema_version=LATEST_VERSION,
        initialised=state is not None,
        width=state.width if state else None,
        height=state.height if state else None,
        seed=state.seed if state else None,
        tick=state.tick if state else None,
        weather=state.weather.value if state else None,
        time_of_day=(
            str(time_of_day(state.tick, clock.ticks_per_day, clock.start_hour)) if state else None
        ),
        counts={
            "agents": len(agents),
            "stored_cells": await storage.world.count_cells(),
            "objects": await storage.objects.count_objects(),
            "named_places": await storage.world.count_named_places(),
            "structures": await storage.world.count_structures(),
            "landmarks": len(landmarks),
            "conversations": await storage.conversations.count_conversations(),
            **counts_extra,
        },
        agents=[
            AgentSummary(
                name=a.name,
                x=a.position.x,
                y=a.position.y,
                model_id=a.model_id,
                sleeping=a.is_sleeping,
                journeying=a.journey is not None,
                state="asleep" if a.is_sleeping else (
                    "journeying" if a.journey is not None else "awake"
                ),
                mind=minds.get(a.name),
                seat=seats.get(a.name, "empty") if minds.get(a.name) == "seat" or
                a.name in seats else None,
            )
            for a in agents
        ],
        terrain_shares=shares,
        landmarks=[
            LandmarkSummary(m.kind, m.name, m.position.x, m.position.y) for m in landmarks
        ],
        tick_times=times,
        unfinished_tick=unfinished,
        unfinished_turns=unfinished_turns,
        spend=spend,
        gardener=gardener,
    )


RECENT_TICKS = 100


def _tick_times(metrics) -> TickTimes | None:
    if not metrics:
        return None
    phases: dict[str, list[float]] = {}
    for m in metrics:
        for name, ms in m.phases.items():
            phases.setdefault(name, []).append(ms)
    return TickTimes(
        ticks=len(metrics),
        last_tick=metrics[-1].tick,
        mean_ms=round(sum(m.duration_ms for m in metrics) / len(metrics), 3),
        max_ms=round(max(m.duration_ms for m in metrics), 3),
        phases_ms={name: round(sum(v) / len(v), 3) for name, v in phases.items()},
    )


def _spend(records: list[tuple[int, str, str]], prices: Mapping[str, Price]) -> list[AgentSpend]:
    """Sum each agent's requests as stored in its Claude turns' records."""
    usd: dict[str, float] = {}
    used: dict[str, Usage] = {}
    asked: dict[str, int] = {}
    unpriced: dict[str, int] = {}
    for _tick, agent, record in records:
        for model, usage, batch in requests_in_record(record):
            price = price_in(prices, model)
            used[agent] = used.get(agent, Usage()) + usage
            asked[agent] = asked.get(agent, 0) + 1
            if price is None:
                unpriced[agent] = unpriced.get(agent, 0) + 1
            else:
                usd[agent] = usd.get(agent, 0.0) + cost(usage, price, batch)
    return [AgentSpend(name, round(usd.get(name, 0.0), 6), asked[name], u.input, u.output,
                       u.cache_write, u.cache_read, unpriced.get(name, 0))
            for name, u in sorted(used.items())]
