"""ClaudeTurn: one agent's turn in progress with its Claude mind (adapters/claude_mind/mind.py).

Its requests, what each reply's stop reason leads to, and the results that go back;
the mind's docstring tells the whole story of a turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anthropic

from adapters.capacity import Capacity, CapacityClosed
from adapters.claude_batches import BatchClosed, BatchGate, BatchRequestFailed
from adapters.claude_calls import (
    CallPolicy,
    GaveUp,
    Prepared,
    Unservable,
    ask,
    describe,
    halting_cause,
    prompt_too_long,
)
from adapters.claude_mind import history as h
from adapters.claude_mind.history import cut_off_note
from adapters.claude_mind.levers import Levers
from adapters.claude_mind.request_plan import RequestPlan
from adapters.client_shards import ClientShards
from adapters.model_memory import ModelMemory
from adapters.model_turn import ModelTurn, ms_since
from core.spend import Usage
from services.budget import SpendMeter
from services.mind import MindError, MindHalt, ToolCall, ToolOutcome, TurnStart

log = logging.getLogger("hearth.claude")

@dataclass(frozen=True)
class ClaudeProfile:
    """Who a Claude mind speaks for: the model, the agent's own personality text, and how
    hard it thinks (None: the model's default)."""

    model: str
    personality: str
    effort: str | None = None


class TurnHost(Protocol):
    """What a turn needs of its mind (ClaudeMind is the one there is)."""

    clock: Callable[[], float]
    turn_deadline: float
    stopping: Callable[[], bool]
    levers: Levers
    memory: ModelMemory
    plan: RequestPlan
    batches: BatchGate | None
    policy: CallPolicy
    meter: SpendMeter | None
    shards: ClientShards

    def budget_reached(self) -> str | None: ...
    def capacity_of(self, agent: str, model: str) -> Capacity | None: ...
    def request_options(self, profile: ClaudeProfile, follow_up: bool = False
                        ) -> dict[str, Any]: ...
    def _trace(self, agent: str, record: Mapping[str, Any]) -> None: ...


ENDING_STOPS = frozenset({"end_turn", "stop_sequence", "pause_turn"})
CUT_SHORT_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})


class _Stopped(Exception):
    """Stopping while a later request of the turn waited for room: the turn ends there."""


class ClaudeMindError(MindError):
    """A request failed for good (after its retries); the message says why."""


class ClaudeMindHalt(ClaudeMindError, MindHalt):
    """The API refused in a way no retry mends (a wrong key, a retired model): the run
    stops; the message says what to fix."""


