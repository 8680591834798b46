"""ClaudeMind: a Claude model speaks for an agent, through the Messages API's tool use.

    mind = ClaudeMind(client, {"Ember": ClaudeProfile("claude-sonnet-5-5", "You...", "medium")})
    engine = await HearthEngine.open(storage, config, mind=mind)

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
from typing import Any

import anthropic

from adapters.capacity import Capacities, Capacity
from adapters.claude_batches import BatchGate
from adapters.claude_calls import (
    CallPolicy,
    Prepared,
)
from adapters.claude_mind import history as h
from adapters.claude_mind.compaction import compact, fold_all, history_chars
from adapters.claude_mind.levers import Levers
from adapters.claude_mind.prompt import TURN_ENDS, system_blocks, tool_params, turn_ends_later
from adapters.claude_mind.request_plan import RequestPlan
from adapters.claude_mind.turn import ClaudeMindError, ClaudeProfile, ClaudeTurn
from adapters.claude_models import Lineup
from adapters.client_shards import ClientShards
from adapters.model_memory import ModelMemory, write_trace
from core.types import AgentName
from services.budget import SpendMeter
from services.mind import (
    MindDefaults,
    ToolSpec,
    TurnStart,
)

log = logging.getLogger("hearth.claude")

Trace = Callable[[str, Mapping[str, Any]], None]
"""Where trace records go: (agent, record). storage.traces.TraceWriter.write_now fits."""

class ClaudeMind(MindDefaults):
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
        self.batches: BatchGate | None = None
        """Unattended (`--economy`): every request goes into its step's Message Batch
        (adapters/claude_batches.py), at half price, answered within the hour."""
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
        self._systems: dict[tuple[str, str | None], Prepared] = {}
        self._began: dict[str, tuple[float, int]] = {}
        """When (the mind's clock) and at which tick each agent's latest turn began."""
        self._pace: dict[str, float] = {}
        """Seconds a tick between each agent's turns, as last seen: Levers.ttl."""
        self._tools: tuple[tuple[ToolSpec, ...], Prepared] | None = None

    # ------------------------------------------------------------------ Mind

    def begin(self, start: TurnStart) -> ClaudeTurn:
        name = start.agent
        profile = self.profiles.get(name)
        if profile is None:
            raise ClaudeMindError(f"no Claude profile for {name} (is it in agents.yaml?)")
        ttl = self.levers.ttl(self._expected_wait(name, start))
        system = self._systems.get((name, ttl))
        if system is None:
            system = self._systems[(name, ttl)] = Prepared(system_blocks(
                name, profile.personality, self._turn_ends(start.tools), ttl))
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
        turn.ttl = ttl
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

    def _expected_wait(self, name: str, start: TurnStart) -> float | None:
        """Seconds until the agent's next turn, as this world's pace says: its seconds a
        tick (the time since the agent's last turn over the ticks between) times the
        ticks to come, one, or the night's if it falls asleep now. None: no pace yet."""
        now = self.clock()
        last = self._began.get(name)
        self._began[name] = (now, start.tick)
        if last is not None and start.tick > last[1]:
            self._pace[name] = (now - last[0]) / (start.tick - last[1])
        pace = self._pace.get(name)
        return None if pace is None else pace * max(1, start.night_left)

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


