"""The table of Claude models Hearth knows: ids, replacements, retirement, prices, efforts.

Lifecycle facts come from https://platform.claude.com/docs/en/about-claude/model-deprecations
(and each model's overview); the strict stand-in (tests/standin/catalog.py) holds the
same facts with the doc page for each, so the two are checked against each other here.
"""

from __future__ import annotations

import datetime as dt

import pytest

from core.model_catalog import (
    ADAPTIVE,
    CATALOG,
    EFFORTS,
    LINES,
    default_prices,
    facts,
    replacement,
)
from core.spend import Price
from tests.messages_standin import CATALOG as STANDIN

CURRENT = sorted(LINES.values())


# ---------------------------------------------------------------- facts


@pytest.mark.parametrize(("given", "known"), [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
    ("claude-opus-4-5-20251101", "claude-opus-4-5"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-sonnet-5-5", "claude-sonnet-5-5"),
])
def test_a_dated_snapshot_id_is_known_as_its_model(given, known):
    """Older models are named by a dated snapshot id as well as their alias
    (https://platform.claude.com/docs/en/about-claude/models/overview)."""
    assert facts(given) is CATALOG[known]


@pytest.mark.parametrize("given", [
    "claude-sonnet-4-5-2025092",     # seven digits: not a date
    "claude-sonnet-4-5-202509290",   # nine
    "claude-sonnet-4-5-latest",
    "claude-mystery-9",
    "llama3.1:8b",
    "",
    "20250929",
])
def test_ids_the_table_does_not_know_give_none(given):
    assert facts(given) is None


# ---------------------------------------------------------------- replacements


@pytest.mark.parametrize(("old", "new"), [
    ("claude-sonnet-4-5", "claude-sonnet-5-5"),          # deprecated
    ("claude-sonnet-4-5-20250929", "claude-sonnet-5-5"),  # its dated id
    ("claude-sonnet-4", "claude-sonnet-5-5"),             # retired
    ("claude-sonnet-4-20250514", "claude-sonnet-5-5"),
    ("claude-opus-4-1", "claude-opus-5-5"),
    ("claude-opus-4-5", "claude-opus-5-5"),
    ("claude-opus-5", "claude-opus-5-5"),                 # legacy
    ("claude-sonnet-5", "claude-sonnet-5-5"),
    ("claude-sonnet-4-6", "claude-sonnet-5-5"),
    ("claude-haiku-4-5", "claude-haiku-5-5"),
])
def test_an_old_model_names_the_current_one_of_its_line(old, new):
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: a deprecated
    model's recommended replacement."""
    assert replacement(old) == new


@pytest.mark.parametrize(("unknown", "new"), [
    ("claude-sonnet-3-9", "claude-sonnet-5-5"),
    ("claude-3-5-sonnet-20241022", "claude-sonnet-5-5"),
    ("claude-3-5-haiku-20241022", "claude-haiku-5-5"),
    ("claude-3-opus-20240229", "claude-opus-5-5"),
    ("claude-fable-4", "claude-fable-5-1"),
])
def test_an_id_the_table_lacks_is_sent_to_the_current_model_its_name_names(unknown, new):
    assert facts(unknown) is None
    assert replacement(unknown) == new


@pytest.mark.parametrize("model", CURRENT)
def test_a_current_model_has_no_replacement(model):
    assert replacement(model) is None


@pytest.mark.parametrize("model", ["claude-instant-1", "llama3.1:8b", "gpt-5", ""])
def test_an_id_of_no_line_has_no_replacement(model):
    assert replacement(model) is None


def test_every_replacement_named_is_a_current_model():
    for model in CATALOG.values():
        if model.replacement is not None:
            assert model.replacement in CURRENT, model.id


def test_every_model_that_is_not_current_names_its_replacement():
    for model in CATALOG.values():
        if model.id not in CURRENT:
            assert model.replacement is not None, model.id
        if model.retires is not None or model.legacy:
            assert model.id not in CURRENT, model.id


@pytest.mark.parametrize("model", CURRENT)
def test_the_current_models_are_neither_legacy_nor_retiring(model):
    known = CATALOG[model]
    assert not known.legacy and known.retires is None
    assert known.thinking == ADAPTIVE


# ---------------------------------------------------------------- retirement


def test_a_model_is_retired_from_its_retirement_day_on():
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: requests to a
    model fail from its retirement date."""
    sonnet = CATALOG["claude-sonnet-4-5"]
    assert sonnet.retires == dt.date(2026, 11, 30)
    assert not sonnet.retired_on(dt.date(2026, 11, 29))
    assert sonnet.retired_on(dt.date(2026, 11, 30))
    assert sonnet.retired_on(dt.date(2030, 1, 1))


@pytest.mark.parametrize("model", [*CURRENT, "claude-haiku-4-5", "claude-sonnet-5"])
def test_a_model_with_no_retirement_scheduled_is_never_retired(model):
    assert not CATALOG[model].retired_on(dt.date(2099, 12, 31))


@pytest.mark.parametrize(("model", "day"), [
    ("claude-sonnet-4-5", dt.date(2026, 11, 30)),
    ("claude-opus-4-5", dt.date(2027, 1, 22)),
    ("claude-opus-4-1", dt.date(2026, 8, 5)),
    ("claude-sonnet-4", dt.date(2026, 6, 15)),
])
def test_retirement_days_are_the_published_ones(model, day):
    """https://platform.claude.com/docs/en/about-claude/model-deprecations: Claude Sonnet 4
    (claude-sonnet-4-20250514) was deprecated on April 14, 2026 and retired on June 15,
    2026 (also the release notes, https://platform.claude.com/docs/en/release-notes/overview);
    Opus 4.1 retires August 5, 2026; Sonnet 4.5 November 30, 2026; Opus 4.5 January 22,
    2027 (also the SDK's DEPRECATED_MODELS)."""
    assert CATALOG[model].retires == day


@pytest.mark.parametrize("model", sorted(set(CATALOG) & set(STANDIN)))
def test_the_table_and_the_stand_in_agree_on_when_a_model_retires(model):
    assert CATALOG[model].retires == STANDIN[model].retires


# ---------------------------------------------------------------- efforts and thinking


@pytest.mark.parametrize("model", sorted(CATALOG))
def test_efforts_are_named_levels_with_the_default_among_them(model):
    known = CATALOG[model]
    assert set(known.efforts) <= set(EFFORTS)
    assert len(set(known.efforts)) == len(known.efforts)
    if known.default_effort is not None:
        assert known.default_effort in known.efforts


@pytest.mark.parametrize("model", sorted(set(CATALOG) & set(STANDIN)))
def test_the_table_and_the_stand_in_agree_on_the_efforts_a_model_takes(model):
    """https://platform.claude.com/docs/en/build-with-claude/effort: Haiku 4.5 and Sonnet 4.5
    take no effort; Opus 4.5 takes low, medium and high; the 5.x models low to max
    (low, medium, high, xhigh, max). The stand-in refuses any other with a 400, so an
    effort the table allows and the API refuses stops a run on its first request."""
    assert set(CATALOG[model].efforts) == STANDIN[model].efforts


@pytest.mark.parametrize("model", sorted(set(CATALOG) & set(STANDIN)))
def test_the_table_and_the_stand_in_agree_on_the_default_effort(model):
    """Each model's overview gives its default effort (the stand-in's catalog cites them);
    the table may leave one out (None: the model's own)."""
    if CATALOG[model].default_effort is not None:
        assert CATALOG[model].default_effort == STANDIN[model].default_effort


# ---------------------------------------------------------------- prices


def test_default_prices_cover_every_model_of_the_table():
    prices = default_prices()
    assert set(prices) == set(CATALOG)
    assert all(isinstance(p, Price) for p in prices.values())
    assert all(prices[m] is CATALOG[m].price for m in CATALOG)


@pytest.mark.parametrize("model", CURRENT)
def test_every_current_model_has_a_price(model):
    price = default_prices()[model]
    assert price.input > 0 and price.output > price.input
    assert 0 < price.cache_read < price.input < price.cache_write < price.base.cache_write_1h


def test_the_lines_are_fable_opus_sonnet_and_haiku():
    assert LINES == {"fable": "claude-fable-5-1", "opus": "claude-opus-5-5",
                     "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}