class ClaudeTurn(ModelTurn):
    """One agent's turn in progress with Claude (adapters/model_turn.py)."""

    kind = "claude"
    history_ops = h  # type: ignore[assignment]

    def __init__(
        self,
        mind: TurnHost,
        start: TurnStart,
        profile: ClaudeProfile,
        history: list[h.Message],
        system: Prepared,
        tools: Prepared,
    ) -> None:
        super().__init__(start, profile.model, history, mind._trace)
        self.mind = mind
        self.profile = profile
        self.system = system
        self.tools = tools
        self.room: int | None = None
        """The most history a request may carry (ClaudeMind.begin), None: no limit."""
        self.later = False
        """The turn ended on results its next turn opens with (Levers.results_next_turn)."""
        self.ttl: str | None = None
        """The cache lifetime this turn's requests write (None: 5 minutes)."""
        self.retry_cut = False
        """A reply was just cut off by max_tokens with calls in it: ask once more."""
        self.cut_retried = False
        self.deadline = mind.clock() + mind.turn_deadline

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        if self.stop is not None and self.stop != "tool_use":
            return ()  # the model already ended the turn
        if self.mind.budget_reached() is not None:
            self.stop = "budget"  # nothing more is sent; open calls are answered at finish
            return ()
        first = not self.requests
        if not first and self.mind.stopping():
            self.stop = "stopping"  # the run is ending: what was done stands
            return ()
        if first:
            self._open()
        elif self.mind.levers.later(outcomes, self.start.tools) and self._room_for(outcomes):
            self.later = True  # finish() answers the calls; the next turn opens with them
            return ()
        else:
            self._answer(outcomes)
        try:
            reply = await self._ask(first)
            calls = self._take(reply)
            if self.retry_cut and self.mind.budget_reached() is None \
                    and not self.mind.stopping():
                # Cut off while calling: told so (the note), it may make the call again.
                self.retry_cut, self.cut_retried = False, True
                calls = self._take(await self._ask(False))
        except _Stopped:  # stopping while the next request waited for room
            self.stop = "stopping"
            return ()
        return calls

    def _room_for(self, outcomes: Sequence[ToolOutcome]) -> bool:
        """Whether the history, these results added, stays below where it compacts: a
        compaction must find the tool loop closed (its thinking is bound to the start
        that compaction rewrites), so the turn that reaches it asks once more."""
        memory = self.mind.memory
        size = memory.size(self.history) + sum(len(o.text) + 200 for o in outcomes)
        most = memory.compact_above_chars if self.room is None else min(
            memory.compact_above_chars, self.room)
        return size <= most

    def _waited(self, seconds: float) -> None:
        """Time spent waiting for room at the endpoint is not the API failing: the
        turn's deadline moves on by as much."""
        self.deadline += seconds

    def record(self) -> dict[str, Any]:
        record = super().record()
        if self.mind.levers.keep_thinking:
            record["thinking"] = "kept"  # adapters/memory_rebuild.py: not dropped at the start
        if self.later:
            record["results"] = "next_turn"
        return record

    # ------------------------------------------------------------------ one request

    async def _ask(self, first: bool) -> anthropic.types.Message:
        agent, tick = self.start.agent, self.start.tick
        started = time.perf_counter()
        mind = self.mind
        client = mind.shards.of(agent)
        capacity = mind.capacity_of(agent, self.profile.model)
        options = mind.request_options(self.profile, follow_up=not first)
        planned = None if capacity is None else mind.plan.input_of(
            agent, len(self.system.json) + len(self.tools.json), self.history, mind.clock())
        try:
            if mind.batches is not None:  # unattended: in the step's one Message Batch
                reply = await mind.batches.create(
                    client, model=self.profile.model, tools=self.tools.value,
                    system=self.system.value,
                    messages=h.with_breakpoint(self.history, self.first, self.ttl), **options)
            else:
                reply = await ask(
                    client, mind.policy, self.deadline, clock=mind.clock,
                    capacity=capacity, stopping=mind.stopping, on_wait=self._waited,
                    input_tokens=planned,
                    resize=lambda: mind.plan.sized(capacity, self.profile.model, options,
                                                   mind.plan.scale(self.profile.model)),
                    model=self.profile.model,
                    tools=self.tools,
                    system=self.system,
                    messages=h.with_breakpoint(self.history, self.first, self.ttl),
                    **options,
                )
        except (CapacityClosed, BatchClosed):
            # The run began to stop while the request waited for room (or its batch):
            # nothing was answered.
            if first:
                self._not_begun()
            raise _Stopped from None
        except (anthropic.APIError, GaveUp, BatchRequestFailed) as exc:
            cause = describe(exc)
            halt = halting_cause(exc)
            if prompt_too_long(exc):
                mind.memory.squeeze_next(agent)
            elif (isinstance(exc, Unservable) and exc.kind == "input-tokens"
                  and len(self.history) > 1):
                # Input no bucket holds, with history that can be folded: it is, before
                # the agent's next turn; only the agent's turn ends, not the run.
                mind.memory.squeeze_next(agent)
                mind.plan.forget(agent)
                halt = None
            self._request_failed(cause, first, started)
            if halt is not None:
                raise ClaudeMindHalt(halt) from None
            raise ClaudeMindError(cause) from None
        usage = Usage.of_reply(reply.usage)
        summary: dict[str, Any] = {"stop": reply.stop_reason, "usage": usage.to_json(),
                                   "ms": ms_since(started)}
        meter = mind.meter
        batch = mind.batches is not None
        if batch:
            summary["batch"] = True  # priced at the Batches API's share (core/spend.py)
        if meter is not None:
            summary["usd"] = round(meter.add(agent, tick, self.profile.model, usage,
                                             batch=batch), 6)
        self.requests.append(summary)
        self.mind._trace(agent, {"type": "request", "tick": tick, **summary})
        return reply

    def _take(self, reply: anthropic.types.Message) -> Sequence[ToolCall]:
        """Keep the reply in the history; the calls to run (none ends the turn)."""
        content = [_block(b) for b in reply.content]
        stop = reply.stop_reason or "end_turn"
        self.stop = stop
        if stop == "refusal":
            # Take the refused perception out, so the next turn starts afresh; results
            # of calls already run stay (they are what happened). Nothing else is kept.
            if len(self.requests) == 1:
                self._take_back()
            return ()
        if stop in CUT_SHORT_STOPS:
            # A call in a cut-off reply may be incomplete: it is neither run nor sent back
            # (a tool_use must be answered in the next message); the note says so instead.
            dropped = [str(b.get("name")) for b in content if b.get("type") == "tool_use"]
            self.history.append(h.assistant(h.without_calls(content)))
            h.add_user_text(self.history, cut_off_note(stop, dropped))
            self.mind._trace(self.start.agent, {"type": "cut_off", "tick": self.start.tick,
                                                "stop": stop, "dropped": dropped})
            if stop == "model_context_window_exceeded":
                self.mind.memory.squeeze_next(self.start.agent)
            else:
                self.mind.plan.cut(self.profile.model)
                self.retry_cut = bool(dropped) and not self.cut_retried
            return ()
        self.history.append(h.assistant(content))
        if stop != "tool_use":
            if stop not in ENDING_STOPS:
                log.warning("%s: unknown stop reason %r ends the turn", self.start.agent, stop)
            h.close_open_calls(self.history)
            return ()
        calls = [ToolCall(b["id"], b["name"], b.get("input") or {})
                 for b in content if b.get("type") == "tool_use"]
        for call in calls:
            self.mind._trace(self.start.agent, {"type": "tool_call", "tick": self.start.tick,
                                                "tool": call.name, "input": call.arguments})
        return calls

    def _answer(self, outcomes: Sequence[ToolOutcome]) -> None:
        self.history.append(self._results(outcomes))

    def _results(self, outcomes: Sequence[ToolOutcome]) -> h.Message:
        by_id = {o.call_id: o for o in outcomes}
        answers = []
        for call_id in h.open_calls(self.history):
            outcome = by_id.get(call_id)
            if outcome is None:
                answers.append((call_id, h.NOT_RUN, True))
                continue
            answers.append((call_id, outcome.text, not outcome.success))
            self.mind._trace(self.start.agent, {
                "type": "tool_result", "tick": self.start.tick, "tool": outcome.name,
                "ok": outcome.success, "text": outcome.text})
        return h.tool_results(answers)


def _block(block: Any) -> dict[str, Any]:
    """A reply's content block as the plain value the API takes back."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(mode="json", exclude_none=True)
