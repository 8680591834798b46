"""What requests cost on today's models: 1-hour cache writes, and Haiku 5.5's two price bands.

The figures are Anthropic's published prices, US dollars per million tokens
(https://platform.claude.com/docs/en/about-claude/pricing): base input / output /
5-minute cache write / 1-hour cache write / cache read.

    Claude Fable 5.1    $10   / $50   / $12.50 / $20   / $0.25
    Claude Opus 5.5     $4    / $20   / $5     / $8    / $0.20
    Claude Sonnet 5.5   $2    / $10   / $2.50  / $4    / $0.10
    Claude Haiku 5.5    $0.10 / $0.50 / $0.125 / $0.20 / $0.01   prompts up to 100K tokens
                        $0.50 / $2.50 / $0.625 / $1.00 / $0.05   prompts over 100K tokens
    Claude Haiku 4.5    $1    / $5    / $1.25  / $2    / $0.10

The prompt that decides Haiku 5.5's band counts cache reads and writes as well as
uncached input, and a request over the line pays the higher rates for every token,
its output included.
"""

from __future__ import annotations

import anthropic
import pytest

from config import load_config
from config.claude import ClaudeSettings, ModelPrice
from core.model_catalog import CATALOG
from core.spend import PER, Price, Rates, Usage, cost

PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"

PUBLISHED = {
    # model: (input, output, 5-minute write, 1-hour write, read)
    "claude-fable-5-1": (10.0, 50.0, 12.50, 20.0, 0.25),
    "claude-opus-5-5": (4.0, 20.0, 5.0, 8.0, 0.20),
    "claude-sonnet-5-5": (2.0, 10.0, 2.50, 4.0, 0.10),
    "claude-haiku-5-5": (0.10, 0.50, 0.125, 0.20, 0.01),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 2.0, 0.10),
}
HAIKU_55_LONG = (0.50, 2.50, 0.625, 1.00, 0.05)
HAIKU_55_LINE = 100_000

HAIKU = CATALOG["claude-haiku-5-5"].price


def rates(r: Rates) -> tuple[float, float, float, float, float]:
    return (r.input, r.output, r.cache_write, r.cache_write_1h, r.cache_read)


def dollars(usage: Usage, figures: tuple[float, float, float, float, float]) -> float:
    """The bill worked out by hand from a row of published figures."""
    i, o, w5, w1, r = figures
    return (usage.input * i + usage.output * o + usage.cache_write * w5
            + usage.cache_write_1h * w1 + usage.cache_read * r) / 1_000_000


# ---------------------------------------------------------------- usage from a reply


def sdk_usage(**fields: object) -> anthropic.types.Usage:
    """A reply's usage as the real SDK parses it."""
    return anthropic.types.Usage.model_validate({"input_tokens": 0, "output_tokens": 0, **fields})


def test_one_hour_writes_are_told_apart_from_five_minute_writes():
    """https://platform.claude.com/docs/en/build-with-claude/prompt-caching: the reply's
    cache_creation_input_tokens counts both lifetimes; `cache_creation` splits them."""
    usage = Usage.of_reply(sdk_usage(
        input_tokens=12, output_tokens=34, cache_creation_input_tokens=1_000,
        cache_read_input_tokens=56,
        cache_creation={"ephemeral_5m_input_tokens": 400, "ephemeral_1h_input_tokens": 600}))
    assert usage == Usage(input=12, output=34, cache_write=400, cache_read=56,
                          cache_write_1h=600)


def test_without_the_split_every_write_is_a_five_minute_write():
    usage = Usage.of_reply(sdk_usage(input_tokens=3, cache_creation_input_tokens=700))
    assert (usage.cache_write, usage.cache_write_1h) == (700, 0)


