"""Who lives in a new world: configured agents first, then generated ones."""

from __future__ import annotations

import dataclasses

import pytest

from config import AgentConfig, load_config
from core.types import agent_name
from services.roster import LEANINGS, NAMES, TEMPERAMENTS, Resident, roster


@pytest.fixture(scope="module")
def configured() -> list[AgentConfig]:
    return list(load_config(None).agents.agents)


def _agent(name: str, model_id: str = "model-a") -> AgentConfig:
    return AgentConfig(name=name, model_id=model_id, personality=f"{name} is kind.")


def _valid(name: str) -> bool:
    try:
        agent_name(name)
    except ValueError:
        return False
    return True


def test_count_none_gives_the_configured_agents_in_order(configured: list[AgentConfig]) -> None:
    residents = roster(configured, None, seed=1)
    assert residents == [
        Resident(a.name, a.model_id, a.personality, generated=False) for a in configured
    ]
    assert [r.name for r in residents] == ["Ember", "Sage", "River"]


def test_count_equal_to_the_configured_gives_no_generated(configured: list[AgentConfig]) -> None:
    residents = roster(configured, len(configured), seed=1)
    assert [r.name for r in residents] == [a.name for a in configured]
    assert not any(r.generated for r in residents)


@pytest.mark.parametrize("count", [1, 2])
def test_smaller_count_gives_the_first_n(configured: list[AgentConfig], count: int) -> None:
    residents = roster(configured, count, seed=5)
    assert [r.name for r in residents] == [a.name for a in configured[:count]]
    assert [r.model_id for r in residents] == [a.model_id for a in configured[:count]]
    assert not any(r.generated for r in residents)


def test_larger_count_adds_generated_residents(configured: list[AgentConfig]) -> None:
    residents = roster(configured, 10, seed=3)
    assert len(residents) == 10
    head, extra = residents[: len(configured)], residents[len(configured):]
    assert [r.name for r in head] == [a.name for a in configured]
    assert not any(r.generated for r in head)
    assert len(extra) == 7
    configured_names = {a.name.casefold() for a in configured}
    for r in extra:
        assert r.generated
        assert agent_name(r.name) == r.name
        assert r.name.casefold() not in configured_names
        assert r.model_id == configured[0].model_id
        assert r.personality.strip()
    names = [r.name.casefold() for r in residents]
    assert len(set(names)) == len(names)


def test_generated_personality_is_a_temperament_and_a_leaning(
    configured: list[AgentConfig],
) -> None:
    for r in roster(configured, 12, seed=9)[len(configured):]:
        assert any(r.personality.startswith(t) for t in TEMPERAMENTS)
        assert any(r.personality.endswith(lean) for lean in LEANINGS)


def test_generated_model_is_the_first_configured_one() -> None:
    agents = [_agent("Ash", "model-first"), _agent("Bo", "model-second")]
    extra = roster(agents, 5, seed=0)[2:]
    assert {r.model_id for r in extra} == {"model-first"}


def test_generated_names_come_from_the_name_list(configured: list[AgentConfig]) -> None:
    extra = roster(configured, 20, seed=4)[len(configured):]
    assert all(r.name in NAMES for r in extra)


def test_same_seed_gives_the_same_roster(configured: list[AgentConfig]) -> None:
    assert roster(configured, 15, seed=42) == roster(configured, 15, seed=42)


def test_other_seeds_give_another_order(configured: list[AgentConfig]) -> None:
    base = [r.name for r in roster(configured, 15, seed=0)]
    others = [[r.name for r in roster(configured, 15, seed=s)] for s in range(1, 6)]
    assert any(names != base for names in others)


def test_seed_does_not_change_the_configured_part(configured: list[AgentConfig]) -> None:
    for seed in range(5):
        head = roster(configured, 8, seed=seed)[: len(configured)]
        assert [r.name for r in head] == [a.name for a in configured]


def test_a_smaller_roster_is_a_prefix_of_a_larger_one(configured: list[AgentConfig]) -> None:
    small = roster(configured, 6, seed=11)
    large = roster(configured, 9, seed=11)
    assert [r.name for r in large[:6]] == [r.name for r in small]


def test_configured_names_are_never_generated_ignoring_case() -> None:
    # Lower-case spellings of names on the list still count as taken.
    agents = [_agent("fern"), _agent("WREN"), _agent("Oak")]
    residents = roster(agents, len(NAMES), seed=2)
    extra = [r.name.casefold() for r in residents[3:]]
    assert "fern" not in extra
    assert "wren" not in extra
    assert "oak" not in extra
    names = [r.name.casefold() for r in residents]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("count", [len(NAMES) + 3, 120, 300])
def test_very_large_count_still_gives_unique_valid_names(
    configured: list[AgentConfig], count: int
) -> None:
    assert count > len(NAMES)
    residents = roster(configured, count, seed=7)
    assert len(residents) == count
    assert all(_valid(r.name) for r in residents)
    names = [r.name.casefold() for r in residents]
    assert len(set(names)) == count
    assert sum(r.generated for r in residents) == count - len(configured)


def test_every_list_name_is_used_before_a_numbered_one(configured: list[AgentConfig]) -> None:
    free = [n for n in NAMES if n.casefold() not in {a.name.casefold() for a in configured}]
    extra = roster(configured, len(configured) + len(free), seed=8)[len(configured):]
    assert sorted(r.name for r in extra) == sorted(free)


@pytest.mark.parametrize("taken", ["Fern2", "fern2", "Alder3", "Wren2"])
def test_numbered_names_do_not_repeat_a_configured_name(taken: str) -> None:
    agents = [_agent(taken)]
    residents = roster(agents, 1 + 3 * len(NAMES), seed=1)
    names = [r.name.casefold() for r in residents]
    assert len(set(names)) == len(names)
    assert all(_valid(r.name) for r in residents)


def test_names_are_found_when_the_config_takes_the_whole_list() -> None:
    agents = [_agent(n) for n in NAMES]
    residents = roster(agents, len(NAMES) + 25, seed=3)
    extra = residents[len(NAMES):]
    assert len(extra) == 25
    assert all(r.generated and _valid(r.name) for r in extra)
    names = [r.name.casefold() for r in residents]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("count", [0, -1, -50])
def test_count_below_one_is_refused(configured: list[AgentConfig], count: int) -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        roster(configured, count, seed=1)


def test_resident_is_frozen() -> None:
    r = Resident("Ash", "m", "p", generated=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "Bo"  # type: ignore[misc]
