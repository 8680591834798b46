"""Group commit of finished turns: each turn atomic, many turns per transaction.

A finished turn is frozen at once into a `TurnWrite` (its captured world values,
its events, its row, its mind's state) and queued. `commit` writes every queued
turn in one unit of work, in the order they finished, so what is durable is
always a prefix of what ran, and never part of a turn (one transaction per turn
would cost more than the turns themselves). The unit of work is a job for the
storage's writer thread (storage/writer.py); a commit may be left in flight while
the next tick runs (`wait=False`), and the next write, `flush` or `flush_writes`
waits for it first, so writes land in the order they were made.

After each commit lands, its events are appended to events.jsonl (`EventMirror`),
so the log can never hold an event the database does not.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.agent import Inventory
from core.events import AgentMovedEvent, DomainEvent
from services.changes import ChangeSet
from services.persistence import Capture, capture, write_capture
from services.turn_loop import ActionRecord
from storage.repositories.engine import EventRow, MindRow, TickMetrics, TurnRow

if TYPE_CHECKING:
    from services.simulation import Simulation
    from storage import Storage
    from storage.event_log import EventMirror
    from storage.repositories.gardener import RequestOutcome
    from storage.writer import DirectStorage


@dataclass(frozen=True, slots=True)
class TurnWrite:
    capture: Capture
    events: tuple[EventRow, ...]
    turn: TurnRow
    mind: MindRow | None
    """None when the mind's state is what its row already holds."""


CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
"""One encoder made once: `json.dumps` with options builds a new encoder on every call."""

_C_ENCODER = None if json.encoder.c_make_encoder is None else json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, CANONICAL.default, json.encoder.encode_basestring,  # type: ignore[attr-defined]
    None, ":", ",", True, False, True,
)


def canonical_json(value: object) -> str:
    """`CANONICAL.encode(value)`, without making a C encoder for every call (which is
    most of the cost for the small records written with each turn). Values are the
    engine's own acyclic JSON data, so the check for cycles is left out."""
    if _C_ENCODER is None:
        return CANONICAL.encode(value)
    return "".join(_C_ENCODER(value, 0))


def turn_record_json(
    actions: Sequence[ActionRecord], mind: Mapping[str, object], error: str | None,
    narration: Mapping[str, object] | None = None,
) -> str:
    """`canonical_json` of a turn's record ({"actions": [...], "error": ..., "mind": {...},
    "narration": {...}}), with the fixed keys spelled out in sorted order; one per turn,
    so it counts. `narration` is what a model narrator spent on this turn, if anything.

    Only the arguments and the mind's own record go through the encoder. Anything
    the direct spelling cannot take (a tool name that is not text, say) falls back
    to encoding the whole record the general way, which gives the same text.
    """
    try:
        parts = []
        for a in actions:
            if a.success is True:
                ok = "true"
            elif a.success is False:
                ok = "false"
            else:  # 1 or 0 would be written as numbers by the general way
                raise TypeError("success is not a bool")
            parts.append(
                f'{{"args":{canonical_json(dict(a.arguments))},"ok":{ok},'
                f'"text":{_quote(a.narration)},"tool":{_quote(a.tool)}}}')
        head = f'{{"actions":[{",".join(parts)}]'
        if error:
            head += f',"error":{_quote(error)}'
        tail = f',"narration":{canonical_json(dict(narration))}' if narration else ""
        return f'{head},"mind":{canonical_json(dict(mind))}{tail}}}'
    except (TypeError, ValueError):
        record: dict[str, object] = {"actions": [a.to_json() for a in actions],
                                     "mind": dict(mind)}
        if error:
            record["error"] = error
        if narration:
            record["narration"] = dict(narration)
        try:
            return canonical_json(record)
        except (TypeError, ValueError) as exc:  # a mind's record JSON cannot hold
            # The turn is written all the same (its events and values are what count);
            # its record says what could not be kept.
            return canonical_json({"actions": [], "error": f"record not kept: {exc}"[:500],
                                   "mind": {}})


def event_rows(events: Iterable[DomainEvent]) -> tuple[EventRow, ...]:
    rows = []
    encode = canonical_json
    for event in events:
        if type(event) is AgentMovedEvent and _MOVED_FIELDS_AS_EXPECTED:
            rows.append(EventRow(event.tick, event.agent, "agent_moved", _moved_json(event)))
            continue
        data = event.to_dict()
        agent = data.get("agent") or data.get("inviter") or data.get("speaker")
        rows.append(EventRow(
            event.tick, agent if isinstance(agent, str) else None, event.event_type,
            encode(data),
        ))
    return tuple(rows)


