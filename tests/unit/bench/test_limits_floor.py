"""bench limits' "least time the limits allow": the replay of served requests against
token buckets (tests/standin/limits.py) and the chains it keeps them in."""

from __future__ import annotations

import pytest

from bench.limits import Asked, chains, least_time
from tests.messages_standin import Served


def asked(n: int, chain: str | None = None, *, cost: int = 0, output: int = 0,
          max_tokens: int = 0, rate_class: str = "sonnet-5-5") -> list[Asked]:
    return [Asked(rate_class, chain, cost, output, max_tokens) for _ in range(n)]


def test_a_request_bucket_paces_the_replay_from_full():
    """2 a minute, full at the start: admitted at 0, 0, 30 and 60 s; 1 s a reply."""
    limits = {"sonnet-5-5": {"requests": 2}}
    assert least_time(asked(4), limits, 1.0) == pytest.approx(61.0)
    assert least_time(asked(4), {}, 1.0) == pytest.approx(1.0)  # nothing binds


def test_a_chain_waits_for_its_previous_answer_and_classes_run_apart():
    limits = {"sonnet-5-5": {"requests": 1_000}}
    mixed = [*asked(3, "a"), *asked(2, "b", rate_class="haiku-5-5")]
    assert least_time(mixed, limits, 1.0) == pytest.approx(3.0)  # a's chain of three


def test_output_counts_as_written_and_the_older_rule_holds_max_tokens():
    """8,000 a minute (133.3 a second), one agent's chain of four 6,000-token replies.
    Now nothing is taken as a reply starts and its tokens leave as it is written: the
    second starts at once (2,133 left at t=1), the third waits for the bucket to hold a
    token again. With `reserve_max_tokens` each start needs its 8,000 max_tokens."""
    rate = 8_000 / 60
    limits = {"sonnet-5-5": {"output-tokens": 8_000}}
    replies = asked(4, "a", output=6_000, max_tokens=8_000)
    third = 2.0 + (1 + 12_000 - 8_000 - 2 * rate) / rate
    fourth = third + 1.0 + (1 + 6_000 - 1 - rate) / rate
    assert least_time(replies, limits, 1.0) == pytest.approx(fourth + 1.0)
    held = least_time(replies, limits, 1.0, reserve_max_tokens=True)
    assert held == pytest.approx(4 * 1.0 + 3 * (8_000 - 2_000 - rate) / rate)
    assert least_time(asked(4, output=6_000), limits, 1.0) == pytest.approx(1.0)  # at once


def test_a_retelling_joins_the_chain_of_the_mind_that_heard_it():
    def mind(name: str, heard: str) -> Served:
        body = {"model": "claude-sonnet-5-5", "max_tokens": 100, "tools": [{"name": "walk"}],
                "system": [{"type": "text", "text": f"You are {name}."}],
                "messages": [{"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": heard}]}]}
        return Served("claude-sonnet-5-5", body, {}, "end_turn", "acct-1")

    def told(text: str) -> Served:
        body = {"model": "claude-haiku-5-5", "max_tokens": 100,
                "messages": [{"role": "user", "content": "What happened: ..."}]}
        return Served("claude-haiku-5-5", body, {}, "end_turn", "acct-1",
                      {"content": [{"type": "text", "text": text}]})

    served = [told("Softly: you walk."), told("Softly: you walk."), told("Never used."),
              mind("Ember", "Softly: you  walk.\n\n(3 of your 8 tool calls left.)"),
              mind("Sage", "Softly: you walk.")]
    keys = chains(served)
    assert keys[0] == keys[3] and keys[1] == keys[4] and keys[3] != keys[4]
    assert keys[2] is None
