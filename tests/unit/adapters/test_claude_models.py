"""The check before a run (adapters/claude_models.py), against the strict stand-in's
Models API (`GET /v1/models`, https://platform.claude.com/docs/en/api/models-list) through
the real SDK, and against an endpoint without one (the built-in table judges)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import pytest

from adapters.claude_models import (
    Abilities,
    KeyRefused,
    Lineup,
    ModelRefused,
    abilities_from_table,
    check_models,
    nearest_effort,
)
from core.model_catalog import LINES
from tests.messages_standin import StrictMessagesApi

TODAY = dt.date(2026, 11, 26)
CURRENT = sorted(LINES.values())


def client_of(handler: Callable[[httpx2.Request], httpx2.Response]) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))


def no_models_list(request: httpx2.Request) -> httpx2.Response:
    """An endpoint that speaks the Messages API but has no Models API (a proxy, say)."""
    return httpx2.Response(404, json={"type": "error", "error": {
        "type": "not_found_error", "message": f"Not found: {request.url.path}"}})


# ---------------------------------------------------------------- the stand-in's list


async def test_every_current_model_passes_without_a_warning():
    api = StrictMessagesApi()
    uses = {m: ["Ember"] for m in [*CURRENT, "claude-haiku-4-5"]}
    lineup = await check_models(api.client(), uses, TODAY)
    assert lineup.listed and lineup.warnings == []
    assert set(lineup.abilities) == set(uses)
    assert api.refused == []


async def test_a_wrong_key_is_refused_in_one_line():
    """https://platform.claude.com/docs/en/api/errors: 401 authentication_error."""
    api = StrictMessagesApi(keys={"good-key": "acct-1"})
    with pytest.raises(KeyRefused) as caught:
        await check_models(api.client(api_key="bad-key"), {"claude-sonnet-5-5": ["Ember"]},
                           TODAY)
    line = str(caught.value)
    assert "ANTHROPIC_API_KEY" in line and "401" in line
    assert "\n" not in line and "Traceback" not in line and "bad-key" not in line
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert api.refused[-1].status == 401


