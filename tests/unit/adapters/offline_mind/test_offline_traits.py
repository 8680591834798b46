"""Personality text -> traits, and the fixed numbers a persona derives from them."""

from __future__ import annotations

import pytest

from adapters.offline_mind.persona import Costs, Persona
from adapters.offline_mind.traits import BASE, NEUTRAL, Traits, score_personality
from tests.unit.adapters.offline_mind.conftest import PERSONALITIES


def test_shipped_personalities_have_the_traits_their_words_say() -> None:
    ember = score_personality(PERSONALITIES["Ember"])
    sage = score_personality(PERSONALITIES["Sage"])
    river = score_personality(PERSONALITIES["River"])
    # Ember: curious and restless, hands busy -> explorer and maker.
    assert min(ember.explorer, ember.maker) > max(ember.writer, ember.social)
    # Sage: patient, observant, writes signs -> writer first.
    assert sage.dominant == "writer"
    assert sage.writer > max(sage.explorer, sage.maker, sage.social)
    # River: warm, sociable, loves meeting others -> social, and a wanderer.
    assert river.social > max(ember.social, sage.social)
    assert river.explorer > sage.explorer


def test_scoring_counts_words_by_their_beginnings() -> None:
    quiet = score_personality("You like bread.")
    writer = score_personality("You write. You wrote signs; writing is what you do.")
    assert quiet == Traits(BASE, BASE, BASE, BASE)
    assert writer.writer > quiet.writer
    assert writer.writer > score_personality("You write.").writer


@pytest.mark.parametrize("text", ["", "   ", None, 42])
def test_no_personality_gives_neutral_traits(text: object) -> None:
    assert score_personality(text) == NEUTRAL  # type: ignore[arg-type]


def test_traits_stay_within_bounds_however_many_words_match() -> None:
    traits = score_personality(" ".join(["curious warm patient hands"] * 50))
    assert all(0.0 <= v <= 1.0 for v in traits.as_dict().values())
    assert traits.explorer == 1.0
    with pytest.raises(ValueError, match="within 0..1"):
        Traits(1.5, 0, 0, 0)


def test_persona_turns_traits_into_behaviour_numbers() -> None:
    ember = Persona.of("Ember", PERSONALITIES["Ember"], 1)
    sage = Persona.of("Sage", PERSONALITIES["Sage"], 1)
    river = Persona.of("River", PERSONALITIES["River"], 1)
    assert river.talk_lines > ember.talk_lines
    assert river.accept_chance > sage.accept_chance > 0.5
    assert river.invite_chance > ember.invite_chance
    assert river.invite_pause < ember.invite_pause
    assert ember.home_range > sage.home_range and ember.max_steps > sage.max_steps
    assert sage.journal_chance > ember.journal_chance


def test_costs_know_when_a_shelter_is_affordable_as_the_world_pays() -> None:
    costs = Costs()
    assert costs.shelter_affordable({"plank": 9})
    assert not costs.shelter_affordable({"plank": 8})
    assert not costs.shelter_affordable({"stone": 20})  # walls yes, but no door material
    assert costs.shelter_affordable({"stone": 8, "wood": 1})
    # Each wall is paid from one material with two to spare, as the world chooses:
    assert costs.shelter_affordable({"cobblestone": 4, "clay_brick": 2, "plank": 3})
    assert not costs.shelter_affordable({"cobblestone": 3, "clay_brick": 3, "plank": 3})
    inventory = {"plank": 12}
    costs.pay_shelter(inventory, walls=4, door=True)
    assert inventory == {"plank": 3}
