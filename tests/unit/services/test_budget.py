"""Spend and budgets: the arithmetic, each limit, and limits that hold across runs."""

from __future__ import annotations

import json

import pytest

from core.spend import Price, Usage, cost
from services.budget import Budgets, SpendMeter, UnpricedModel, requests_in_record

SONNET = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
PRICES = {"sonnet": SONNET}
MILLION = Usage(input=1_000_000)


def test_cost_is_dollars_per_million_tokens_of_each_kind():
    assert cost(MILLION, SONNET) == pytest.approx(3.0)
    assert cost(Usage(1000, 2000, 4000, 10_000), SONNET) == pytest.approx(
        (1000 * 3 + 2000 * 15 + 4000 * 3.75 + 10_000 * 0.3) / 1e6)


def test_usage_from_a_record_ignores_what_is_not_a_count():
    assert Usage.of({"input": 5, "output": -1, "cache_read": "9"}) == Usage(input=5)


def test_nothing_is_reached_without_budgets():
    meter = SpendMeter(PRICES, Budgets(), 24)
    for tick in range(10):
        meter.add("Ember", tick, "sonnet", MILLION)
    assert meter.reached() is None and meter.run == pytest.approx(30.0)
    assert meter.by_agent == {"Ember": pytest.approx(30.0)}


def test_the_run_budget_is_reached_at_its_figure_and_named_with_the_spend():
    meter = SpendMeter(PRICES, Budgets(per_run=7.0), 24)
    meter.add("Ember", 0, "sonnet", MILLION)
    meter.add("Sage", 0, "sonnet", MILLION)
    assert meter.reached() is None
    meter.add("Ember", 1, "sonnet", MILLION)
    assert meter.reached() == "the per-run budget of $7.00 is reached: $9.00 spent"


def test_the_tick_budget_counts_each_tick_alone():
    meter = SpendMeter(PRICES, Budgets(per_tick=5.0), 24)
    for tick in range(5):
        meter.add("Ember", tick, "sonnet", MILLION)
    assert meter.reached() is None
    meter.add("Sage", 5, "sonnet", MILLION)
    meter.add("Ember", 5, "sonnet", MILLION)
    assert meter.reached() == "the per-tick budget of $5.00 is reached at tick 5: $6.00 spent in it"


def test_an_agents_day_counts_what_earlier_runs_spent_that_day():
    earlier = [("Ember", 30, "sonnet", MILLION), ("Ember", 10, "sonnet", MILLION)]  # days 2, 1
    meter = SpendMeter(PRICES, Budgets(per_agent_per_day=5.0), 24, earlier, now=40)
    assert meter.reached() is None
    meter.add("Sage", 40, "sonnet", MILLION)
    meter.add("Ember", 41, "sonnet", MILLION)
    assert meter.reached() is not None and meter.reached().startswith(
        "Ember's budget of $5.00 for day 2 is reached: $6.00")
    assert meter.run == pytest.approx(6.0)  # earlier runs are not this run's spend


def test_a_day_already_spent_is_reached_before_the_first_request():
    earlier = [("Ember", 50, "sonnet", Usage(input=2_000_000))]
    meter = SpendMeter(PRICES, Budgets(per_agent_per_day=5.0), 24, earlier, now=52)
    assert meter.reached() == "Ember's budget of $5.00 for day 3 is reached: $6.00 spent that day"
    fresh_day = SpendMeter(PRICES, Budgets(per_agent_per_day=5.0), 24, earlier, now=72)
    assert fresh_day.reached() is None


def test_a_model_without_a_price_is_refused_before_use():
    meter = SpendMeter(PRICES, Budgets(), 24)
    with pytest.raises(UnpricedModel, match="no price for mystery-model"):
        meter.check_models(["sonnet", "mystery-model"])
    meter.check_models(["sonnet"])


def test_requests_are_read_back_from_a_stored_record():
    record = json.dumps({"actions": [], "mind": {"model": "sonnet", "requests": [
        {"usage": {"input": 10, "output": 2}}, {"error": "the API answered 500"},
        {"usage": {"input": 4}, "batch": True}]},
        "narration": {"model": "haiku", "requests": [{"usage": {"input": 7}}]}})
    assert requests_in_record(record) == [("sonnet", Usage(input=10, output=2), False),
                                          ("sonnet", Usage(input=4), True),
                                          ("haiku", Usage(input=7), False)]
    assert requests_in_record("not json") == []
    assert requests_in_record(json.dumps({"mind": {"requests": "x"}})) == []
    assert requests_in_record(json.dumps([1, 2])) == []


def test_a_request_answered_in_a_batch_costs_half() -> None:
    """https://platform.claude.com/docs/en/build-with-claude/batch-processing: 50% of the
    standard price, every token kind."""
    meter = SpendMeter({"sonnet": Price(2.0, 10.0, 2.5, 0.1)}, Budgets(), 24)
    usage = Usage(input=1_000, output=1_000, cache_write=1_000, cache_read=1_000)
    live = meter.add("Ember", 0, "sonnet", usage)
    batched = meter.add("Ember", 0, "sonnet", usage, batch=True)
    assert batched == pytest.approx(live / 2) and live == pytest.approx(0.0146)
    earlier = SpendMeter({"sonnet": Price(2.0, 10.0, 2.5, 0.1)}, Budgets(per_agent_per_day=0.01),
                         24, [("Ember", 0, "sonnet", usage, True)], now=1)
    assert earlier.reached() is None  # $0.0073 of $0.01: half price counted, not full
