"""HearthEngine: loads the world, runs ticks through the pipeline, commits every turn.

    engine = await HearthEngine.open(storage, config, mind=OfflineMind(seed, personalities))
                                       # the world loaded whole; a tick a crash interrupted
                                       # is finished by the next tick_once
    ctx = await engine.tick_once()     # one tick: opening, movement, turns, commit
    await engine.close()

The tick is a pipeline of phases (engine/phases): invitations lapse, sleepers
wake, the weather turns, journeys advance, the schedule is made, and all that is
committed with the schedule (a checkpoint); then agents take their turns, each
turn written atomically by the committer, and the commit phase closes the tick
(its counter advances in the same transaction as the last turns).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path

from adapters.file_undo import FileUndoLog
from adapters.perception import PerceptionBuilder
from adapters.tools import TOOLS, ToolRegistry
from config import HearthConfig
from core.clock import night_left
from core.perception import Perception
from core.types import AgentName
from engine.committer import (
    TurnCommitter,
    TurnWrite,
    canonical_json,
    event_rows,
    turn_record_json,
)
from engine.context import TickContext, TurnResult
from engine.garbage import TickCollector
from engine.phases import (
    AgentTurnPhase,
    CheckpointPhase,
    CommitPhase,
    GardenerPhase,
    InvitationExpiryPhase,
    MovementPhase,
    SchedulePhase,
    WakePhase,
    WeatherPhase,
)
from engine.pipeline import TickPipeline
from engine.stewardship import Stewardship
from engine.tool_use import TurnTools
from services.changes import ChangeSet, collecting
from services.mind import Mind, TurnStart
from services.narrator import Narrator, SceneNarrator, TemplateNarrator
from services.persistence import capture
from services.scheduler import Scheduler
from services.simulation import Simulation, load_simulation
from services.turn_loop import MIND_ERROR, TurnLog, run_turn
from services.world_setup import status_text
from storage import Storage
from storage.database import utc_stamp
from storage.errors import is_storage_fault
from storage.event_log import EventMirror
from storage.homes import AgentHomes, HomeRefusedError
from storage.repositories.engine import MindRow, TickMetrics, TurnRow

logger = logging.getLogger("hearth.engine")

TickCallback = Callable[[TickContext], object]

WRITER_SWITCH_INTERVAL_S = 0.0005
"""How soon the busy engine hands the GIL to the writer thread when it asks (see
`HearthEngine.write_behind_on`)."""


class HearthEngine:
    """Made whole by `await HearthEngine.open(...)`: the world, the minds' memories and
    every part of the tick loaded, or an error and nothing left open."""

    @classmethod
    async def open(cls, storage: Storage, config: HearthConfig, *, mind: Mind,
                   minds: Mapping[str, Mind] | None = None, narrator: Narrator | None = None,
                   agents_dir: Path | None = None, scene_narrator: SceneNarrator | None = None,
                   tools: ToolRegistry = TOOLS) -> HearthEngine:
        engine = cls(storage, config, mind=mind, minds=minds, narrator=narrator,
                     agents_dir=agents_dir, scene_narrator=scene_narrator, tools=tools)
        try:
            await engine._load()
        except BaseException:
            if engine._opened_storage:
                await storage.close()
            raise
        return engine

    def __init__(self, storage: Storage, config: HearthConfig, *, mind: Mind,
                 minds: Mapping[str, Mind] | None, narrator: Narrator | None,
                 agents_dir: Path | None, scene_narrator: SceneNarrator | None,
                 tools: ToolRegistry) -> None:
        """Only through `open`, which loads what the tick needs (`_load`)."""
        self.storage = storage
        self.config = config
        self.default_mind = mind
        self.minds = dict(minds or {})
        self.narrator: Narrator = narrator or TemplateNarrator()
        self._take_narration = getattr(self.narrator, "take_spend", None)
        """A model narrator's spend on a turn, to keep in the turn's record."""
        self.scene_narrator = scene_narrator
        """Retells a perception's narrative for minds that read it (None: the template's)."""
        self.homes = AgentHomes(agents_dir) if agents_dir is not None else None
        self.registry = tools
        self.tools = tools.specs(config.settings.scheduling.max_actions_per_turn)
        """What every mind is offered (adapters/tools)."""
        self.journey_news: dict[str, str] = {}
        """How each journey that ended came to end (engine/phases/movement.py), for the
        traveller's next turn; in memory only (a restart forgets it)."""
        self.stop_requested = False
        self.halted: str | None = None
        """Why the run had to stop (a mind that can go on no more): what to fix, in one line."""
        self.resumed_tick: int | None = None
        self.recreated_homes: list[str] = []
        """Agents whose home was missing at start-up and was made again (`open`)."""
        self._states: dict[str, tuple[str, str]] = {}
        """Each agent's mind kind and state JSON as last queued for commit."""
        self._opened_storage = False
        self._snapshot: asyncio.Future[Path] | None = None
        """The snapshot being written in the background, if one is."""
        self.collector = TickCollector()
        self.on_close: list[Callable[[], Awaitable[object]]] = []
        """Run by close(), newest first: whoever wired the engine closes its clients."""
        self.last_perceptions: dict[str, Perception] = {}
        """What each agent perceived at the start of its latest turn (for the observer)."""
        self.write_behind = False
        """Leave each tick's last commit in flight while the next tick runs (`flush`
        waits for it); see `write_behind_on`. Off, `tick_once` returns only once
        the tick is on disk."""

    # ------------------------------------------------------------------ lifecycle

    async def _load(self) -> None:
        """Load the world and the minds' memories; reconcile the event log (`open`)."""
        if not self.storage.is_open:
            await self.storage.open()
            self._opened_storage = True
        settings = self.config.settings
        self.sim: Simulation = await load_simulation(self.storage, self.config, homes=self.homes)
        self.perception_builder = PerceptionBuilder(
            self.sim.world, self.sim.agents, self.sim.conversations, self.sim.gathering,
            horizon=settings.scheduling.horizon,
        )
        self.scheduler = Scheduler(settings.vision.radius)
        if self.homes is not None:  # a home that is a link or no folder: refused, nothing written
            self.homes.check(*(agent.name for agent in self.sim.agents.get_all_agents()))
            self.recreated_homes = [a.name for a in self.sim.agents.get_all_agents()
                                    if not self.homes.exists(a.name)]
        for agent in self.sim.agents.get_all_agents():  # never overwrites what exists
            self.sim.agents.ensure_home(agent.name, status_text(agent, self.sim.world.state,
                                                                 self.config))
        self.mirror = EventMirror(self.storage.data_dir / "events.jsonl")
        await self.mirror.reconcile(self.storage.engine)
        for name, row in (await self.storage.engine.get_minds()).items():
            mind = self.mind_for(name)
            if row.kind == mind.kind:
                mind.set_state(AgentName(name), json.loads(row.state))
                self._states[name] = (row.kind, row.state)
        self.committer = TurnCommitter(
            self.storage, self.sim, self.mirror,
            batch_turns=settings.scheduling.commit_batch_turns,
            max_delay_ms=settings.scheduling.commit_max_delay_ms,
        )
        self.file_undo = FileUndoLog(self.storage.data_dir / "undo", self.storage.world_id)
        await self._undo_lost_file_changes()
        self.committer.on_commit = lambda turns: [
            self.file_undo.committed(t.agent, t.tick) for t in turns]
        self.turn_tools = TurnTools(self.registry, self.sim, self.storage, self.homes,
                                    self.file_undo, self.committer.flush_writes, self.narrator)
        gardener = settings.gardener
        self.stewardship = Stewardship(gardener.caps.to_core(), gardener.happening_ticks)
        tick = self.sim.world.tick
        self.stewardship.remember(
            await self.storage.gardener.applied_since(0),
            await self.storage.gardener.notice_events(tick - gardener.happening_ticks),
            self.sim.world.landmarks, tick)
        self.pipeline = TickPipeline([
            InvitationExpiryPhase(self), WakePhase(self), WeatherPhase(self),
            GardenerPhase(self), MovementPhase(self), SchedulePhase(self), CheckpointPhase(self),
            AgentTurnPhase(self), CommitPhase(self),
        ])
        await self._keep_genesis()
        self.collector.settle()

    async def _keep_genesis(self) -> None:
        """Before a world's first tick, a snapshot of it as made (snapshot_0, never pruned):
        with the stored turns, every later tick can be reached again (`hearth --fork`)."""
        every = self.config.settings.storage.snapshot_every_ticks
        if not every or self.tick != 0 or await self.storage.engine.get_progress() is not None:
            return
        if any(tick == 0 for tick, _ in self.storage.snapshots.list()):
            return
        self._snapshot = self.storage.snapshots.start(self.storage.db, 0)

    async def _undo_lost_file_changes(self) -> None:
        """Put back files changed by turns that a crash kept from committing."""
        for agent, tick, files in self.file_undo.pending():
            if agent in await self.storage.engine.turns_done(tick) or self.homes is None:
                self.file_undo.forget(agent)
            else:
                logger.info("undoing file changes of %s's lost turn at tick %s", agent, tick)
                self.file_undo.play_back(agent, self.homes.path(agent), files)

    def write_behind_on(self) -> None:
        """For loops that run tick after tick (`--run`; not the TUI's runner, whose
        history reader counts on every tick it is told of being in the database): each tick's
        commit is written by the storage's writer thread while the next tick's turns
        run, and `flush` (or `close`) waits for it. A crash then loses at most the
        ticks not yet written, which are run again, identically, on resume.

        The writer gives up the GIL around each statement it sends and must win it
        back from the turns; at the interpreter's default switch interval (5 ms)
        a commit took longer than the tick it overlapped, so the interval is
        shortened to `WRITER_SWITCH_INTERVAL_S` for the whole process.
        """
        self.write_behind = True
        if sys.getswitchinterval() > WRITER_SWITCH_INTERVAL_S:
            sys.setswitchinterval(WRITER_SWITCH_INTERVAL_S)

    async def flush(self) -> None:
        """Wait until every tick run so far, and its metrics, is on disk."""
        await self.committer.flush()

    async def close(self) -> None:
        try:
            await self.flush()
        finally:  # a failed write is raised, but nothing is left open
            await self.finish_snapshot(closing=True)
            if self._opened_storage:
                await self.storage.close()
            while self.on_close:
                try:
                    await self.on_close.pop()()
                except Exception:  # one client failing to close must not keep others open
                    logger.exception("closing failed")

    # ------------------------------------------------------------------ reading

    @property
    def tick(self) -> int:
        """The tick that runs next (ticks before it are committed, or handed to the
        writer when writing behind)."""
        return self.sim.world.tick

    def mind_for(self, name: str) -> Mind:
        return self.minds.get(name, self.default_mind)

    def all_answer_at_once(self, names: Iterable[str]) -> bool:
        """Every one of these agents' minds answers without waiting (`answers_at_once`).

        Asked twice a tick about everyone scheduled, so each distinct mind is asked
        once, and with one mind for all (the usual case) no name is looked up at all.
        """
        minds, default = self.minds, self.default_mind
        if not minds:
            return (bool(default.answers_at_once)
                    or next(iter(names), None) is None)
        answers: dict[int, bool] = {}
        for name in names:
            mind = minds.get(name, default)
            answer = answers.get(id(mind))
            if answer is None:
                answer = answers[id(mind)] = bool(mind.answers_at_once)
            if not answer:
                return False
        return True

    # ------------------------------------------------------------------ commands

    def force_turn(self, name: AgentName) -> None:
        """Let this agent act first in its cluster next tick."""
        self.scheduler.force_next(name)

    def request_stop(self) -> None:
        """Finish the turns in flight, commit, and end the tick early (it resumes later)."""
        self.stop_requested = True

    def halt(self, why: str) -> None:
        """Stop as `request_stop` does because a mind can go on no more; the first reason
        is kept for the user."""
        if self.halted is None:
            self.halted = why
            logger.info("stopping: %s", why)  # the program tells the user, once
        self.request_stop()

    # ------------------------------------------------------------------ the tick

    async def tick_once(self) -> TickContext:
        """One tick. After a requested stop no new tick is begun (its opening phases
        would commit and leave it half done for no turn): the context comes back
        `stopped`, nothing run."""
        if self.stop_requested:
            world = self.sim.world
            when = world.time_of_day(world.tick)
            return TickContext(world.tick, str(when), when.period, world.weather,
                               stopped=True)
        self.collector.tick_started(pause=self.all_answer_at_once(
            self.sim.agents.names()))
        try:
            return await self._tick()
        finally:
            self.collector.tick_ended()

    async def _tick(self) -> TickContext:
        started = time.perf_counter()
        world = self.sim.world
        tick = world.tick
        when = world.time_of_day(tick)
        ctx = TickContext(tick, str(when), when.period, world.weather)
        progress = await self.storage.engine.get_progress()
        if progress is not None and progress.tick == tick:
            done = await self.storage.engine.turns_done(tick)
            ctx = TickContext(
                tick, str(when), when.period, world.weather, resumed=True,
                clusters=tuple(tuple(AgentName(n) for n in c) for c in progress.schedule),
            ).with_already_done(AgentName(n) for n in done)
            self.resumed_tick = tick
        self.sim.engine.new_id.reseed(world.state.seed, tick, "opening")
        ctx = await self.pipeline.run(ctx)
        if ctx.completed:
            await self._record_metrics(ctx, started)
            await self._maybe_snapshot(tick)
        return ctx

    async def run_agent_turn(self, name: AgentName, tick: int) -> TurnResult | None:
        """One agent's turn, captured and queued for commit the moment it ends."""
        sim = self.sim
        agent = sim.agents.get_agent(name)
        if agent is None or agent.is_sleeping or agent.journey is not None:
            return None
        mind = self.mind_for(name)
        started = time.perf_counter()
        reads_text = mind.reads_text
        changes = ChangeSet()
        with collecting(changes):
            sim.engine.new_id.reseed(sim.world.state.seed, tick, name)
            try:
                log = await self._turn(mind, name, tick, reads_text)
            except Exception as exc:  # a bug outside the mind: this turn ends, others go on
                if is_storage_fault(exc):  # the disk: the run stops, this turn is lost
                    raise
                logger.exception("turn of %s at tick %s failed", name, tick)
                log = TurnLog((), MIND_ERROR, {}, f"{type(exc).__name__}: {exc}"[:500])
            if log.halt is not None:
                self.halt(log.halt)
                if not log.actions:  # nothing happened: the turn is given back next run
                    self._forget_narration(name)
                    return None
            if log.not_begun:  # stopping before the mind sent anything: given back too
                self._forget_narration(name)
                return None
            sim.agents.set_last_active(name, tick)
            state_text = _state_text(mind, name)
            # Captured whatever happened, so memory and database never disagree.
            cap = capture(sim, changes)
        # A mind's row is rewritten only when what it remembers changed (the row
        # then holds the state after its latest turn either way).
        remembered = (mind.kind, state_text)
        unchanged = self._states.get(name) == remembered
        self._states[name] = remembered
        self.committer.add(TurnWrite(
            cap, event_rows(log.events),
            TurnRow(tick, name, mind.kind, len(log.actions), log.ended,
                    turn_record_json(log.actions, log.record, log.error,
                                     self._take_narration(name)
                                     if self._take_narration is not None else None)),
            None if unchanged else MindRow(name, mind.kind, state_text, tick),
        ))
        return TurnResult(
            name, tick, mind.kind, log.actions, log.ended, log.error,
            (time.perf_counter() - started) * 1000,
        )

    def _forget_narration(self, name: AgentName) -> None:
        """A turn given back takes its retellings' spend with it: the meter counted it,
        and the turn taken again is retold (and recorded) afresh, so it must not be
        booked on whatever turn of this agent comes next."""
        if self._take_narration is not None:
            self._take_narration(name)

    async def _turn(self, mind: Mind, name: AgentName, tick: int, reads_text: bool) -> TurnLog:
        sim = self.sim
        if self.homes is not None and (gone := self.homes.vanished(name)) is not None:
            # The homes went mid-run: every file action would fail. The turn is given
            # back and the run stops; the next run makes the homes again.
            why = f"{gone}; the next run makes the homes again"
            return TurnLog((), MIND_ERROR, error=why[:500], halt=why)
        if reads_text and self.homes is not None:
            agent = sim.agents.require(name)
            try:
                sim.agents.write_status(name, status_text(agent, sim.world.state, self.config))
            except HomeRefusedError as refused:  # the turn is given back; the run stops
                return TurnLog((), MIND_ERROR, error=str(refused)[:500], halt=str(refused))
        perception = self.perception_builder.build(name, tick, text=reads_text)
        if (news := self.journey_news.pop(name, None)) is not None:
            perception = dataclasses.replace(perception, journey_text=news)
        if self.stewardship.notices:
            perception = self.stewardship.perceive(perception, tick)
        if reads_text and self.scene_narrator is not None:
            told = await self.scene_narrator.describe(name, tick, perception)
            if told:
                perception = dataclasses.replace(perception, narrative=told)
        self.last_perceptions[name] = perception
        time = self.config.settings.time
        start = TurnStart(
            name, tick, perception, self.tools,
            self.config.settings.scheduling.max_actions_per_turn,
            night_left(tick, time.ticks_per_day, time.start_hour),
        )
        tools = self.turn_tools
        log = await run_turn(
            mind, start,
            lambda call: tools.execute(name, tick, call),
            lambda result, call: tools.narrate(name, tick, result, call),
        )
        if log.not_begun and news is not None:  # told again when the turn is given back
            self.journey_news[name] = news
        return log

    async def _record_metrics(self, ctx: TickContext, started: float) -> None:
        """Metrics go with the next commit when writing behind, at once otherwise."""
        total = (time.perf_counter() - started) * 1000
        self.committer.add_metrics(TickMetrics(
            ctx.tick, utc_stamp(), round(total, 3), len(ctx.turn_results), ctx.action_count,
            {name: round(ms, 3) for name, ms in ctx.phase_ms},
        ))
        if not self.write_behind:
            await self.committer.flush()

    async def _maybe_snapshot(self, tick: int) -> None:
        """Every `snapshot_every_ticks`, begin a snapshot of the tick just committed.

        It is written in the background while the next ticks run (storage/snapshots.py);
        the one before is waited for first, so at most one is ever in flight.
        """
        every = self.config.settings.storage.snapshot_every_ticks
        if every and (tick + 1) % every == 0:
            await self.committer.flush()  # the snapshot must hold this tick
            await self.finish_snapshot()
            self._snapshot = self.storage.snapshots.start(self.storage.db, tick + 1)

    async def finish_snapshot(self, *, closing: bool = False) -> Path | None:
        """Wait for the snapshot in flight, if any, and keep only the newest ones.

        A snapshot that fails (a full disk, say) is logged and the world goes on: it
        is a safety copy, and the database itself is intact.
        """
        pending, self._snapshot = self._snapshot, None
        if pending is None:
            return None
        try:
            path = await pending
        except Exception as exc:
            if (closing or self.stop_requested) and is_storage_fault(exc):
                # The run is ending, on this disk's fault if it failed, which the run
                # tells in one line; a snapshot begun before it (snapshot_0, say) failing
                # on the same disk is the same news, kept in the log only.
                logger.info("the snapshot could not be written: %s", exc)
            else:
                logger.error("the snapshot could not be written: %s", exc)
            return None
        self.storage.snapshots.prune(self.config.settings.storage.snapshots_keep)
        return path


def _state_text(mind: Mind, name: AgentName) -> str:
    """The mind's state for `name` as canonical JSON; "{}" if the mind fails to give it."""
    try:
        text = mind.state_json(name)
        if isinstance(text, str):
            return text
        return canonical_json(dict(mind.get_state(name)))
    except Exception:
        logger.exception("the mind of %s could not give its state", name)
        return "{}"
