"""What each of an agent's requests is planned to cost against its model's limits.

    plan = RequestPlan()
    tokens = plan.input_of("Ember", fixed_chars, history)      # uncached input, planned
    options = plan.sized(capacity, "claude-sonnet-5-5", options) # max_tokens that fits
    room = plan.history_room(capacity, fixed_chars)              # compact above this

A `Capacity` admits a request when each bucket holds its cost, so the cost must be
known before it is sent (adapters/request_sizing.py says why each part matters):

- Uncached input. What the API caches is the prompt up to the last breakpoint, kept
  five minutes; an agent's next request writes only what was added since its last
  one (the reply and the tools' results, the next perception). So the plan is the new
  part's size, or the whole prompt when nothing of it can be in the cache (the
  agent's first request of this run, a pause past the cache's lifetime, a history
  that compaction rewrote).
- Output: `max_tokens` as the model's output limit allows, re-sized before every
  attempt, since a first answer (a 429 included) may tell other limits than assumed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adapters.capacity import Capacity
from adapters.claude_mind.compaction import history_chars
from adapters.request_sizing import history_room, output_room, tokens_of

CACHE_SECONDS = 270.0
"""How long after a request its prompt is taken to be still cached: the API keeps a
5-minute entry alive from its last use; half a minute is kept in hand."""


class RequestPlan:
    def __init__(self) -> None:
        self._sent: dict[str, tuple[int, int, float]] = {}
        """Agent -> (identity of its history's first message, messages then, when)."""
        self._scale: dict[str, float] = {}
        """Model -> how many times the usual room its replies need (`cut`)."""

    def cut(self, model: str) -> None:
        """A reply of `model` was cut off by `max_tokens`: its replies get twice the room
        from now on (up to the configured `max_tokens`, and eight times the usual)."""
        self._scale[model] = min(8.0, self._scale.get(model, 1.0) * 2)

    def scale(self, model: str) -> float:
        return self._scale.get(model, 1.0)

    def input_of(self, agent: str, fixed_chars: int, history: Sequence[Mapping[str, Any]],
                 now: float) -> float:
        """The uncached input tokens the agent's next request is planned to send (see the
        module's docstring); `fixed_chars`: its tools and system prompt as sent."""
        before = self._sent.get(agent)
        head = id(history[0]) if history else 0
        self._sent[agent] = (head, len(history), now)
        if before is not None and before[0] == head and before[1] <= len(history) \
                and now - before[2] < CACHE_SECONDS:
            return tokens_of(history_chars(history[before[1]:]))
        return tokens_of(fixed_chars + history_chars(history))

    def forget(self, agent: str) -> None:
        """The agent's cache is no longer to be counted on (its history was rewritten)."""
        self._sent.pop(agent, None)

    @staticmethod
    def sized(capacity: Capacity | None, model: str, options: Mapping[str, Any],
              scale: float = 1.0) -> dict[str, Any]:
        """`options` with `max_tokens` as the model's output limit, as known now, allows
        (raises request_sizing.LimitTooLow when it allows no reply at all)."""
        out = dict(options)
        if capacity is None:
            return out
        effort = (out.get("output_config") or {}).get("effort")
        out["max_tokens"] = output_room(model, effort, int(out["max_tokens"]),
                                        capacity.limit("output-tokens"), scale)
        return out

    @staticmethod
    def history_room(capacity: Capacity | None, fixed_chars: int) -> int | None:
        """The most history a request may carry and still fit the input bucket with a
        cold cache (None: no input limit said). Folding a history cannot be undone, so
        only a limit the endpoint said counts, never the assumed lowest one: a key that
        has less refuses the request, and that refusal folds it (`ClaudeTurn._ask`)."""
        if capacity is None or capacity.assumed:
            return None
        return history_room(capacity.limit("input-tokens"), fixed_chars)
