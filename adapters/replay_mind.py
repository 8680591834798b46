"""The replay mind: each agent does again what the stored record says it did.

    source = RecordedTurns(parent_data_dir / "world.db")   # read-only
    mind = ReplayMind("claude", source, held_states)       # one per kind of mind recorded
    narrator = ReplayNarrator(source)                      # the recorded words, no model

A turn asks the source for the agent's stored turn at this tick (the `turns` table:
every call's tool and arguments, whether it worked, and what the agent heard) and
hands the engine those calls, in order, in one batch. Nothing is asked of a model, so
a replay costs nothing. The engine executes the calls for real: the world changes
exactly as it did, and the turn's row, record and events come out as they were stored.

- No record for a turn (past the end of the source, or an agent the source never had
  act then): `MindHalt`, one line; the run stops before the agent does anything.
- A call that fails where it worked (or works where it failed): the world has left the
  record (a fork that was changed); `MindHalt` after the calls, so the run stops there.
- What a mind remembers (`minds` rows) is stored only as of each agent's latest turn.
  Given `limits` (a fork's walk), a Claude or local mind's memory is rebuilt from each
  replayed turn's record, in that mind's own format (adapters/memory_rebuild.py), so
  the engine stores it as the source did after every turn; a turn whose record cannot
  rebuild it puts the agent's memory back as the replay found it, and `not_rebuilt`
  says why. Without (or for other kinds), a replay keeps the memory it was given. Either
  way, at the turn where the source last wrote an agent's memory it takes the source's:
  a replay that runs to the source's end leaves every memory as the source left it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from adapters.memory_rebuild import KINDS, CannotRebuild, MemoryLimits, after_turn
from adapters.tools import TOOLS, Narration
from core.types import AgentName
from services.mind import MindDefaults, MindError, MindHalt, ToolCall, ToolOutcome, TurnStart
from services.narrator import NarrationContext, TemplateNarrator
from storage.world_fork import read_only

log = logging.getLogger("hearth.replay")

OVER_THE_LIMIT = ToolCall("replay-over", "look", {})
"""Asked after the recorded calls when the record ended at the action limit: the turn
loop answers it "not this turn" without running it, and the turn ends as it did."""

_UNNARRATED = TOOLS.named(Narration.AS_IS)
"""Tools whose results go back as they are (engine/tool_use.py), never through a narrator."""


class RecordedTurns:
    """The stored turns of one world, read through a read-only connection."""

    def __init__(self, db: Path) -> None:
        self.db = Path(db)
        self.conn: sqlite3.Connection = read_only(self.db)

    def turn(self, tick: int, agent: str) -> tuple[str, str, dict[str, Any]] | None:
        """(mind kind, how it ended, record) of `agent`'s turn at `tick`; None if none."""
        row = self.conn.execute("SELECT mind, ended, record FROM turns WHERE tick = ? AND "
                                "agent = ?", (tick, agent)).fetchone()
        if row is None:
            return None
        try:
            record = json.loads(row[2])
        except ValueError:
            record = {}
        return str(row[0]), str(row[1]), record if isinstance(record, dict) else {}

    def kind_from(self, tick: int, agent: str) -> str | None:
        """The kind of mind behind `agent`'s first stored turn at or after `tick`."""
        row = self.conn.execute("SELECT mind FROM turns WHERE agent = ? AND tick >= ? "
                                "ORDER BY tick LIMIT 1", (agent, tick)).fetchone()
        return None if row is None else str(row[0])

    def last_minds(self) -> dict[str, tuple[str, str, int]]:
        """agent -> (kind, state JSON, tick) of the memory the source last stored."""
        return {str(a): (str(k), str(s), int(t)) for a, k, s, t in self.conn.execute(
            "SELECT agent, kind, state, tick FROM minds")}

    def last_tick(self) -> int:
        row = self.conn.execute("SELECT tick FROM world_state WHERE id = 1").fetchone()
        return 0 if row is None else int(row[0])

    def close(self) -> None:
        self.conn.close()


