"""Words the Gardener's model writes are held to the place they are told in (issue 29,
item 14: starlings sent "into the trees" on a shore).

A real world file (`create_world`), the Gardener's real read-only source and `observe`
(so each agent's ground, the weather and the hour are read from the file), the model
through the real `anthropic` SDK against the strict Messages stand-in
(tests/messages_standin.py) with a model that writes the happening under test, and
`run_cycle` queueing into the Gardener's real store. What is checked: the request tells
the model the place's facts; a happening naming ground, weather or an hour the place
lacks is replaced by a rule-made one (and the cycle says why); one that fits is kept.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.claude_models import check_models
from adapters.gardener_model import ClaudeGardener
from config import HearthConfig, load_config
from core.gardener import Level, Thresholds, WorldHappening
from core.model_catalog import price_in
from core.types import Position
from services.gardener.cycle import run_cycle
from services.gardener.fitting import GROUND_WORDS, ground_for
from services.gardener.observe import observe, observe_args
from services.gardener.rules import HAPPENINGS
from services.world_setup import create_world
from storage import Storage
from storage.gardener_db import GardenerStore
from storage.gardener_source import SqliteHealthSource
from tests.messages_standin import Plan, Request, StrictMessagesApi

TODAY = datetime.date(2026, 11, 26)
WORD_FOR = {"forest": "trees", "water": "lake", "sand": "dunes", "coast": "shore",
            "grass": "meadow", "hill": "hills", "stone": "rocks"}
"""A word for each terrain kind, as a model might write it."""


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


@pytest.fixture
async def world_db(tmp_path: Path, config: HearthConfig) -> Path:
    data = tmp_path / "data"
    async with Storage(data) as storage:
        await create_world(storage, config, seed=29, size=(64, 48), agent_count=6)
    return data / "world.db"


def _figures(db: Path, config: HearthConfig):  # type: ignore[no-untyped-def]
    """The world's figures as the Gardener reads them, made quiet (no one has spoken
    for long) so the triage asks the model."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        source = SqliteHealthSource(conn)
        figures = observe(source, **observe_args(config))
        landmarks = source.landmarks()
    finally:
        conn.close()
    return dataclasses.replace(figures, ticks_since_conversation=500), landmarks


def _model_writing(words: Callable[[dict], str], asked: list[dict]) -> Callable[[Request], Plan]:
    """A Gardener model that puts one happening where most agents are, in `words(cycle)`."""
    def behaviour(request: Request) -> Plan:
        cycle = json.loads(request.body["messages"][-1]["content"])
        asked.append(cycle)
        spot = cycle["where_most_agents_are"]
        answer = {"rationale": "A quiet world: something to notice.", "interventions": [
            {"type": "event", "x": spot["x"], "y": spot["y"], "radius": 6,
             "text": words(cycle)}]}
        return Plan(0, json.dumps(answer))
    return behaviour


async def _run(db: Path, config: HearthConfig, words: Callable[[dict], str]):  # type: ignore[no-untyped-def]
    figures, landmarks = _figures(db, config)
    asked: list[dict] = []
    api = StrictMessagesApi(behaviour=_model_writing(words, asked))
    client = api.client()
    settings = config.settings.gardener
    lineup = await check_models(client, {settings.model: ["the Gardener"]}, TODAY)
    price = price_in(config.settings.claude.price_table(), settings.model)
    assert price is not None
    caps = settings.caps.to_core()
    gardener = ClaudeGardener(client, settings.model, price, caps, (64, 48),
                              max_tokens=settings.max_tokens, budget=None,
                              options=lineup.options_for(settings.model, settings.effort,
                                                         settings.max_tokens))
    with GardenerStore(db) as store:
        report = await run_cycle(figures, landmarks, store, thresholds=Thresholds(), caps=caps,
                                 decider=gardener, memory_cycles=0)
    assert api.refused == []
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        queued = [json.loads(p) for (p,) in conn.execute(
            "SELECT params FROM gardener_requests WHERE kind = 'event'")]
        note = conn.execute("SELECT note FROM gardener_cycles").fetchone()[0]
    finally:
        conn.close()
    return figures, asked, report, queued, note


def _absent(cycle: dict) -> str:
    ground = set(cycle["where_most_agents_are"]["ground"])
    return next(kind for kind in WORD_FOR if kind not in ground)


async def test_the_model_is_told_the_place_and_a_happening_naming_absent_ground_is_replaced(
    world_db: Path, config: HearthConfig
) -> None:
    figures, asked, report, queued, note = await _run(
        world_db, config,
        lambda cycle: f"A flock of starlings settles into the {WORD_FOR[_absent(cycle)]}.")
    assert report.triage.level >= Level.WARNING
    assert report.decided_by == config.settings.gardener.model
    [cycle] = asked
    # The facts of the place went with the request, as read from the world file.
    assert cycle["weather"] == figures.weather and figures.weather in (
        "clear", "cloudy", "rainy", "foggy")
    assert cycle["time_of_day"] == figures.period == "morning"  # tick 0, from 08:00
    spot = cycle["where_most_agents_are"]
    assert spot["ground"] and set(spot["ground"]) <= set(WORD_FOR)
    for agent in cycle["agents_named_by_reasons"]:
        assert agent["ground"] == list(figures.agent(agent["name"]).ground)
    # What was queued is a rule-made happening at the model's spot, and the cycle says why.
    [event] = queued
    assert (event["x"], event["y"]) == (spot["x"], spot["y"])
    assert event["text"] in {h[:config.settings.gardener.caps.event_text_chars]
                             for h in HAPPENINGS}
    absent = _absent(cycle)
    assert "did not fit its place" in note and WORD_FOR[absent] in note
    assert "a rule-made happening instead" in note
    # The ground the check used is the ground the model was told.
    told = WorldHappening(Position(event["x"], event["y"]), 6, "x")
    assert set(ground_for(figures, told)) <= set(spot["ground"])
    assert absent not in ground_for(figures, told)


async def test_a_happening_that_fits_its_place_is_kept_as_written(
    world_db: Path, config: HearthConfig
) -> None:
    def fitting(cycle: dict) -> str:
        present = cycle["where_most_agents_are"]["ground"][0]
        return f"A hare darts across the {WORD_FOR[present]} and is gone."

    figures, asked, report, queued, note = await _run(world_db, config, fitting)
    [event] = queued
    assert event["text"] == fitting(asked[0])
    assert note is None
    assert report.decision.interventions[0].text == event["text"]


@pytest.mark.parametrize("sky", ["Rain starts to fall on everyone.",
                                 "The stars come out, bright and many.",
                                 "Snow drifts down."], ids=["rain", "stars", "snow"])
async def test_a_happening_naming_weather_or_an_hour_not_there_is_replaced(
    world_db: Path, config: HearthConfig, sky: str
) -> None:
    figures, _, _, queued, note = await _run(world_db, config, lambda cycle: sky)
    if sky.startswith("Rain") and figures.weather == "rainy":
        pytest.skip("it is raining in this world: rain fits")
    [event] = queued
    assert event["text"] != sky and event["text"] in HAPPENINGS
    assert "did not fit its place" in note


def test_every_terrain_kind_has_words_and_the_test_words_are_read() -> None:
    assert {kind for kinds in GROUND_WORDS.values() for kind in kinds} == set(WORD_FOR)
    for kind, word in WORD_FOR.items():
        assert kind in GROUND_WORDS[word]
