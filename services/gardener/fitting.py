"""Whether words the Gardener writes fit the place they are told in (issue 29, item 14).

A happening's text is shown to the agents within its radius, as part of what they
perceive. A model wrote "starlings settle into the trees" for agents on a shore; the
rules' own happenings name no ground, weather or hour at all (rules.HAPPENINGS), but a
model's may. So a model's happening is held to the facts of its place before it is
queued: the terrain within sight of the agents who will be told (`AgentHealth.ground`),
the weather and the part of the day (`HealthFigures.weather`, `.period`).

    misfit("Starlings settle into the trees.", ["coast", "sand"], "clear", "morning")
    # "it names trees (forest), and the ground there is coast, sand"

Words are read as in services/narration_check.py (its terrain words and synonyms), with
a few more that only a happening is likely to use (beach, river, leaves; not words
that are verbs as often, such as "streams" or "waves"). A word naming
something the place does not have refuses the text; the cycle then queues a rule-made
happening at the same spot instead (cycle.py), and records why. What is not known
(no agent within reach, figures without weather) cannot be vouched for, so words
needing it are refused too: a plain happening costs little, a false one misleads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from core.gardener import HealthFigures, WorldHappening
from services.narration_check import TERRAIN_WORDS

_EXTRA_GROUND = {
    "beach beaches": "sand coast",
    "surf tide tides": "coast water",
    "river rivers brook brooks creek creeks": "water",
    "reed reeds": "water coast",
    "leaf leaves branch branches bough boughs canopy pine pines oak oaks undergrowth "
    "thicket thickets": "forest",
    "cliff cliffs crag crags": "stone hill",
    "slope slopes": "hill",
}
GROUND_WORDS: Mapping[str, frozenset[str]] = {
    **{word: frozenset({kind}) for word, kind in TERRAIN_WORDS.items()},
    **{word: frozenset(kinds.split()) for words, kinds in _EXTRA_GROUND.items()
       for word in words.split()},
}
"""A word -> the terrain kinds any one of which lets a text name it."""

_SKY: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
"""A word -> (the weathers, the parts of the day) it needs; an empty set: never."""
for _words, _weathers, _periods in (
    ("rain raining rainy rainfall raindrop raindrops drizzle downpour shower showers",
     "rainy", "morning afternoon evening night"),
    ("fog foggy mist misty", "foggy", "morning afternoon evening night"),
    ("sun sunny sunshine sunlight sunlit sunbeam sunbeams", "clear", "morning afternoon evening"),
    ("rainbow rainbows", "clear cloudy rainy", "morning afternoon evening"),
    ("star stars starlight starlit starry moon moonlight moonlit", "clear", "evening night"),
    ("snow snowy snowflake snowflakes blizzard frost hail", "", ""),
    ("dawn sunrise daybreak", "clear cloudy rainy foggy", "morning"),
    ("noon midday", "clear cloudy rainy foggy", "afternoon"),
    ("dusk sunset twilight nightfall", "clear cloudy rainy foggy", "evening"),
    ("midnight tonight", "clear cloudy rainy foggy", "night"),
):
    for _word in _words.split():
        _SKY[_word] = (frozenset(_weathers.split()), frozenset(_periods.split()))
SKY_WORDS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = _SKY

_WORD = re.compile(r"[a-z]+")


def misfit(text: str, ground: Iterable[str], weather: str, period: str) -> str | None:
    """Why `text` does not fit a place with this `ground` (terrain kinds), `weather`
    and `period`, in a few words; None when it names nothing the place lacks."""
    here = frozenset(ground)
    for word in _WORD.findall(text.lower()):
        kinds = GROUND_WORDS.get(word)
        if kinds is not None and not kinds & here:
            there = ", ".join(sorted(here)) or "not known"
            return f"it names {word} ({'/'.join(sorted(kinds))}), and the ground there is {there}"
        sky = SKY_WORDS.get(word)
        if sky is not None and (weather not in sky[0] or period not in sky[1]):
            now = f"{weather or 'unknown weather'}, {period or 'unknown hour'}"
            return f"it names {word}, and it is {now} there"
    return None


def ground_for(figures: HealthFigures, happening: WorldHappening) -> tuple[str, ...]:
    """The terrain within sight of the agents a happening is told to (those within its
    radius, as the engine tells it), sorted; () if it reaches no one."""
    spot, reach = happening.position, happening.radius
    kinds: set[str] = set()
    for agent in figures.agents:
        if max(abs(agent.position.x - spot.x), abs(agent.position.y - spot.y)) <= reach:
            kinds.update(agent.ground)
    return tuple(sorted(kinds))


def happening_misfit(figures: HealthFigures, happening: WorldHappening) -> str | None:
    """Why `happening`'s text does not fit where and when it would be told, or None."""
    return misfit(happening.text, ground_for(figures, happening), figures.weather,
                  figures.period)