async def test_a_key_without_access_is_refused_in_one_line():
    def forbidden(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(403, json={"type": "error", "error": {
            "type": "permission_error", "message": "Your API key does not have permission"}})

    with pytest.raises(KeyRefused) as caught:
        await check_models(client_of(forbidden), {"claude-sonnet-5-5": ["Ember"]}, TODAY)
    assert "403" in str(caught.value) and "\n" not in str(caught.value)


async def test_a_model_retiring_soon_passes_with_one_warning_naming_the_day_and_the_successor():
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: Claude Sonnet 4.5
    retires on November 30, 2026."""
    api = StrictMessagesApi(today=TODAY)
    lineup = await check_models(api.client(), {"claude-sonnet-4-5": ["Ember", "Sage"],
                                               "claude-sonnet-5-5": ["Wren"]}, TODAY)
    assert len(lineup.warnings) == 1
    warning = lineup.warnings[0]
    assert "claude-sonnet-4-5" in warning and "November 30, 2026" in warning
    assert "claude-sonnet-5-5" in warning and "Ember, Sage" in warning
    assert "\n" not in warning


async def test_a_retired_model_is_refused_naming_its_successor():
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: requests to a
    retired model fail."""
    later = dt.date(2026, 12, 1)
    api = StrictMessagesApi(today=later)
    with pytest.raises(ModelRefused) as caught:
        await check_models(api.client(), {"claude-sonnet-4-5": ["Ember"]}, later)
    line = str(caught.value)
    assert "claude-sonnet-4-5" in line and "claude-sonnet-5-5" in line and "Ember" in line
    assert "\n" not in line


async def test_an_unknown_model_is_refused():
    api = StrictMessagesApi()
    with pytest.raises(ModelRefused) as caught:
        await check_models(api.client(), {"claude-mystery-9": ["Ember"]}, TODAY)
    assert "claude-mystery-9 (Ember)" in str(caught.value)


async def test_a_misspelt_model_of_a_line_is_refused_naming_the_lines_current_model():
    api = StrictMessagesApi()
    with pytest.raises(ModelRefused, match="use claude-sonnet-5-5 instead"):
        await check_models(api.client(), {"claude-sonnet-5-6": ["Ember"]}, TODAY)


async def test_an_effort_the_model_does_not_take_is_refused():
    """https://platform.claude.com/docs/en/build-with-claude/effort: the effort levels."""
    api = StrictMessagesApi()
    with pytest.raises(ModelRefused) as caught:
        await check_models(api.client(), {"claude-sonnet-5-5": ["Ember", "Sage"]}, TODAY,
                           {"claude-sonnet-5-5": {"Sage": "extreme"}})
    assert "Sage's effort 'extreme'" in str(caught.value)
    assert "claude-sonnet-5-5" in str(caught.value)
    lineup = await check_models(api.client(), {"claude-sonnet-5-5": ["Ember"]}, TODAY,
                                {"claude-sonnet-5-5": {"Ember": "low"}})
    assert "low" in lineup.abilities["claude-sonnet-5-5"].efforts


@pytest.mark.filterwarnings("ignore:The model 'claude-opus-4-5' is deprecated:DeprecationWarning")
async def test_opus_4_5_at_max_effort_is_refused_before_the_run():
    """https://platform.claude.com/docs/en/build-with-claude/effort: Claude Opus 4.5 takes
    low, medium and high; the API refuses `max` on it with a 400 (the stand-in does), and a
    400 halts the run at its first request. The check before the run must say so first."""
    api = StrictMessagesApi()
    with pytest.raises(anthropic.BadRequestError):  # what each request would meet
        await api.client().messages.create(
            model="claude-opus-4-5", max_tokens=100, output_config={"effort": "max"},
            messages=[{"role": "user", "content": "Hello."}])
    with pytest.raises(ModelRefused, match="effort 'max'"):
        await check_models(api.client(), {"claude-opus-4-5": ["Ember"]}, TODAY,
                           {"claude-opus-4-5": {"Ember": "max"}})


# ---------------------------------------------------------------- what each request carries


async def test_options_carry_the_effort_only_for_models_that_take_one():
    api = StrictMessagesApi()
    lineup = await check_models(api.client(), {m: ["Ember"] for m in
                                               ["claude-sonnet-5-5", "claude-haiku-5-5",
                                                "claude-haiku-4-5", "claude-sonnet-4-5"]},
                                TODAY)
    assert lineup.options_for("claude-sonnet-5-5", "medium", 16_000) == {
        "max_tokens": 16_000, "output_config": {"effort": "medium"}}
    assert lineup.options_for("claude-haiku-5-5", "low", 2_000) == {
        "max_tokens": 2_000, "output_config": {"effort": "low"}}
    assert lineup.options_for("claude-haiku-4-5", "medium", 16_000) == {"max_tokens": 16_000}
    assert lineup.options_for("claude-sonnet-4-5", "high", 16_000) == {"max_tokens": 16_000}
    assert lineup.options_for("claude-sonnet-5-5", None, 16_000) == {"max_tokens": 16_000}
    assert lineup.options_for("claude-sonnet-5-5", "extreme", 16_000) == {"max_tokens": 16_000}


def test_one_effort_for_all_meets_a_model_with_fewer_levels_at_its_nearest_below():
    """settings.yaml's `claude.effort` applies to every model; Opus 4.5 takes low, medium
    and high only (https://platform.claude.com/docs/en/build-with-claude/effort)."""
    takes = ("low", "medium", "high")
    assert nearest_effort("xhigh", takes) == "high"
    assert nearest_effort("max", takes) == "high"
    assert nearest_effort("medium", takes) == "medium"
    assert nearest_effort("low", ("medium", "high")) == "medium"  # nothing below: its lowest
    assert nearest_effort("high", ()) is None and nearest_effort(None, takes) is None
    assert Lineup().options_for("claude-opus-4-5", "xhigh", 16_000) == {
        "max_tokens": 16_000, "output_config": {"effort": "high"}}


async def test_an_agents_own_effort_on_a_model_that_takes_none_is_refused():
    api = StrictMessagesApi()
    with pytest.raises(ModelRefused, match="takes no effort setting"):
        await check_models(api.client(), {"claude-haiku-4-5": ["River"]}, TODAY,
                           {"claude-haiku-4-5": {"River": "low"}})


async def test_options_never_ask_for_more_than_the_models_output_limit():
    """https://platform.claude.com/docs/en/about-claude/models/overview: max output 128K on
    the 5.x models, 64K on the 4.5 ones (the Models API's `max_tokens`)."""
    api = StrictMessagesApi()
    lineup = await check_models(api.client(), {"claude-sonnet-5-5": ["Ember"],
                                               "claude-haiku-4-5": ["Sage"]}, TODAY)
    assert lineup.options_for("claude-haiku-4-5", None, 100_000)["max_tokens"] == 64_000
    assert lineup.options_for("claude-sonnet-5-5", None, 200_000)["max_tokens"] == 128_000
    assert lineup.options_for("claude-sonnet-5-5", None, 500)["max_tokens"] == 500
    sent = await api.client().messages.create(
        model="claude-haiku-4-5", messages=[{"role": "user", "content": "Hello."}],
        timeout=30, **lineup.options_for("claude-haiku-4-5", "medium", 100_000))
    assert sent.content and api.refused == []


def test_a_model_nobody_checked_is_judged_by_the_table():
    lineup = Lineup()
    assert lineup.options_for("claude-opus-5-5", "high", 8_000) == {
        "max_tokens": 8_000, "output_config": {"effort": "high"}}
    assert lineup.options_for("llama3.1:8b", "high", 8_000) == {"max_tokens": 8_000}
    assert abilities_from_table("claude-haiku-4-5") == Abilities()


# ---------------------------------------------------------------- a list with capabilities


def listing(models: list[dict[str, Any]]) -> Callable[[httpx2.Request], httpx2.Response]:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/v1/models":
            return httpx2.Response(200, json={"data": models, "has_more": False,
                                              "first_id": models[0]["id"],
                                              "last_id": models[-1]["id"]})
        return no_models_list(request)
    return handler


def model_info(model: str, **fields: Any) -> dict[str, Any]:
    return {"type": "model", "id": model, "display_name": model,
            "created_at": "2026-09-28T00:00:00Z", "lifecycle": "active", **fields}


def efforts(**supported: bool) -> dict[str, Any]:
    levels = {k: {"supported": v} for k, v in supported.items()}
    return {"effort": {"supported": any(supported.values()), **levels}}


async def test_the_listed_capabilities_decide_the_efforts():
    """https://platform.claude.com/docs/en/api/models-list: each model's `capabilities`
    says which effort levels it takes, and `max_tokens` its output limit."""
    handler = listing([
        model_info("claude-sonnet-5-5", max_tokens=128_000,
                   capabilities=efforts(low=True, medium=True, high=True, xhigh=False,
                                        max=True)),
        model_info("claude-haiku-4-5", max_tokens=64_000, capabilities=efforts(
            low=False, medium=False, high=False, max=False)),
    ])
    lineup = await check_models(client_of(handler), {"claude-sonnet-5-5": ["Ember"],
                                                     "claude-haiku-4-5": ["Sage"]}, TODAY)
    assert lineup.abilities["claude-sonnet-5-5"] == Abilities(("low", "medium", "high", "max"),
                                                              128_000)
    assert lineup.abilities["claude-haiku-4-5"] == Abilities((), 64_000)
    with pytest.raises(ModelRefused, match="xhigh"):
        await check_models(client_of(handler), {"claude-sonnet-5-5": ["Ember"]}, TODAY,
                           {"claude-sonnet-5-5": {"Ember": "xhigh"}})


async def test_a_listed_model_marked_retired_is_refused_and_deprecated_warned():
    handler = listing([
        model_info("claude-sonnet-4", lifecycle="retired", retires_at="2026-06-15T00:00:00Z"),
        model_info("claude-opus-4-5", lifecycle="deprecated",
                   retires_at="2027-01-22T00:00:00Z"),
    ])
    with pytest.raises(ModelRefused, match="claude-sonnet-4 .* is retired.*claude-sonnet-5-5"):
        await check_models(client_of(handler), {"claude-sonnet-4": ["Ember"]}, TODAY)
    lineup = await check_models(client_of(handler), {"claude-opus-4-5": ["Ember"]}, TODAY)
    assert len(lineup.warnings) == 1
    assert "January 22, 2027" in lineup.warnings[0]
    assert "claude-opus-5-5" in lineup.warnings[0]


# ---------------------------------------------------------------- no list: the table


async def test_without_a_models_list_a_model_retired_by_date_is_refused():
    with pytest.raises(ModelRefused) as caught:
        await check_models(client_of(no_models_list), {"claude-sonnet-4-5": ["Ember"]},
                           dt.date(2026, 12, 1))
    assert "November 30, 2026" in str(caught.value) and "claude-sonnet-5-5" in str(
        caught.value)


async def test_without_a_models_list_an_unknown_id_is_allowed():
    lineup = await check_models(client_of(no_models_list),
                                {"my-proxy-model": ["Ember"], "claude-sonnet-5-5": ["Sage"]},
                                TODAY)
    assert not lineup.listed and lineup.warnings == []
    assert lineup.abilities["my-proxy-model"] == Abilities()
    assert lineup.options_for("claude-sonnet-5-5", "medium", 1_000) == {
        "max_tokens": 1_000, "output_config": {"effort": "medium"}}


async def test_without_a_models_list_a_model_retiring_later_is_warned():
    lineup = await check_models(client_of(no_models_list), {"claude-sonnet-4-5": ["Ember"]},
                                TODAY)
    assert len(lineup.warnings) == 1 and "November 30, 2026" in lineup.warnings[0]


async def test_a_models_list_that_fails_otherwise_is_a_warning_not_a_stop():
    def broken(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"type": "error", "error": {
            "type": "api_error", "message": "Internal server error"}})

    lineup = await check_models(client_of(broken), {"claude-sonnet-5-5": ["Ember"]}, TODAY)
    assert len(lineup.warnings) == 1
    assert "could not list the API's models" in lineup.warnings[0]
    assert "500" in lineup.warnings[0]
