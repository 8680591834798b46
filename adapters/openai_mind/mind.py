"""OpenAIMind: a model behind any OpenAI-compatible chat-completions endpoint speaks for an agent.

    client = AsyncOpenAI(base_url="http://localhost:11434/v1", api_key="ollama")
    mind = OpenAIMind(client, {"Ember": OpenAIProfile("qwen3:8b", "You...")})
    engine = await HearthEngine.open(storage, config, mind=mind)

Ollama, vLLM and the llama.cpp server all answer this API. A turn is a short
exchange, as with ClaudeMind: the first request carries what the agent perceives
now (the newest user message, after the system message and the kept history);
each reply's `tool_calls` are run by the engine and every outcome goes back as a
`tool` message (failures open with "Error: ", as this API has no error flag) until
the model stops calling tools.

A call whose arguments are not a JSON object never reaches the engine: the mind
answers it itself, saying so, and the model hears that with the other outcomes
(if no call of a reply was usable, it is asked again at once, a few times at most).

Finish reasons: `tool_calls` goes on; `stop` ends the turn; `length` keeps what was
said, drops calls that may have been cut short and ends the turn; `content_filter`
ends the turn and takes the perception back out of the history; anything else ends
the turn with a logged warning. A request that still fails after the client's own
retries ends the turn with an `OpenAIMindError` naming the cause: actions already
taken stand, the tick goes on for everyone else, and the history stays valid.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import openai
from openai.types.chat import ChatCompletion

from adapters.capacity import Capacities, CapacityClosed
from adapters.claude_mind.prompt import system_prompt, tool_params
from adapters.client_shards import ClientShards
from adapters.model_memory import ModelMemory, write_trace
from adapters.model_turn import ModelTurn, ms_since
from adapters.openai_mind import history as h
from adapters.openai_mind.compaction import compact, history_chars
from core.types import AgentName
from services.mind import (
    MindDefaults,
    MindError,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    TurnStart,
)

log = logging.getLogger("hearth.openai")

Trace = Callable[[str, Mapping[str, Any]], None]
"""Where trace records go: (agent, record). storage.traces.TraceWriter.write_now fits."""

KNOWN_ENDINGS = frozenset({"stop", "length"})
RETRIES_AFTER_UNUSABLE = 2
"""How often a reply whose every call was unusable is answered and asked again."""


class OpenAIMindError(MindError):
    """A request failed for good (after the client's retries); the message says why."""


class Profile(Protocol):
    """What a mind needs to know of an agent (ClaudeProfile fits too)."""

    @property
    def model(self) -> str: ...

    @property
    def personality(self) -> str: ...


@dataclass(frozen=True)
class OpenAIProfile:
    """Who an OpenAI-compatible mind speaks for: the model, and the agent's personality."""

    model: str
    personality: str


class OpenAIMind(MindDefaults):
    """Implements services.mind.Mind with one `AsyncOpenAI` client for any number of agents."""

    kind = "local"
    reads_text = True
    answers_at_once = False

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        profiles: Mapping[str, Profile],
        *,
        max_tokens: int = 1024,
        trace: Trace | None = None,
        compact_above_chars: int = 120_000,
        keep_recent_chars: int = 40_000,
        summary_max_chars: int = 8_000,
        capacities: Capacities | None = None,
        more_clients: Sequence[openai.AsyncOpenAI] = (),
    ) -> None:
        self.client = client
        self.shards = ClientShards((client, *more_clients))
        """The clients agents are spread over (adapters/client_shards.py)."""
        self.capacities = capacities
        """Room at the endpoint per model (adapters/capacity.py): a local server sends no
        rate limits, so the number in flight grows while answers come faster for it."""
        self.stopping: Callable[[], bool] = lambda: False
        """True once the run is stopping: a request still waiting for room is not sent."""
        self.profiles = dict(profiles)
        self.max_tokens = max_tokens
        self.trace = trace
        self.memory = ModelMemory(
            compact=compact, size=history_chars, problem=h.history_problem,
            compact_above_chars=compact_above_chars, keep_recent_chars=keep_recent_chars,
            summary_max_chars=summary_max_chars, trace=trace)
        self._systems: dict[str, h.Message] = {}
        self._tools: tuple[tuple[ToolSpec, ...], list[dict[str, Any]]] | None = None

    # ------------------------------------------------------------------ Mind

    def begin(self, start: TurnStart) -> OpenAITurn:
        name = start.agent
        profile = self.profiles.get(name)
        if profile is None:
            raise OpenAIMindError(f"no model profile for {name} (is it in agents.yaml?)")
        system = self._systems.get(name)
        if system is None:
            system = self._systems[name] = {
                "role": "system", "content": system_prompt(name, profile.personality)}
        folded = self.memory.compact(name)
        turn = OpenAITurn(self, start, profile, self.memory.history(name), system,
                          self._tool_params(start.tools))
        turn.folded = folded
        return turn

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return self.memory.state(agent)

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self.memory.restore(agent, state)

    # ------------------------------------------------------------------ parts

    def _tool_params(self, specs: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
        kept = self._tools
        if kept is None or kept[0] != specs:
            kept = self._tools = (specs, [
                {"type": "function", "function": {"name": p["name"],
                                                  "description": p["description"],
                                                  "parameters": p["input_schema"]}}
                for p in tool_params(specs)])
        return kept[1]

    def _trace(self, agent: str, record: Mapping[str, Any]) -> None:
        write_trace(self.trace, agent, record)


class OpenAITurn(ModelTurn):
    """One agent's turn in progress with a local model (adapters/model_turn.py)."""

    kind = "local"
    history_ops = h  # type: ignore[assignment]

    def __init__(
        self,
        mind: OpenAIMind,
        start: TurnStart,
        profile: Profile,
        history: list[h.Message],
        system: h.Message,
        tools: list[dict[str, Any]],
    ) -> None:
        super().__init__(start, profile.model, history, mind._trace)
        self.mind = mind
        self.profile = profile
        self.system = system
        self.tools = tools
        self.answered: dict[str, tuple[str, str]] = {}
        """Calls the mind answered itself (unusable input), by id: (tool, the text they got)."""

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        if self.stop is not None and self.stop != "tool_calls":
            return ()  # the model already ended the turn
        first = not self.requests
        if first:
            self._open()
        else:
            self._answer(outcomes)
        try:
            calls = self._take(await self._ask(first))
            retries = 0
            while not calls and h.open_calls(self.history) \
                    and retries < RETRIES_AFTER_UNUSABLE:
                # Every call of that reply was answered here: let the model hear why.
                self._answer(())
                retries += 1
                calls = self._take(await self._ask(False))
        except CapacityClosed:  # stopping while a request waited for room: none was sent
            if first:
                self._not_begun()
            self.stop = "stopping"
            return ()
        return calls

    def _answer(self, outcomes: Sequence[ToolOutcome]) -> None:
        self.history.extend(self._results(outcomes))

    # ------------------------------------------------------------------ one request

    async def _ask(self, first: bool) -> Any:
        """One request; gives its first choice, or raises OpenAIMindError."""
        agent, tick = self.start.agent, self.start.tick
        started = time.perf_counter()
        body = {"model": self.profile.model, "max_tokens": self.mind.max_tokens,
                "tools": self.tools, "messages": [self.system, *self.history]}
        client = self.mind.shards.of(agent)
        capacity = None if self.mind.capacities is None else self.mind.capacities.of(
            str(client.base_url), self.profile.model)
        ticket = None if capacity is None else await capacity.admit(
            output_tokens=float(self.mind.max_tokens), stopping=self.mind.stopping)
        try:
            # What `client.chat.completions.create(**body)` sends, without its walk of
            # every message through the SDK's typed-dict transform (plain JSON needs none),
            # which takes ~0.3 s of event-loop time per request at the compaction limit.
            # Retries, auth, timeouts and errors are the client's own either way.
            reply = await client.post(
                "/chat/completions", cast_to=ChatCompletion, body=body,
                options={"security": {"bearer_auth": True}})
            if ticket is not None:
                capacity.answered(ticket)  # type: ignore[union-attr]
        except openai.APIError as exc:
            status = getattr(exc, "status_code", None)
            if ticket is not None and status in (429, 503, 529):
                capacity.refused(ticket, status)  # type: ignore[union-attr]
            self._fail(_describe(exc, client), first, started)
        finally:
            if ticket is not None:  # as adapters/claude_calls.py: whatever else ended the
                # request (an error, a cancel) gives the place back, learning nothing
                capacity.failed(ticket)  # type: ignore[union-attr]  # no-op once settled
        choices = getattr(reply, "choices", None)
        if not isinstance(choices, list) or not choices or getattr(
                choices[0], "message", None) is None:
            self._fail("the API's answer held no reply message", first, started)
        choice = choices[0]
        summary: dict[str, Any] = {"stop": choice.finish_reason,
                                   "usage": _usage(getattr(reply, "usage", None)),
                                   "ms": ms_since(started)}
        self.requests.append(summary)
        self.mind._trace(agent, {"type": "request", "tick": tick, **summary})
        return choice

    def _fail(self, cause: str, first: bool, started: float) -> NoReturn:
        self._request_failed(cause, first, started)
        raise OpenAIMindError(cause) from None

    def _take(self, choice: Any) -> list[ToolCall]:
        """Keep the reply in the history; the calls for the engine (none ends the turn)."""
        message = choice.message
        stop = choice.finish_reason or "stop"
        self.stop = stop
        text = message.content if isinstance(message.content, str) else None
        if stop == "content_filter":
            # Take the filtered perception out, so the next turn starts afresh; results
            # of calls already run stay (they are what happened). Nothing else is kept.
            if len(self.requests) == 1:
                self._take_back()
            return []
        if stop != "tool_calls":
            if stop not in KNOWN_ENDINGS:
                log.warning("%s: unknown finish reason %r ends the turn", self.start.agent, stop)
            elif message.tool_calls and stop == "stop":
                log.warning("%s: calls in a reply that finished with 'stop' are not run",
                            self.start.agent)
            self.history.append(h.assistant(text))  # any calls are dropped, never run
            return []
        stored, calls = self._calls(message.tool_calls or ())
        self.history.append(h.assistant(text, stored))
        return calls

    def _calls(self, raw_calls: Sequence[Any]) -> tuple[list[dict[str, Any]], list[ToolCall]]:
        """The reply's calls as stored (arguments always a JSON object) and the usable ones."""
        stored: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for n, raw in enumerate(raw_calls):
            call_id = getattr(raw, "id", None)
            if not isinstance(call_id, str) or not call_id or call_id in self.answered or any(
                    s["id"] == call_id for s in stored):
                call_id = f"call_{self.start.tick}_{len(self.requests)}_{n}"
            function = getattr(raw, "function", None)
            name = getattr(function, "name", None)
            if not isinstance(name, str):  # a custom (free-text) tool call: none exist here
                name = str(getattr(getattr(raw, "custom", None), "name", None) or "unknown")
                arguments, problem, text = None, f"{name} is not one of your tools", "{}"
            else:
                arguments, problem, text = _parse(name, getattr(function, "arguments", None))
            stored.append({"id": call_id, "type": "function",
                           "function": {"name": name, "arguments": text}})
            trace = {"type": "tool_call", "tick": self.start.tick, "tool": name,
                     "input": arguments}
            if problem is not None:
                trace["unusable"] = problem
            self.mind._trace(self.start.agent, trace)
            if arguments is None:
                self.answered[call_id] = (name, f"{h.ERROR}nothing was done: {problem}. "
                                                "Give each tool's input as one JSON object.")
                continue
            calls.append(ToolCall(call_id, name, arguments))
        return stored, calls

    def _results(self, outcomes: Sequence[ToolOutcome]) -> list[h.Message]:
        by_id = {o.call_id: o for o in outcomes}
        answers = []
        for call_id in h.open_calls(self.history):
            outcome = by_id.get(call_id)
            own = self.answered.get(call_id)
            if own is not None:
                answers.append((call_id, own[1], True))
                self.mind._trace(self.start.agent, {
                    "type": "tool_result", "tick": self.start.tick, "tool": own[0],
                    "ok": False, "text": own[1]})
            elif outcome is None:
                answers.append((call_id, h.NOT_RUN, True))
            else:
                answers.append((call_id, outcome.text, not outcome.success))
                self.mind._trace(self.start.agent, {
                    "type": "tool_result", "tick": self.start.tick, "tool": outcome.name,
                    "ok": outcome.success, "text": outcome.text})
        return h.tool_messages(answers)


def _parse(name: str, raw: Any) -> tuple[dict[str, Any] | None, str | None, str]:
    """A call's arguments: (the object or None, why not, the text to store)."""
    if isinstance(raw, Mapping):  # a server that sent an object instead of its text
        return dict(raw), None, json.dumps(raw, ensure_ascii=False)
    if not isinstance(raw, str):
        return None, f"the call to {name} came without its input", "{}"
    if not raw.strip():  # a call that takes no input, sent with an empty string
        return {}, None, "{}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, (f"the input you gave {name} was not valid JSON "
                      f"({exc.msg} at character {exc.pos})"), "{}"
    if not isinstance(value, dict):
        kind = JSON_KINDS.get(type(value), type(value).__name__)
        return None, f"the input you gave {name} was a JSON {kind}, not an object", "{}"
    return value, None, raw


JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
              type(None): "null"}


def _usage(usage: Any) -> dict[str, int]:
    def count(name: str) -> int:
        value = getattr(usage, name, 0)
        return value if isinstance(value, int) else 0
    return {"prompt_tokens": count("prompt_tokens"),
            "completion_tokens": count("completion_tokens")}


def _describe(exc: openai.APIError, client: Any) -> str:
    """One line on why a request failed, for the trace and the turn's record."""
    where = getattr(client, "base_url", "the endpoint")
    if isinstance(exc, openai.APITimeoutError):
        return f"the request to {where} timed out (after the client's retries)"
    if isinstance(exc, openai.APIConnectionError):
        return f"could not reach the API at {where} (after the client's retries)"
    if isinstance(exc, openai.APIStatusError):
        return f"the API answered {exc.status_code}: {_message_of(exc)}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


def _message_of(exc: openai.APIStatusError) -> str:
    body = exc.body  # the SDK has already taken the "error" member out, if there was one
    if isinstance(body, Mapping) and body.get("message"):
        return " ".join(str(body["message"]).split())
    if isinstance(body, str) and body.strip():
        return " ".join(body.split())
    return " ".join(str(exc.message).split())
