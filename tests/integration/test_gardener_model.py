"""The Gardener's model decider: the real `anthropic` SDK with only the Messages API
scripted (httpx2.MockTransport, tests/fake_anthropic.py), and, through `run_cycle`,
the Gardener's real store on a real world file made by `create_world`.

What is checked: what the SDK sends (model, max_tokens, the values and limits in the
system prompt, the cycle in the user message), what a valid answer becomes, what a
refused answer or a failing API does to a cycle, and that spend stops at the budget.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from adapters.claude_calls import CallPolicy
from adapters.gardener_model import ClaudeGardener
from config import HearthConfig, load_config
from core.gardener import (
    AgentHealth,
    Caps,
    HealthFigures,
    Level,
    Regrowth,
    RevealLandmark,
    Thresholds,
    WeatherChange,
    WorldHappening,
    triage,
)
from core.spend import Price
from core.terrain import Weather
from core.types import Position
from services.gardener.cycle import DeciderUnavailable, run_cycle
from services.gardener.decision import InvalidDecision
from services.world_setup import create_world
from storage import Storage
from storage.gardener_db import GardenerStore
from storage.gardener_source import SqliteHealthSource
from tests.fake_anthropic import ScriptedApi, error, reply, text

MODEL = "claude-gardener-test"
SIZE = (32, 24)
PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)
CAPS = Caps(per_cycle=(0, 1, 2, 3), event_radius=7, event_text_chars=99, regrowth_radius=3,
            reveal_radius=9)
LANDMARKS = (("Old Tree", Position(4, 5)), ("Far Spring", Position(28, 20)))


# ---------------------------------------------------------------- helpers


def _agent(name: str, x: int, y: int, *, alone: int = 0, near: int = 50) -> AgentHealth:
    return AgentHealth(name, Position(x, y), alone, 10, 0, near, 0)


def _stranded() -> HealthFigures:
    """Ash alone for 130 ticks (WARNING), far from Sage and Wren, who are fine."""
    return HealthFigures(tick=300, window=48,
                         agents=(_agent("Ash", 2, 2, alone=130), _agent("Sage", 25, 18),
                                 _agent("Wren", 26, 18)),
                         ticks_since_conversation=0, changes=48)


def _healthy() -> HealthFigures:
    return HealthFigures(tick=300, window=48,
                         agents=(_agent("Sage", 25, 18), _agent("Wren", 26, 18)),
                         ticks_since_conversation=0, changes=48)


def _answer(rationale: str, *interventions: dict[str, Any]) -> str:
    return json.dumps({"rationale": rationale, "interventions": list(interventions)})


def _gardener(api: ScriptedApi, *, retries: int = 0, budget: float | None = None,
              max_tokens: int = 321) -> ClaudeGardener:
    return ClaudeGardener(api.client(), MODEL, PRICE, CAPS, SIZE,
                          max_tokens=max_tokens, budget=budget,
                          policy=CallPolicy(retries, timeout=5.0, backoff=0.001))


async def _decide(gardener: ClaudeGardener, figures: HealthFigures | None = None,
                  memory: list[Any] | None = None):  # type: ignore[no-untyped-def]
    figures = figures or _stranded()
    return await gardener.decide(triage(figures, Thresholds()), figures, LANDMARKS,
                                 memory or [])


REVEAL = {"type": "reveal_landmark", "landmark": "Far Spring", "x": 2, "y": 2, "radius": 6}
REGROW = {"type": "regrowth", "x": 2, "y": 2, "radius": 3}
EVENT = {"type": "event", "x": 25, "y": 18, "radius": 5, "text": "A fox trots by."}


# ---------------------------------------------------------------- the decider alone


@pytest.mark.parametrize("wrap", [
    lambda body: body,
    lambda body: f"Here is my decision:\n```json\n{body}\n```\nThat is all.",
], ids=["plain", "fenced"])
async def test_a_valid_answer_becomes_a_decision_from_the_request_it_should(wrap) -> None:
    body = _answer("Ash is stranded; show them the spring near the others.", REVEAL,
                   {"type": "none"}, {"type": "weather", "weather": "clear"})
    api = ScriptedApi([reply(text(wrap(body)))])

    decision = await _decide(_gardener(api))

    assert decision.interventions == (
        RevealLandmark("Far Spring", Position(2, 2), 6), WeatherChange(Weather.CLEAR))
    assert decision.rationale == "Ash is stranded; show them the spring near the others."
    [sent] = api.requests
    assert sent["model"] == MODEL and sent["max_tokens"] == 321
    system = sent["system"]
    assert isinstance(system, str)
    for kind in ('"none"', '"weather"', '"event"', '"regrowth"', '"reveal_landmark"'):
        assert f'"type": {kind}' in system
    # the limits are the caps given, not the shipped defaults
    assert '"radius": int <= 7' in system and "at most 99 characters" in system
    assert "int <= 3}" in system and "int <= 9}" in system
    assert "At most 0 at HEALTHY, 1 at WATCH, 2 at WARNING, 3 at CRITICAL" in system
    assert "No intervention may name an agent" in system
    [message] = sent["messages"]
    assert message["role"] == "user"
    cycle = json.loads(message["content"])
    assert cycle["level"] == "WARNING" and cycle["tick"] == 300
    assert cycle["reasons"] == ["Ash has seen no one for 130 ticks"]
    assert cycle["landmarks"] == [{"name": "Old Tree", "x": 4, "y": 5},
                                  {"name": "Far Spring", "x": 28, "y": 20}]
    assert [a["name"] for a in cycle["agents_named_by_reasons"]] == ["Ash"]
    assert cycle["agents_named_by_reasons"][0]["ticks_alone"] == 130
    assert cycle["agents_count"] == 3 and cycle["last_cycles"] == []


async def test_text_split_over_blocks_is_read_as_one_answer() -> None:
    body = _answer("The land is bare near Ash.", REGROW)
    api = ScriptedApi([reply(text(body[:20]), text(body[20:]))])

    decision = await _decide(_gardener(api))

    assert decision.interventions == (Regrowth(Position(2, 2), 3),)


async def test_spend_is_counted_at_the_price_and_a_spent_budget_asks_no_more() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200, "cache_write": 100,
             "cache_read": 500}
    one = (1000 * 3.0 + 200 * 15.0 + 100 * 3.75 + 500 * 0.3) / 1_000_000  # $0.006525
    api = ScriptedApi(otherwise=lambda body: reply(text(_answer("Let it be.")), **usage))
    gardener = _gardener(api, budget=0.01)

    await _decide(gardener)
    assert gardener.spent == pytest.approx(one)
    await _decide(gardener)  # $0.0065 < $0.01: still asked
    assert gardener.spent == pytest.approx(2 * one)
    assert len(api.requests) == 2

    with pytest.raises(DeciderUnavailable) as caught:
        await _decide(gardener)
    assert "budget" in str(caught.value) and "$0.01" in str(caught.value)
    assert len(api.requests) == 2  # no HTTP request once the budget is spent
    assert gardener.spent == pytest.approx(2 * one)


async def test_a_budget_of_nothing_never_asks_and_no_budget_always_asks() -> None:
    api = ScriptedApi(otherwise=lambda body: reply(text(_answer("Let it be."))))
    with pytest.raises(DeciderUnavailable):
        await _decide(_gardener(api, budget=0.0))
    assert api.requests == []

    unlimited = _gardener(api, budget=None)
    for _ in range(3):
        await _decide(unlimited)
    assert len(api.requests) == 3 and unlimited.spent > 0


@pytest.mark.parametrize(("answer", "says"), [
    ("I think Ash should be shown the way.", "not a JSON object"),
    (_answer("Move Ash.", {"type": "teleport", "x": 1, "y": 1}), "unknown intervention"),
    (_answer("Grow near Ash.", {**REGROW, "agent": "Ash"}), "not allowed: agent"),
    (json.dumps({"rationale": "Help Ash.", "interventions": [], "agent": "Ash"}), "agent"),
    (_answer("Far away.", {**REGROW, "x": 40}), "outside"),
    (_answer("Too big.", {**REGROW, "radius": 2.5}), "whole number"),
], ids=["not-json", "unknown-kind", "targets-agent", "names-agent", "off-world", "float"])
async def test_an_answer_that_is_not_a_decision_is_refused(answer: str, says: str) -> None:
    api = ScriptedApi([reply(text(answer), input_tokens=1000, output_tokens=0)])
    gardener = _gardener(api)

    with pytest.raises(InvalidDecision) as caught:
        await _decide(gardener)

    assert says in str(caught.value)
    assert len(api.requests) == 1
    # the tokens were used all the same, so they count against the budget
    assert gardener.spent == pytest.approx(1000 * 3.0 / 1_000_000)


FAILURES = {
    "overloaded 529, one retry": (
        lambda: error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"}),
        1, "529 overloaded_error: Overloaded (after 2 attempts)"),
    "server error 500": (lambda: error(500, "api_error", "Internal error"), 0,
                         "500 api_error: Internal error (after 1 attempts)"),
    "rate limited 429, one retry": (
        lambda: error(429, "rate_limit_error", "Slow down", **{"retry-after-ms": "1"}),
        1, "429 rate_limit_error: Slow down (after 2 attempts)"),
    "bad key 401": (lambda: error(401, "authentication_error", "invalid x-api-key"), 0,
                    "401 authentication_error: invalid x-api-key"),
    "timeout": (lambda: httpx2.ReadTimeout("slow"), 0, "the request timed out"),
    "connection refused": (lambda: httpx2.ConnectError("refused"), 0, "could not reach the API"),
}


@pytest.mark.parametrize("failure", list(FAILURES))
async def test_a_failing_api_makes_the_model_unavailable(failure: str) -> None:
    make, retries, kind = FAILURES[failure]
    api = ScriptedApi(otherwise=lambda body: make())
    gardener = _gardener(api, retries=retries)

    with pytest.raises(DeciderUnavailable) as caught:
        await _decide(gardener)

    assert kind in str(caught.value) and "the API failed: " in str(caught.value)
    assert len(api.requests) == 1 + retries  # its policy's retries (the SDK's are off)
    assert gardener.spent == 0.0


async def test_a_retry_that_succeeds_gives_the_decision() -> None:
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"}),
                       reply(text(_answer("Grow it back.", REGROW)))])

    decision = await _decide(_gardener(api, retries=1))

    assert decision.interventions == (Regrowth(Position(2, 2), 3),)
    assert len(api.requests) == 2


# ---------------------------------------------------------------- through a cycle


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


@pytest.fixture
async def world_db(tmp_path: Path, config: HearthConfig) -> Path:
    data = tmp_path / "data"
    async with Storage(data) as storage:
        await create_world(storage, config, seed=11, size=SIZE, agent_count=3)
    return data / "world.db"


@pytest.fixture
def store(world_db: Path) -> Iterator[GardenerStore]:
    with GardenerStore(world_db) as opened:
        yield opened


@pytest.fixture
def landmarks(world_db: Path) -> tuple[tuple[str, Position], ...]:
    conn = sqlite3.connect(f"{world_db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        found = SqliteHealthSource(conn).landmarks()
    finally:
        conn.close()
    assert found, "the test world needs landmarks"
    return found


def _rows(db: Path) -> tuple[list[tuple], list[tuple]]:
    """(cycles, requests) as they reached the file, through a connection of our own."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        cycles = conn.execute("SELECT id, tick, level, decided_by, rationale, note, decision "
                              "FROM gardener_cycles ORDER BY id").fetchall()
        requests = conn.execute("SELECT cycle, kind, params, status FROM gardener_requests "
                                "ORDER BY id").fetchall()
    finally:
        conn.close()
    return cycles, requests