def test_a_split_claiming_more_hour_writes_than_writes_is_held_to_the_total():
    usage = Usage.of_reply(sdk_usage(
        cache_creation_input_tokens=100,
        cache_creation={"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 900}))
    assert (usage.cache_write, usage.cache_write_1h) == (0, 100)


def test_a_reply_without_usage_counts_nothing():
    assert Usage.of_reply(None) == Usage()


def test_the_stand_ins_one_hour_breakpoint_is_read_as_a_one_hour_write():
    """A system block marked with ttl "1h" (prompt-caching page) is written to the 1-hour
    cache; the usage the real SDK parses from the stand-in's reply says so."""
    from tests.messages_standin import StrictMessagesApi

    api = StrictMessagesApi()
    system = [{"type": "text", "text": "You tend a quiet meadow. " * 200,
               "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    reply = api.sync_client().messages.create(
        model="claude-sonnet-5-5", max_tokens=2000, system=system,
        messages=[{"role": "user", "content": "Hello."}])
    usage = Usage.of_reply(reply.usage)
    assert usage.cache_write_1h > 512 and usage.cache_write == 0
    assert usage.cache_write_1h == reply.usage.cache_creation_input_tokens


def test_the_prompt_is_every_input_token_cached_or_not():
    usage = Usage(input=1, output=1000, cache_write=20, cache_read=300, cache_write_1h=4000)
    assert usage.prompt == 4321


def test_sums_keep_the_one_hour_writes():
    total = Usage(1, 2, 3, 4, 5) + Usage(10, 20, 30, 40, 50)
    assert total == Usage(11, 22, 33, 44, 55)


# ---------------------------------------------------------------- stored records


def test_a_record_round_trips_with_its_one_hour_writes():
    usage = Usage(input=7, output=8, cache_write=9, cache_read=10, cache_write_1h=11)
    stored = usage.to_json()
    assert stored["cache_write_1h"] == 11
    assert Usage.of(stored) == usage


def test_a_record_without_one_hour_writes_leaves_the_key_out():
    """Records stay as they were for requests that wrote nothing for an hour."""
    assert Usage(1, 2, 3, 4).to_json() == {"input": 1, "output": 2, "cache_write": 3,
                                           "cache_read": 4}


def test_an_older_record_still_reads():
    old = {"input": 100, "output": 20, "cache_write": 1100, "cache_read": 0}
    assert Usage.of(old) == Usage(100, 20, 1100, 0, 0)


# ---------------------------------------------------------------- the published figures


@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_the_catalog_has_the_published_prices(model):
    """Base rates per model as published at
    https://platform.claude.com/docs/en/about-claude/pricing."""
    assert rates(CATALOG[model].price.base) == pytest.approx(PUBLISHED[model])


def test_haiku_5_5_has_its_published_long_prompt_band():
    """https://platform.claude.com/docs/en/about-claude/pricing: prompts over 100K tokens."""
    assert HAIKU.long_above == HAIKU_55_LINE
    assert HAIKU.long is not None and rates(HAIKU.long) == pytest.approx(HAIKU_55_LONG)


@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_the_shipped_settings_charge_the_published_prices(model):
    """What a run counts comes from settings.yaml (`claude.prices`) on top of the catalog."""
    table = load_config().settings.claude.price_table()
    assert rates(table[model].base) == pytest.approx(PUBLISHED[model])
    if model == "claude-haiku-5-5":
        assert table[model].long_above == HAIKU_55_LINE
        assert rates(table[model].long) == pytest.approx(HAIKU_55_LONG)
    else:
        assert table[model].long is None


def test_only_haiku_5_5_is_priced_by_prompt_size():
    assert [m for m, f in CATALOG.items() if f.price.long is not None] == ["claude-haiku-5-5"]


# ---------------------------------------------------------------- Haiku 5.5's two bands


@pytest.mark.parametrize(("usage", "band"), [
    (Usage(input=HAIKU_55_LINE), "low"),
    (Usage(input=HAIKU_55_LINE + 1), "high"),
    (Usage(input=HAIKU_55_LINE, output=50_000), "low"),  # output is no part of the prompt
    (Usage(input=1, cache_read=HAIKU_55_LINE - 1), "low"),
    (Usage(input=1, cache_read=HAIKU_55_LINE), "high"),
    (Usage(input=10, cache_write=HAIKU_55_LINE - 9), "high"),
    (Usage(input=10, cache_write_1h=HAIKU_55_LINE - 9), "high"),
    (Usage(input=1, cache_write=30_000, cache_write_1h=30_000, cache_read=39_999), "low"),
    (Usage(input=1, cache_write=30_000, cache_write_1h=30_000, cache_read=40_000), "high"),
])
def test_the_band_is_decided_by_the_whole_prompt(usage, band):
    """https://platform.claude.com/docs/en/about-claude/pricing: "prompts up to 100K tokens"
    at the base rates; over that, the higher ones; cache reads and writes count."""
    expected = PUBLISHED["claude-haiku-5-5"] if band == "low" else HAIKU_55_LONG
    assert cost(usage, HAIKU) == pytest.approx(dollars(usage, expected))


def test_a_prompt_of_exactly_100000_tokens_costs_the_low_rate():
    assert cost(Usage(input=100_000), HAIKU) == pytest.approx(0.01)  # 0.1 M x $0.10


def test_a_prompt_of_100001_tokens_costs_the_high_rate_for_every_token():
    assert cost(Usage(input=100_001), HAIKU) == pytest.approx(100_001 * 0.50 / PER)


def test_every_token_of_a_long_request_is_at_the_high_rates_output_included():
    usage = Usage(input=1_000, output=2_000, cache_write=3_000, cache_read=150_000,
                  cache_write_1h=4_000)
    high = (1_000 * 0.50 + 2_000 * 2.50 + 3_000 * 0.625 + 150_000 * 0.05
            + 4_000 * 1.00) / PER
    assert cost(usage, HAIKU) == pytest.approx(high)
    short = Usage(input=1_000, output=2_000, cache_write=3_000, cache_read=50_000,
                  cache_write_1h=4_000)
    low = (1_000 * 0.10 + 2_000 * 0.50 + 3_000 * 0.125 + 50_000 * 0.01
           + 4_000 * 0.20) / PER
    assert cost(short, HAIKU) == pytest.approx(low)


def test_requests_are_priced_one_by_one_not_summed():
    """Two short requests stay in the low band even though their sum is over the line."""
    one = Usage(input=60_000, output=1_000)
    assert cost(one, HAIKU) * 2 == pytest.approx(dollars(one + one,
                                                         PUBLISHED["claude-haiku-5-5"]))
    assert cost(one + one, HAIKU) > cost(one, HAIKU) * 2


# ---------------------------------------------------------------- 1-hour writes


@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_one_hour_writes_cost_the_one_hour_rate(model):
    """50,000 tokens: under Haiku 5.5's line, so every model is at its base rates."""
    price = CATALOG[model].price
    assert cost(Usage(cache_write_1h=50_000), price) == pytest.approx(
        PUBLISHED[model][3] * 0.05)
    assert cost(Usage(cache_write=50_000), price) == pytest.approx(PUBLISHED[model][2] * 0.05)


def test_a_price_without_a_one_hour_rate_charges_twice_the_input_rate():
    """The pricing page: 1-hour cache writes are 2x the base input price."""
    price = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
    assert price.base.cache_write_1h == 6.0
    assert cost(Usage(cache_write_1h=500_000), price) == pytest.approx(3.0)
    stated = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30,
                   cache_write_1h=5.0)
    assert cost(Usage(cache_write_1h=500_000), stated) == pytest.approx(2.5)


def test_a_long_prompt_price_needs_both_its_line_and_its_rates():
    with pytest.raises(ValueError, match="both its threshold and its rates"):
        Price(1, 5, 1.25, 0.1, long_above=1000)
    with pytest.raises(ValueError, match="both its threshold and its rates"):
        Price(1, 5, 1.25, 0.1, long=Rates(2, 10, 2.5, 0.2, 4))
    with pytest.raises(ValueError, match="at least 1 token"):
        Price(1, 5, 1.25, 0.1, long_above=0, long=Rates(2, 10, 2.5, 0.2, 4))


# ---------------------------------------------------------------- settings.yaml's form


def test_a_long_prompt_price_in_settings_becomes_the_same_core_price():
    written = ModelPrice.model_validate({
        "input": 0.10, "output": 0.50, "cache_write": 0.125, "cache_write_1h": 0.20,
        "cache_read": 0.01, "long_prompt": {"above_tokens": 100_000, "input": 0.50,
                                            "output": 2.50, "cache_write": 0.625,
                                            "cache_write_1h": 1.0, "cache_read": 0.05}})
    assert written.to_core() == HAIKU
    assert ClaudeSettings().price_table()["claude-haiku-5-5"] == HAIKU


def test_a_long_prompt_band_without_a_one_hour_rate_charges_twice_its_input_rate():
    settings = ClaudeSettings.model_validate({"prices": {"claude-haiku-5-5": {
        "input": 0.10, "output": 0.50, "cache_write": 0.125, "cache_read": 0.01,
        "long_prompt": {"above_tokens": 100_000, "input": 0.50, "output": 2.50,
                        "cache_write": 0.625, "cache_read": 0.05}}}})
    price = settings.price_table()["claude-haiku-5-5"]
    assert price.base.cache_write_1h == pytest.approx(0.20)
    assert price.long is not None and price.long.cache_write_1h == pytest.approx(1.00)
    assert cost(Usage(input=1, cache_write_1h=100_000), price) == pytest.approx(
        (0.50 + 100_000 * 1.00) / PER)


def test_a_price_given_in_settings_replaces_only_that_models():
    settings = ClaudeSettings.model_validate({"prices": {"claude-sonnet-5-5": {
        "input": 1.0, "output": 2.0, "cache_write": 3.0, "cache_read": 4.0}}})
    table = settings.price_table()
    assert rates(table["claude-sonnet-5-5"].base) == (1.0, 2.0, 3.0, 2.0, 4.0)
    assert table["claude-haiku-5-5"] == HAIKU
