"""OfflineMind: the Mind that speaks for every agent when there is no API key.

    mind = OfflineMind(seed=world_seed, personalities={"Ember": "You are curious..."})
    turn = mind.begin(TurnStart(agent, tick, perception, tools, max_actions))
    calls = await turn.next_calls(())
    ...
    state = mind.get_state(agent)        # stored with the committed turn
    mind.set_state(agent, state)         # after a restart: continues exactly from there

It acts only through the tool calls a language model would make, and reads
only the Perception it is handed and the outcomes of its own calls; it never
touches a world service. Each turn draws from a random source derived from
(seed, agent, tick) alone, and everything remembered between turns is the
per-agent Memory, so a turn replayed from the same committed state and the
same mind state makes exactly the same calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from adapters.offline_mind.memory import Memory
from adapters.offline_mind.persona import Costs, Persona
from adapters.offline_mind.state_text import StateText
from adapters.offline_mind.turn import OfflineTurn
from adapters.offline_mind.view import View
from core.types import AgentName
from services.mind import MindDefaults, ToolSpec, TurnStart

_BLANK = Memory()


class _Agent:
    """What the mind keeps per agent, in one place: a turn finds all of it with one look-up.

    `memory` is what the agent remembers (its turn's `commit` sets it); `text` its canonical
    JSON, kept between turns (state_text.py); `state` the `get_state` values, built once per
    memory value; `view` the last View of its cells (see `view_of`).
    """

    __slots__ = ("persona", "memory", "commit", "text", "state", "view")

    def __init__(self, persona: Persona, memory: Memory) -> None:
        self.persona = persona
        self.memory = memory
        # A C-level setter, so committing a memory costs no Python frame (and makes no cycle:
        # the partial holds the record, the record does not hold the turn).
        self.commit: Callable[[Memory], None] = partial(setattr, self, "memory")
        self.text = StateText()
        self.state: tuple[Memory, dict[str, Any]] | None = None
        self.view: View | None = None


class OfflineMind(MindDefaults):
    """Implements services.mind.Mind for any number of agents."""

    kind = "offline"
    reads_text = False
    """It reads the Perception's structured fields only, so the engine need not write the
    prose ones (grid view, narrative) for it."""
    answers_at_once = True
    """Its turns never wait on anything outside the process."""

    def __init__(self, seed: int, personalities: Mapping[str, str], *,
                 costs: Costs | None = None) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"the offline mind's seed must be an integer, not {seed!r}")
        self.seed = seed
        self._personalities = {str(k): str(v) for k, v in personalities.items()}
        self._costs = costs or Costs()
        self._personas: dict[str, Persona] = {}
        self._agents: dict[str, _Agent] = {}
        self._tools: Sequence[ToolSpec] | None = None
        self._allowed: frozenset[str] | None = None

    def persona(self, agent: str) -> Persona:
        """The fixed side of an agent (traits and what follows from them), made once."""
        found = self._personas.get(agent)
        if found is None:
            found = Persona.of(agent, self._personalities.get(agent, ""), self.seed, self._costs)
            self._personas[agent] = found
        return found

    def _agent(self, name: str) -> _Agent:
        found = self._agents.get(name)
        if found is None:
            found = self._agents[name] = _Agent(self.persona(name), _BLANK)
        return found

    def begin(self, start: TurnStart) -> OfflineTurn:
        """A turn; what it needs of the mind per agent (persona, memory, where it commits
        its memory) is one record made on the agent's first turn and kept."""
        found = self._agents.get(start.agent)
        if found is None:
            found = self._agent(str(start.agent))
        tools = start.tools
        allowed = self._allowed if tools is self._tools else self._allowed_for(tools)
        return OfflineTurn(found.persona, start, found.memory, found.commit, allowed, found)

    def memory(self, agent: AgentName | str) -> Memory:
        """What the mind remembers about an agent, as a value (for tests and tracing)."""
        found = self._agents.get(str(agent))
        return _BLANK if found is None else found.memory

    def get_state(self, agent: AgentName | str) -> dict[str, Any]:
        """The agent's memory as JSON values: a fresh top-level dict each call.

        Built once per memory value (turns that change nothing cost nothing here), from
        the previous one (fields that did not change are not converted again); the nested
        lists are shared between calls, so treat them as read-only.
        """
        found = self._agents.get(str(agent))
        if found is None:
            return _BLANK.to_state()
        memory, cached = found.memory, found.state
        if cached is None or cached[0] is not memory:
            cached = found.state = (memory, memory.to_state(cached))
        return dict(cached[1])

    def state_json(self, agent: AgentName | str) -> str:
        """`get_state` as canonical JSON (services/mind.py), kept per agent as a fragment a
        field (state_text.py): a turn that changed one field re-encodes that one; a turn
        that changed nothing hands back the same text."""
        found = self._agents.get(agent)
        if found is None:
            found = self._agent(str(agent))
        text = found.text
        if found.memory is text.memory:
            return text.text
        return text.of(found.memory)

    def set_state(self, agent: AgentName | str, state: Mapping[str, Any]) -> None:
        self._agent(str(agent)).memory = Memory.from_state(state)

    def _allowed_for(self, tools: Sequence[ToolSpec]) -> frozenset[str] | None:
        """Tool names offered (None: no list given, so anything). The engine hands the same
        tuple every turn, so the set is built once."""
        if tools is not self._tools:
            self._tools = tools
            self._allowed = frozenset(t.name for t in tools) if tools else None
        return self._allowed