async def _cycle(store: GardenerStore, figures: HealthFigures, landmarks, decider):  # type: ignore[no-untyped-def]
    return await run_cycle(figures, landmarks, store, thresholds=Thresholds(), caps=CAPS,
                           decider=decider, memory_cycles=3)


async def test_an_invalid_answer_records_why_and_queues_nothing(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    api = ScriptedApi([reply(text(_answer("Move Ash.", {"type": "teleport", "agent": "Ash"})))])

    report = await _cycle(store, _stranded(), landmarks, _gardener(api))

    assert report.triage.level == Level.WARNING
    assert report.decided_by == MODEL and report.decision.interventions == ()
    assert report.note is not None
    assert "refused" in report.note and "unknown intervention" in report.note
    cycles, requests = _rows(world_db)
    assert [(c[0], c[1], c[2], c[3], c[5]) for c in cycles] == [
        (report.cycle, 300, "WARNING", MODEL, report.note)]
    assert json.loads(cycles[0][6])["interventions"] == []
    assert requests == []


async def test_an_unavailable_model_leaves_the_cycle_to_the_rules(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    api = ScriptedApi(otherwise=lambda body: error(529, "overloaded_error", "Overloaded"))

    report = await _cycle(store, _stranded(), landmarks, _gardener(api))

    assert len(api.requests) == 1
    assert report.decided_by == "rules"
    assert report.note is not None and "the rules decided" in report.note
    assert "529 overloaded_error" in report.note
    [reveal] = report.decision.interventions  # the rules' answer to a stranded agent
    assert isinstance(reveal, RevealLandmark) and reveal.position == Position(2, 2)
    assert reveal.landmark in dict(landmarks)
    cycles, requests = _rows(world_db)
    assert [(c[3], c[5]) for c in cycles] == [("rules", report.note)]
    assert [(r[0], r[1], json.loads(r[2]), r[3]) for r in requests] == [
        (report.cycle, "reveal_landmark", reveal.params(), "pending")]


async def test_a_spent_budget_leaves_the_cycle_to_the_rules_without_asking(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    api = ScriptedApi()

    report = await _cycle(store, _stranded(), landmarks, _gardener(api, budget=0.0))

    assert api.requests == []
    assert report.decided_by == "rules" and report.note is not None
    assert "budget" in report.note and "the rules decided" in report.note
    assert len(_rows(world_db)[1]) == len(report.decision.interventions) == 1


async def test_a_valid_answer_is_queued_up_to_the_levels_count(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    name = landmarks[0][0]
    reveal = {**REVEAL, "landmark": name}
    api = ScriptedApi([reply(text(_answer("Ash is stranded.", reveal, REGROW, EVENT)))])

    report = await _cycle(store, _stranded(), landmarks, _gardener(api))

    allowed = CAPS.per_cycle[int(Level.WARNING)]
    assert allowed == 2
    assert report.decided_by == MODEL
    assert report.decision.interventions == (RevealLandmark(name, Position(2, 2), 6),
                                             Regrowth(Position(2, 2), 3))
    assert report.note is not None and "only the first 2 kept at WARNING" in report.note
    cycles, requests = _rows(world_db)
    [(cycle, tick, level, decided_by, rationale, note, decision)] = cycles
    assert (cycle, tick, level, decided_by, rationale, note) == (
        report.cycle, 300, "WARNING", MODEL, "Ash is stranded.", report.note)
    assert [i["type"] for i in json.loads(decision)["interventions"]] == [
        "reveal_landmark", "regrowth"]
    assert [(r[0], r[1], json.loads(r[2]), r[3]) for r in requests] == [
        (report.cycle, "reveal_landmark", {k: v for k, v in reveal.items() if k != "type"},
         "pending"),
        (report.cycle, "regrowth", {"x": 2, "y": 2, "radius": 3}, "pending")]


async def test_within_the_count_nothing_is_dropped_and_the_last_cycle_is_remembered(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    api = ScriptedApi([reply(text(_answer("A fox, for company.", EVENT))),
                       reply(text(_answer("Still alone; grow the land.", REGROW)))])
    gardener = _gardener(api)

    first = await _cycle(store, _stranded(), landmarks, gardener)
    second = await _cycle(store, _stranded(), landmarks, gardener)

    assert first.note is None and second.note is None
    assert first.decision.interventions == (
        WorldHappening(Position(25, 18), 5, "A fox trots by."),)
    remembered = json.loads(api.requests[1]["messages"][0]["content"])["last_cycles"]
    assert [(c["tick"], c["level"], c["rationale"]) for c in remembered] == [
        (300, "WARNING", "A fox, for company.")]
    assert [r[:1] for r in remembered[0]["requests"]] == [["event"]]
    _, requests = _rows(world_db)
    assert [(r[0], r[1]) for r in requests] == [(first.cycle, "event"),
                                                (second.cycle, "regrowth")]


async def test_a_healthy_world_never_asks_the_model(
    store: GardenerStore, world_db: Path, landmarks
) -> None:
    api = ScriptedApi()

    report = await _cycle(store, _healthy(), landmarks, _gardener(api))

    assert api.requests == []
    assert report.triage.level == Level.HEALTHY
    assert report.decided_by == "rules" and report.note is None
    assert report.decision.interventions == ()
    cycles, requests = _rows(world_db)
    assert [(c[2], c[3]) for c in cycles] == [("HEALTHY", "rules")] and requests == []