def _moved_json(event: AgentMovedEvent) -> str:
    """`CANONICAL.encode(event.to_dict())` for a step, written out directly.

    Every step of every walk and journey is one of these (most of a busy tick's
    events), and spelling out its few keys in sorted order costs a fifth of
    building the dict and encoding it.
    """
    a, b = event.from_position, event.to_position
    return (f'{{"agent":{_quote(event.agent)},"category":{_quote(event.category)},'
            f'"from_position":{{"x":{a.x},"y":{a.y}}},"tick":{event.tick},'
            f'"to_position":{{"x":{b.x},"y":{b.y}}},"type":"agent_moved"}}')


_quote = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A JSON string literal, as CANONICAL writes it (no ASCII escaping)."""

_MOVED_FIELDS_AS_EXPECTED = tuple(f.name for f in dataclasses.fields(AgentMovedEvent)) == (
    "tick", "agent", "from_position", "to_position")
"""`_moved_json` knows these fields; should they change, the general way is used."""


class TurnCommitter:
    def __init__(
        self,
        storage: Storage,
        sim: Simulation,
        mirror: EventMirror,
        *,
        batch_turns: int = 256,
        max_delay_ms: float = 50.0,
    ) -> None:
        self.storage = storage
        self.sim = sim
        self.mirror = mirror
        self.batch_turns = batch_turns
        self.max_delay = max_delay_ms / 1000
        self._queue: list[TurnWrite] = []
        self._oldest = 0.0
        self._committing = False
        self.commits = 0
        self._opening: tuple[int, tuple[EventRow, ...], Sequence[Sequence[str]]] | None = None
        """An opening held back to go out with the tick's turns (`hold_opening`)."""
        self._inventories: dict[str, Inventory] = {}
        """Each agent's inventory as last committed (only this committer writes agents
        while the engine runs), so an unchanged one is not written again."""
        self.on_commit: Callable[[Sequence[TurnRow]], None] | None = None
        """Told which turns just became durable (the engine drops their file undo logs)."""
        self.gardener_outcomes: list[RequestOutcome] = []
        """What became of the Gardener's requests this tick's opening judged: written
        by the next commit, in the same transaction as the world changes they made."""
        self._metrics: list[TickMetrics] = []
        """Metrics of finished ticks, written with the next commit."""
        self._in_flight: _InFlight | None = None
        """The write handed to the writer and not yet waited for."""

    @property
    def committing(self) -> bool:
        """A batch is being written right now."""
        return self._committing

    @property
    def pending(self) -> int:
        return len(self._queue)

    def add(self, write: TurnWrite) -> None:
        if not self._queue:
            self._oldest = time.perf_counter()
        self._queue.append(write)

    async def maybe_commit(self, *, now: bool = False) -> None:
        """Commit if asked to `now`, the batch is full, or its oldest turn has waited
        long enough.

        While one commit is being written, other workers carry on with turns rather
        than queue up behind it: their turns go into the next batch.
        """
        if self._committing or not self._queue:
            return
        if (now or len(self._queue) >= self.batch_turns
                or time.perf_counter() - self._oldest >= self.max_delay):
            self._committing = True
            try:
                await self.commit()
            finally:
                self._committing = False

    async def commit_opening(
        self, tick: int, events: Sequence[DomainEvent], schedule: Sequence[Sequence[str]]
    ) -> None:
        """The tick's opening changes and its schedule, in one transaction."""
        await self._write(self._world_capture(), event_rows(events), progress=(tick, schedule))

    def hold_opening(
        self, tick: int, events: Sequence[DomainEvent], schedule: Sequence[Sequence[str]]
    ) -> None:
        """Keep the opening (its events and schedule; its changes stay in the world's
        journal) to be written by the next commit, in the same transaction as the turns.

        Only for a tick whose turns can commit nothing before the tick's last commit
        (minds that answer at once: nothing yields during turns). A crash before that
        commit then loses the opening and the turns together, which is the same as a
        crash before the checkpoint: the tick is run again from its start, and
        identically. One transaction a tick instead of two, and the rows of agents
        that moved on a journey and then acted are written once.
        """
        self._opening = (tick, event_rows(events), tuple(tuple(c) for c in schedule))

    async def commit(self, *, finish_tick: int | None = None,
                     events: Sequence[DomainEvent] = (), wait: bool = True) -> None:
        """Write every queued turn; with `finish_tick`, also close that tick.
        With `wait` False the write is left in flight (see `_write`).

        Closing advances the world's tick counter and forgets the tick's progress
        record in the same transaction as its last turns. A held opening goes first;
        if the tick is not being closed (a stop), its progress record is written too,
        so the next run finishes the tick with the agents still to act.
        """
        queued, self._queue = self._queue, []
        opening, self._opening = self._opening, None
        cap = Capture()
        rows: list[EventRow] = []
        progress = None
        if opening is not None:  # its changes are in the world's journal, captured below
            rows.extend(opening[1])
            if finish_tick is None:
                progress = (opening[0], opening[2])
        for write in queued:
            cap.merge(write.capture)
            rows.extend(write.events)
        if finish_tick is not None:
            self.sim.world.set_tick(finish_tick + 1)
        cap.merge(self._world_capture())
        rows.extend(event_rows(events))
        await self._write(
            cap, rows, turns=[w.turn for w in queued],
            minds=[w.mind for w in queued if w.mind is not None],
            progress=progress, finish=finish_tick is not None, wait=wait,
        )

    def _world_capture(self) -> Capture:
        """What changed outside any turn (the world's own journal), then cleared."""
        sim = self.sim
        cap = capture(sim, sim.world.changes, sim.gathering.dirty)
        sim.gathering.dirty.clear()
        sim.world.changes = ChangeSet()
        return cap

    async def _write(
        self,
        cap: Capture,
        events: Sequence[EventRow],
        *,
        turns: Sequence[TurnRow] = (),
        minds: Sequence[MindRow] = (),
        progress: tuple[int, Sequence[Sequence[str]]] | None = None,
        finish: bool = False,
        wait: bool = True,
    ) -> None:
        """Hand one unit of work to the background writer, after the one before it.

        With `wait` False the write is left in flight (`flush` waits for it): the
        next tick's turns run while SQLite writes this one on another core.
        """
        await self.flush_writes()
        outcomes, self.gardener_outcomes = self.gardener_outcomes, []
        metrics, self._metrics = self._metrics, []
        inventories = self._inventories

        async def job(store: DirectStorage) -> int:
            async with store.unit_of_work() as uow:
                await write_capture(cap, uow, inventories=inventories)
                first_seq = await uow.engine.next_event_seq()
                await uow.engine.add_events(events)
                if outcomes:
                    await uow.gardener.record_outcomes(outcomes)
                await uow.engine.save_turns(turns)
                await uow.engine.save_minds(minds)
                if progress is not None:
                    await uow.engine.set_progress(*progress)
                if finish:
                    await uow.engine.clear_progress()
                for row in metrics:
                    await uow.engine.add_metrics(row)
                await uow.commit()
            return first_seq

        future = asyncio.wrap_future(self.storage.writer().submit(job))
        self._in_flight = _InFlight(future, cap, events, turns, bool(outcomes),
                                    counts=bool(turns or events or progress or finish))
        if wait:
            await self.flush_writes()

    @property
    def outcomes_in_flight(self) -> bool:
        """The write in flight records what became of Gardener requests."""
        return self._in_flight is not None and self._in_flight.outcomes

    async def flush_writes(self) -> None:
        """Wait for the write in flight, if any, then do what follows it: note the
        inventories it stored, mirror its events to events.jsonl, tell `on_commit`.

        A write that failed is raised here (its unit rolled back; nothing of it is
        in the database, and the engine must not go on as if it were).
        """
        pending, self._in_flight = self._in_flight, None
        if pending is None:
            return
        try:
            first_seq = await pending.future
        except Exception:
            # The metrics waiting for the next commit are of the ticks this write
            # carried, which run again: none is written now (`flush` on close would
            # otherwise wait out another lock, or meet the full disk, a second time).
            self._metrics.clear()
            raise
        self.commits += pending.counts
        for name, agent in pending.cap.agents.items():
            self._inventories[name] = agent.inventory
        self.mirror.append(first_seq, pending.events)
        if self.on_commit is not None and pending.turns:
            self.on_commit(pending.turns)

    async def flush(self) -> None:
        """Everything handed over so far on disk: the write in flight, then any tick
        metrics still waiting to ride along with a commit."""
        await self.flush_writes()
        if self._metrics:
            await self._write(Capture(), ())

    def add_metrics(self, metrics: TickMetrics) -> None:
        """A tick's metrics, written with the next commit (or by `flush`)."""
        self._metrics.append(metrics)


@dataclass(frozen=True, slots=True)
class _InFlight:
    """A write handed to the writer whose follow-ups have not run yet."""

    future: asyncio.Future[int]
    cap: Capture
    events: Sequence[EventRow]
    turns: Sequence[TurnRow]
    outcomes: bool
    counts: bool
    """Counted in `commits` (a write of metrics alone is not)."""