class ReplayMind(MindDefaults):
    """Speaks for agents whose recorded turns were taken by minds of kind `kind`."""

    answers_at_once = True  # nothing to wait for: turns run in schedule order
    reads_text = False  # the perception is never read, so no text is made for it

    def __init__(self, kind: str, source: RecordedTurns, held: Mapping[str, str] | None = None,
                 label: str | None = None, limits: MemoryLimits | None = None) -> None:
        self.kind = kind
        self.source = source
        self.label = label or str(source.db.parent)
        self._held: dict[str, str] = dict(held or {})
        """Each agent's memory as JSON text, as it stands in the world replayed into."""
        self._found = dict(self._held)
        """Each agent's memory as the replay found it (kept when a rebuild cannot go on)."""
        self._last = {a: (s, t) for a, (k, s, t) in source.last_minds().items() if k == kind}
        self.limits = limits if kind in KINDS else None
        """Set: each turn's record rebuilds the memory (adapters/memory_rebuild.py)."""
        self.not_rebuilt: dict[str, str] = {}
        """agent -> why its memory is as the replay found it and not rebuilt (one line)."""
        self._turned: dict[str, int] = {}
        self._rebuilt: dict[str, tuple[str, dict[str, Any]]] = {}
        """agent -> (the state text it holds, that state): read once, not every turn."""

    def begin(self, start: TurnStart) -> ReplayTurn:
        return ReplayTurn(self, start, self.source.turn(start.tick, start.agent))

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return json.loads(self.state_json(agent))

    def state_json(self, agent: AgentName) -> str:
        return self._held.get(agent, "{}")

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        held = self._held.get(agent)
        if held is None or json.loads(held) != state:  # keep the stored text when it agrees
            self._held[agent] = json.dumps(state, ensure_ascii=False, separators=(",", ":"),
                                           sort_keys=True)

    def _took_turn(self, agent: str, tick: int, record: Mapping[str, Any]) -> None:
        """The turn is over: the memory after it (once per turn)."""
        if self._turned.get(agent) == tick:
            return
        self._turned[agent] = tick
        if self.limits is not None and agent not in self.not_rebuilt:
            self._rebuild(agent, tick, record.get("mind"), self.limits)
        last = self._last.get(agent)
        if last is not None and last[1] == tick:
            if self.limits is not None and agent not in self.not_rebuilt and (
                    json.loads(self.state_json(agent)) != json.loads(last[0])):
                log.warning("the memory of %s rebuilt up to tick %s is not the one %s "
                            "stored; the stored one is taken", agent, tick, self.label)
            self._held[agent] = last[0]  # what the source stored: exact from here on
            self.not_rebuilt.pop(agent, None)

    def _rebuild(self, agent: str, tick: int, record: Any, limits: MemoryLimits) -> None:
        held = self._held.get(agent)
        kept = self._rebuilt.get(agent)
        try:
            before = kept[1] if kept is not None and kept[0] == held else (
                None if held is None else json.loads(held))
            state = after_turn(self.kind, before, record, limits)
        except (CannotRebuild, ValueError) as exc:
            why = exc if isinstance(exc, CannotRebuild) else "found a memory that is not JSON"
            self.not_rebuilt[agent] = f"its turn at tick {tick} {why}"
            found = self._found.get(agent)
            if found is None:
                self._held.pop(agent, None)
            else:
                self._held[agent] = found
            return
        text = json.dumps(state, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        self._held[agent] = text
        self._rebuilt[agent] = (text, state)


class ReplayTurn:
    def __init__(self, mind: ReplayMind, start: TurnStart,
                 found: tuple[str, str, dict[str, Any]] | None) -> None:
        self.mind = mind
        self.start = start
        self.found = found
        self.asked = 0
        actions = (found[2].get("actions") if found is not None else None) or []
        self.actions = [a for a in actions if isinstance(a, dict)]

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self.asked += 1
        agent, tick = self.start.agent, self.start.tick
        if self.found is None:
            raise MindHalt(f"no recorded turn of {agent} at tick {tick} in {self.mind.label}; "
                           "the replay ends here")
        if self.asked == 1:
            return [ToolCall(f"replay-{i}", str(a.get("tool", "")),
                             a.get("args") if isinstance(a.get("args"), dict) else {})
                    for i, a in enumerate(self.actions)]
        if self.asked == 2:
            self.mind._took_turn(agent, tick, self.found[2])
            for outcome, action in zip(outcomes, self.actions, strict=False):
                if outcome.success != (action.get("ok") is True):
                    went = "worked" if outcome.success else "failed"
                    raise MindHalt(
                        f"{agent}'s {outcome.name} at tick {tick} {went} where the record in "
                        f"{self.mind.label} says otherwise: this world has left the record, "
                        "so the replay ends here")
            if self.found[1] == "action_limit":
                return [OVER_THE_LIMIT]
            error = self.found[2].get("error")
            if self.found[1] == "error" and error:
                raise MindError(str(error))
        return ()

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        if self.found is not None:
            self.mind._took_turn(self.start.agent, self.start.tick, self.found[2])

    def record(self) -> Mapping[str, Any]:
        if self.found is None:
            return {}
        mind = self.found[2].get("mind")
        return mind if isinstance(mind, dict) else {}


class ReplayNarrator:
    """The words each call was narrated with when it was recorded (a model narrator's
    too, and what it spent, kept in the turn's record), for every agent whose turn the
    source holds, whichever mind takes it now; the templates' for a call whose outcome
    differs from the record, or a turn the source does not hold."""

    def __init__(self, source: RecordedTurns) -> None:
        self.source = source
        self.template = TemplateNarrator()
        self._texts: dict[str, tuple[int, list[tuple[bool, str]]]] = {}
        """agent -> (tick, the recorded (ok, words) of its narrated calls not yet given)."""
        self._spend: dict[str, Any] = {}

    def _queue(self, agent: str, tick: int) -> list[tuple[bool, str]]:
        held = self._texts.get(agent)
        if held is not None and held[0] == tick:
            return held[1]
        found = self.source.turn(tick, agent)
        record = found[2] if found is not None else {}
        texts = [(a.get("ok") is True, str(a.get("text", "")))
                 for a in record.get("actions", ()) or ()
                 if isinstance(a, dict) and str(a.get("tool", "")) not in _UNNARRATED]
        self._texts[agent] = (tick, texts)
        narration = record.get("narration")
        if isinstance(narration, dict):
            self._spend[agent] = narration
        else:
            self._spend.pop(agent, None)
        return texts

    def narrate_now(self, result: Any, ctx: NarrationContext) -> str:
        texts = self._queue(ctx.agent, ctx.tick)
        if texts:
            ok, text = texts.pop(0)
            if ok == result.success:
                return text
        return self.template.narrate_now(result, ctx)

    async def narrate(self, result: Any, ctx: NarrationContext) -> str:
        return self.narrate_now(result, ctx)

    async def describe(self, agent: str, tick: int, perception: Any) -> str | None:
        return None  # the template's narrative: a replayed mind reads no perception

    def take_spend(self, agent: str) -> Mapping[str, Any] | None:
        """What a model narrator spent on the turn just narrated, as recorded (once)."""
        return self._spend.pop(agent, None)
