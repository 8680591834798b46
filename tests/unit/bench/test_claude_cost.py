"""bench claude's cost figures: a reduced run (two ticks, one model) through the real
engine, claude_parts and the strict Messages API stand-in."""

from __future__ import annotations

import re

import pytest

from bench import claude_cost


@pytest.fixture(scope="module")
def measured() -> claude_cost.Measured:
    import asyncio

    return asyncio.run(claude_cost.measure("claude-haiku-5-5", 2, agents=2))


def test_an_agent_day_costs_something_on_mind_and_narrator(
    measured: claude_cost.Measured,
) -> None:
    (day,) = measured.days
    assert day.turns == 4  # two agents, a turn each tick
    assert day.mind > 0 and day.narrator > 0
    assert day.per_agent == pytest.approx(day.mind + day.narrator)


def test_the_shares_are_fractions(measured: claude_cost.Measured) -> None:
    assert measured.replies > 0
    assert 0 <= measured.cut / measured.replies <= 1
    assert 0 <= measured.mind_cache <= 1 and 0 <= measured.narrator_cache <= 1
    assert 0 < measured.longest <= measured.max_tokens
    # Haiku 5.5 under the shipped `thinking: light` does not think, nor its narrator.
    assert measured.thinking_share == 0 and measured.mean_thinking == 0


def test_the_figures_name_dollars_and_the_45_reference(measured: claude_cost.Measured) -> None:
    figures = claude_cost.figures([measured], 2)
    cost = figures[0]
    dollars = float(re.match(r"\$(\d+\.\d+)", cost.value).group(1))  # type: ignore[union-attr]
    assert dollars > 0
    assert "Haiku 4.5" in cost.target and "$0.19-$0.23" in cost.target
    share = next(f for f in figures if "max_tokens" in f.name)
    assert 0 <= float(share.value.split("%")[0]) / 100 <= 1


def test_a_refused_request_fails_the_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from tests.standin import api as standin

    def refuse(self: standin.StrictMessagesApi, body: dict, account: str,
               headers: dict) -> dict:
        raise standin.bad("refused for the test")

    monkeypatch.setattr(standin.StrictMessagesApi, "_messages", refuse)
    with pytest.raises(RuntimeError, match="refused"):
        asyncio.run(claude_cost.measure("claude-haiku-5-5", 1, agents=1))
