"""The fault matrix: whatever the API or the model does to one agent's turn, the tick
completes for everyone, and that agent's trace says what happened.

The real engine, SQLite, anthropic SDK (with its own retries on) and trace files;
only the Messages API is scripted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from adapters.claude_calls import CallPolicy
from adapters.claude_mind import ClaudeMind, ClaudeProfile
from storage import Storage
from storage.traces import TraceWriter
from tests.fake_anthropic import ScriptedApi, error, reply, text, tool_use


def _agent_of(body: dict[str, Any]) -> str:
    return body["system"][0]["text"].split(".", 1)[0].removeprefix("You are ")


def _fine(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["content"][-1]["type"] == "text":
        return reply(tool_use("walk", direction="north"))
    return reply(text("Done."))


def _misbehaving(call: dict[str, Any]) -> Any:
    """A model that makes one bad call on seeing the world, then rests."""
    def answer(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["content"][-1]["type"] == "text":
            return reply(call)
        return reply(text("Oh."))
    return answer


def _cut_short(body: dict[str, Any]) -> Any:
    return reply(text("I will"), tool_use("walk", direction="nor"), stop="max_tokens")


FAULTS = {
    "rate limited (429)": (lambda body: error(429, "rate_limit_error", "Rate limited",
                                               **{"retry-after": "0"}),
                           "request_failed", "the API answered 429"),
    "overloaded (529)": (lambda body: error(529, "overloaded_error", "Overloaded"),
                         "request_failed", "the API answered 529"),
    "server error (500)": (lambda body: error(500, "api_error", "Internal error"),
                           "request_failed", "the API answered 500"),
    "timeout": (lambda body: httpx2.ReadTimeout("slow"), "request_failed", "timed out"),
    "connection lost": (lambda body: httpx2.ConnectError("refused"), "request_failed",
                        "could not reach the API"),
    "unknown tool": (_misbehaving(tool_use("fly_to_the_moon")), "tool_result",
                     "fly_to_the_moon"),
    "invalid input": (_misbehaving(tool_use("walk", direction="sideways")), "tool_result",
                      "sideways"),
    "cut off mid call": (_cut_short, "turn_end", "max_tokens"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_fault_in_one_turn_leaves_the_tick_to_everyone_else(
    fault: str, make_engine, small_world: Path, tmp_path: Path
) -> None:
    async with Storage(small_world) as storage:
        agents = await storage.agents.get_all_agents()
    profiles = {a.name: ClaudeProfile("claude-test", a.personality) for a in agents}
    unlucky = sorted(profiles)[0]
    answer, kind, words = FAULTS[fault]

    def model(body: dict[str, Any]) -> Any:
        return answer(body) if _agent_of(body) == unlucky else _fine(body)

    api = ScriptedApi(otherwise=model)
    traces = TraceWriter(tmp_path / "traces")
    # Hearth's own retries as they are, but waiting a hundredth of a second, not 0.5 s
    # doubling: what is tested is where a fault ends, not how long it is waited out.
    mind = ClaudeMind(api.client(max_retries=1), profiles, trace=traces.write_now,
                      policy=CallPolicy(backoff=0.01))
    async with make_engine(mind) as engine:
        ctx = await engine.tick_once()

    assert ctx.completed and set(ctx.turn_results) == set(profiles)
    for name, result in ctx.turn_results.items():
        if name != unlucky:
            assert result.ended != "error" and [a.tool for a in result.actions] == ["walk"]
    records = list(traces.read(unlucky))  # what waits is written first
    assert records[0]["type"] == "turn_start" and records[-1]["type"] == "turn_end"
    telling = [r for r in records if r["type"] == kind]
    assert telling, [r["type"] for r in records]
    assert any(words in json.dumps(r) for r in telling), telling
    if kind == "request_failed":
        assert ctx.turn_results[unlucky].ended == "error"
        assert words in (ctx.turn_results[unlucky].error or "")
