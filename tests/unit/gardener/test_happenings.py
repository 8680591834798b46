"""The rules' happenings fit any place and any hour (issue 29, item 14).

The rules choose a happening without looking at the ground, the weather or the time
where it lands, so a text that names any of them is wrong somewhere: starlings that
settle "in the trees" on a shore, a rainbow at night. Each text is held to words that
no ground, weather or hour can contradict.
"""

from __future__ import annotations

import re

import pytest

from core.terrain import Terrain, Weather
from services.gardener.rules import HAPPENINGS

PLACE_BOUND = frozenset({
    *(t.value for t in Terrain), *(w.value for w in Weather),
    "tree", "trees", "wood", "woods", "undergrowth", "ground", "grass", "sand", "shore",
    "beach", "sea", "lake", "river", "stream", "rock", "rocks", "hill", "hills", "blossom",
    "flowers", "mushrooms", "moss", "mud", "snow", "rain", "rainbow", "sun", "sunlight",
    "moon", "moonlight", "stars", "starlight", "dawn", "dusk", "morning", "evening",
    "night", "overnight", "tonight", "day", "today", "indoors", "walls", "roof",
})


@pytest.mark.parametrize("text", HAPPENINGS)
def test_a_happening_names_no_ground_weather_or_hour(text: str) -> None:
    words = set(re.findall(r"[a-z]+", text.lower()))
    assert not words & PLACE_BOUND, (text, sorted(words & PLACE_BOUND))


def test_the_guard_would_catch_the_old_texts() -> None:
    old = "A flock of starlings wheels overhead and settles in the trees, chattering loudly."
    assert set(re.findall(r"[a-z]+", old.lower())) & PLACE_BOUND == {"trees"}
