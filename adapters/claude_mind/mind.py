"""ClaudeMind: a Claude model speaks for an agent, through the Messages API's tool use.

    mind = ClaudeMind(client, {"Ember": ClaudeProfile("claude-sonnet-5-5", "You...", "medium")})
    engine = HearthEngine(storage, config, mind=mind)

A turn is a short exchange with the model. The first request carries what the
agent perceives now (the newest user message); each reply's tool calls are run
by the engine, and their narrated outcomes go back together in one user message
(`is_error` on the ones that failed) until the model stops calling tools.

Every stop reason ends somewhere sensible: `tool_use` goes on; `end_turn`,
`stop_sequence` and `pause_turn` end the turn; `max_tokens` and
`model_context_window_exceeded` keep what was said and drop tool calls that may
have been cut short (an incomplete tool_use must not go back unanswered), and a note
after the reply tells the model that it was cut off and which calls were not run;
after `max_tokens` that dropped a call the model is asked once more within the turn;
`refusal` ends the turn and takes the refused exchange out of the history.
Requests are retried by adapters/claude_calls.py within the turn's deadline. One
that still fails ends the turn with a `ClaudeMindError` naming the cause: the
actions already taken stand, the tick goes on for everyone else, and the history
is left valid to send next turn. A failure no retry can mend (a key
refused, a model gone) raises `ClaudeMindHalt` instead, and the run stops.

A 5.x model thinks before it answers (adaptive thinking, steered by the agent's
effort). Its thinking blocks go back unmodified while a tool loop is open, as the
API requires; at the next turn's start they are left out of what is sent (they
stay in the turn's record). Thinking belongs to the agent: it is never parsed,
narrated or shown as speech.

What the agent said and heard is kept in its history (history.py), handed to the
engine as the mind's state after every turn and stored with it; each turn's own
messages also go into the turn's record, so the whole life stays in the database.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anthropic

from adapters.capacity import Capacities, Capacity, CapacityClosed
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
from adapters.claude_mind.compaction import compact, fold_all, history_chars
from adapters.claude_mind.history import cut_off_note
from adapters.claude_mind.levers import Levers
from adapters.claude_mind.prompt import TURN_ENDS, system_blocks, tool_params, turn_ends_later
from adapters.claude_mind.request_plan import RequestPlan
from adapters.claude_models import Lineup
from adapters.client_shards import ClientShards
from adapters.model_memory import ModelMemory, write_trace
from core.spend import Usage
from core.types import AgentName
from services.budget import SpendMeter
from services.mind import (
    MindError,
    MindHalt,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    TurnNotBegun,
    TurnStart,
)

log = logging.getLogger("hearth.claude")

Trace = Callable[[str, Mapping[str, Any]], None]
"""Where trace records go: (agent, record). storage.traces.TraceWriter.write_now fits."""

ENDING_STOPS = frozenset({"end_turn", "stop_sequence", "pause_turn"})
CUT_SHORT_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})


class _Stopped(Exception):
    """Stopping while a later request of the turn waited for room: the turn ends there."""


class ClaudeMindError(MindError):
    """A request failed for good (after its retries); the message says why."""


class ClaudeMindHalt(ClaudeMindError, MindHalt):
    """The API refused in a way no retry mends (a wrong key, a retired model): the run
    stops; the message says what to fix."""


@dataclass(frozen=True)
class ClaudeProfile:
    """Who a Claude mind speaks for: the model, the agent's own personality text, and how
    hard it thinks (None: the model's default)."""

    model: str
    personality: str
    effort: str | None = None


class ClaudeMind:
    """Implements services.mind.Mind with one `AsyncAnthropic` client for any number of agents."""

    kind = "claude"
    reads_text = True
    answers_at_once = False

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        profiles: Mapping[str, ClaudeProfile],
        *,
        max_tokens: int = 1024,
        trace: Trace | None = None,
        compact_above_chars: int = 120_000,
        keep_recent_chars: int = 40_000,
        summary_max_chars: int = 8_000,
        meter: SpendMeter | None = None,
        on_budget: Callable[[str], None] | None = None,
        policy: CallPolicy | None = None,
        turn_deadline: float = 300.0,
        lineup: Lineup | None = None,
        clock: Callable[[], float] = time.monotonic,
        capacities: Capacities | None = None,
        more_clients: Sequence[anthropic.AsyncAnthropic] = (),
        levers: Levers | None = None,
    ) -> None:
        self.client = client
        self.levers = levers or Levers()
        """What each turn spends (adapters/claude_mind/levers.py)."""
        self.shards = ClientShards((client, *more_clients))
        """The clients agents are spread over (adapters/client_shards.py)."""
        self.capacities = capacities
        """Room at the endpoint per model, shared with the narrator (adapters/capacity.py);
        None: every request goes at once."""
        self.profiles = dict(profiles)
        self.max_tokens = max_tokens
        self.trace = trace
        self.policy = policy or CallPolicy()
        """Retries, their waits and one request's time limit (adapters/claude_calls.py)."""
        self.turn_deadline = turn_deadline
        """Seconds one turn may spend on the API, retries and waits included."""
        self.lineup = lineup or Lineup()
        """What the check before the run learnt of each model (its efforts, its limits)."""
        self.clock = clock
        self.stopping: Callable[[], bool] = lambda: False
        """True once the run is stopping: a turn then asks no more (open calls are
        answered "not run" at its end), so Ctrl+C does not wait for a whole tool loop."""
        self.memory = ModelMemory(
            compact=compact, size=history_chars, problem=h.history_problem,
            compact_above_chars=compact_above_chars, keep_recent_chars=keep_recent_chars,
            summary_max_chars=summary_max_chars, trace=trace)
        self.meter = meter
        """Counts spend and knows the budgets (services/budget.py); None: no accounting."""
        self.on_budget = on_budget
        """Told once, in words, when a budget is reached (the run stops on it)."""
        self._told = False
        self.plan = RequestPlan()
        """What each request is planned to cost against its model's limits."""
        # Serialized once (adapters/claude_calls.py Prepared): the same in every request.
        self._systems: dict[str, Prepared] = {}
        self._tools: tuple[tuple[ToolSpec, ...], Prepared] | None = None

    # ------------------------------------------------------------------ Mind

    def begin(self, start: TurnStart) -> ClaudeTurn:
        name = start.agent
        profile = self.profiles.get(name)
        if profile is None:
            raise ClaudeMindError(f"no Claude profile for {name} (is it in agents.yaml?)")
        system = self._systems.get(name)
        if system is None:
            system = self._systems[name] = Prepared(system_blocks(
                name, profile.personality, self._turn_ends(start.tools)))
        history = self.memory.history(name)
        tools = self._tool_params(start.tools)
        # A request with a cold cache writes all its history: it must fit the model's
        # input-token bucket (adapters/request_sizing.py), so history past that room
        # is folded as if the context were full.
        room = self.plan.history_room(self.capacity_of(name, profile.model),
                                      len(system.json) + len(tools.json))
        # Compaction rewrites the start, which the open exchange's thinking is bound to:
        # it waits for a turn that finds the loop closed, unless the context is full.
        folded = self.memory.compact(name, wait=h.exchange_open(history), room=room)
        if folded and h.exchange_open(self.memory.history(name)):
            folded += self._fold_open_loop(name)
        if folded:
            self.plan.forget(name)
        if folded or not self.levers.keep_thinking:
            h.drop_thinking(self.memory.history(name))
        turn = ClaudeTurn(self, start, profile, self.memory.history(name), system, tools)
        turn.folded = folded
        turn.room = room
        return turn

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return self.memory.state(agent)

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self.memory.restore(agent, state)

    def _fold_open_loop(self, name: str) -> int:
        """The context was full and the start changed under an open tool loop, whose
        thinking is bound to that start: fold the rest, loop included, into the summary
        (its thinking stays in the turns' records)."""
        state = self.memory.state(name)
        kept, summary, folded = fold_all(list(state["messages"]), str(state["summary"]),
                                         summary_chars=self.memory.summary_max_chars)
        self.memory.restore(name, {"messages": kept, "summary": summary})
        return folded

    def capacity_of(self, agent: str, model: str) -> Capacity | None:
        """The room at the agent's endpoint for `model` (None: no pacing)."""
        if self.capacities is None:
            return None
        return self.capacities.of(str(self.shards.of(agent).base_url), model)

    def request_options(self, profile: ClaudeProfile, follow_up: bool = False
                        ) -> dict[str, Any]:
        """What each request for this agent carries besides the conversation; a
        `follow_up` answers tool results within a turn."""
        options = self.lineup.options_for(
            profile.model, self.levers.effort(profile.effort, follow_up), self.max_tokens)
        # One thinking configuration for the whole tool loop, so it follows the turn's own
        # effort, not the follow-up's.
        thinking = self.levers.thinking_for(profile.model, profile.effort)
        if thinking is not None:
            options["thinking"] = thinking
        return options

    # ------------------------------------------------------------------ parts

    def budget_reached(self) -> str | None:
        """Which budget is reached, if one is; the first time, `on_budget` hears of it."""
        reached = self.meter.reached() if self.meter is not None else None
        if reached is not None and not self._told:
            self._told = True
            log.warning("stopping: %s", reached)
            if self.on_budget is not None:
                self.on_budget(reached)
        return reached

    def _turn_ends(self, tools: Sequence[ToolSpec]) -> str:
        """What the system prompt says of a turn's end: true to the levers in use."""
        if not self.levers.results_next_turn:
            return TURN_ENDS
        return turn_ends_later([t.name for t in tools if t.informs])

    def _tool_params(self, specs: tuple[ToolSpec, ...]) -> Prepared:
        kept = self._tools
        if kept is None or kept[0] != specs:
            kept = self._tools = (specs, Prepared(tool_params(specs)))
        return kept[1]

    def _trace(self, agent: str, record: Mapping[str, Any]) -> None:
        write_trace(self.trace, agent, record)


class ClaudeTurn:
    """One agent's turn in progress (services.mind.MindTurn)."""

    def __init__(
        self,
        mind: ClaudeMind,
        start: TurnStart,
        profile: ClaudeProfile,
        history: list[h.Message],
        system: Prepared,
        tools: Prepared,
    ) -> None:
        self.mind = mind
        self.start = start
        self.profile = profile
        self.history = history
        self.system = system
        self.tools = tools
        self.first = len(history)
        """Where this turn's messages begin in the history."""
        self.opening: tuple[int, h.Message | None] = (len(history), None)
        """What adding the perception did (history.add_user_text), to take it back."""
        self.requests: list[dict[str, Any]] = []
        self.folded = 0
        """Messages folded into the summary as this turn began."""
        self.room: int | None = None
        """The most history a request may carry (ClaudeMind.begin), None: no limit."""
        self.later = False
        """The turn ended on results its next turn opens with (Levers.results_next_turn)."""
        self.stop: str | None = None
        self.ended = ""
        self.retry_cut = False
        """A reply was just cut off by max_tokens with calls in it: ask once more."""
        self.cut_retried = False
        self.deadline = mind.clock() + mind.turn_deadline
        mind._trace(start.agent, {"type": "turn_start", "tick": start.tick,
                                  "model": profile.model})

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
            h.close_open_calls(self.history)  # a history restored in mid-exchange
            self.opening = h.add_user_text(self.history, self.start.perception.as_text())
            self.first = self.opening[0]
        elif self.mind.levers.later(outcomes, self.start.tools) and self._room_for(outcomes):
            self.later = True  # finish() answers the calls; the next turn opens with them
            return ()
        else:
            self.history.append(self._results(outcomes))
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

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        if h.open_calls(self.history):  # stopped by the action limit: answer what was asked
            self.history.append(self._results(outcomes))
        self.ended = reason
        self.mind._trace(self.start.agent, {
            "type": "turn_end", "tick": self.start.tick, "ended": reason, "stop": self.stop,
            "requests": len(self.requests),
        })

    def record(self) -> Mapping[str, Any]:
        record = {"mind": "claude", "model": self.profile.model, "stop": self.stop,
                  "requests": self.requests, "messages": self.history[self.first:]}
        if self.folded:
            record["folded"] = self.folded
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
            reply = await ask(
                client, mind.policy, self.deadline, clock=mind.clock,
                capacity=capacity, stopping=mind.stopping, on_wait=self._waited,
                input_tokens=planned,
                resize=lambda: mind.plan.sized(capacity, self.profile.model, options,
                                               mind.plan.scale(self.profile.model)),
                model=self.profile.model,
                tools=self.tools,
                system=self.system,
                messages=h.with_breakpoint(self.history, self.first),
                **options,
            )
        except CapacityClosed:
            # The run began to stop while the request waited for room: nothing was sent.
            if first:
                h.undo_user_text(self.history, self.opening)
                mind._trace(agent, {"type": "turn_end", "tick": tick, "ended": "not_begun",
                                    "stop": "stopping", "requests": 0})
                raise TurnNotBegun("the run stopped before the turn's first request was "
                                   "sent; the next run gives the turn back") from None
            raise _Stopped from None
        except (anthropic.APIError, GaveUp) as exc:
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
            if first:  # nothing of this turn happened: as if it had never asked
                h.undo_user_text(self.history, self.opening)
            self.stop = "error"
            self.requests.append({"error": cause, "ms": _ms(started)})
            mind._trace(agent, {"type": "request_failed", "tick": tick, "error": cause})
            mind._trace(agent, {"type": "turn_end", "tick": tick, "ended": "error",
                                "stop": "error", "requests": len(self.requests)})
            if halt is not None:
                raise ClaudeMindHalt(halt) from None
            raise ClaudeMindError(cause) from None
        usage = Usage.of_reply(reply.usage)
        summary: dict[str, Any] = {"stop": reply.stop_reason, "usage": usage.to_json(),
                                   "ms": _ms(started)}
        meter = mind.meter
        if meter is not None:
            summary["usd"] = round(meter.add(agent, tick, self.profile.model, usage), 6)
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
                h.undo_user_text(self.history, self.opening)
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


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
