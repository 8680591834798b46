"""What an offline agent says and writes: short lines shaped by its strongest trait.

Nothing here is clever: templates filled with what the agent is doing, has made
or has seen, picked by the turn's random source so that two turns rarely say
the same thing. Every line stays short (speech under ~120 characters, signs
under ~160), well inside the world's limits, because a long speech from a mind
that has nothing long to say would only be noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from adapters.offline_mind.rng import TurnRandom


class Topic(NamedTuple):
    """What the agent could talk about right now.

    A NamedTuple, not a frozen dataclass: one is made on every turn that speaks (a
    quarter of all turns), and a frozen dataclass of eight fields costs five times as
    much to make."""

    me: str
    other: str
    trait: str
    """The speaker's dominant trait: explorer, maker, writer or social."""
    place: str = ""
    """A landmark it has visited or can see, or ""."""
    made: str = ""
    """Something it has learned to make, or ""."""
    heading: str = ""
    terrain: str = ""
    has_home: bool = False


_GREETINGS = {
    "explorer": ("Hello, {other}! I didn't expect anyone out this way.",
                 "{other}! Good to see you. I've been walking {heading} for a while."),
    "maker": ("Hello, {other}. Mind the shavings, I've been working.",
              "Hi {other}! Come look at what I've been making."),
    "writer": ("Good day, {other}.", "Hello, {other}. Sit a while, if you like."),
    "social": ("{other}! Oh, it's so good to see someone.",
               "Hello, hello, {other}! Come, tell me where you've been."),
}

_LINES = {
    "explorer": ("I saw {place} from a distance. Have you been there?",
                 "The land keeps changing to the {heading}. I want to see what's next.",
                 "There's {terrain} all around here. I like not knowing what's over the rise.",
                 "I never stay long anywhere. Is that strange?"),
    "maker": ("I worked out how to make {made}. You just have to try things.",
              "Every branch here looks like a handle to me.",
              "If you find good stone, tell me. I want to try something with it.",
              "I'd rather fail at making something than wonder about it."),
    "writer": ("I left a few words on a sign, for whoever comes after.",
               "{place} is worth sitting with, I think.",
               "The {terrain} here has a quiet to it.",
               "I try to write down what I learn, so it isn't lost."),
    "social": ("Have you met anyone else out here?",
               "I love hearing where people have been. Tell me about {place}?",
               "News travels slowly here. I'm happy to carry some.",
               "Being alone too long makes me restless. Thank you for stopping."),
}

_HOME_LINES = ("I built a small shelter. You'd be welcome in it.",
               "I have a little hut now, walls and a door. It feels like a start.")

_FAREWELLS = ("I'll be on my way. Take care, {other}.",
              "Good talking with you, {other}. Until next time.",
              "I should get back to it. Farewell, {other}!",
              "Safe walking, {other}.")

_GOODNIGHTS = ("It's getting dark. Good night, {other}.",
               "I'm going to sleep. Rest well, {other}.")


def _fill(template: str, topic: Topic) -> str:
    return template.format(
        other=topic.other, me=topic.me, place=topic.place or "the hills",
        made=topic.made.replace("_", " ") or "planks", heading=topic.heading or "north",
        terrain=topic.terrain or "grass",
    )


def greeting(topic: Topic, rng: TurnRandom) -> str:
    return _fill(rng.choice(_GREETINGS.get(topic.trait, _GREETINGS["social"])), topic)


def remark(topic: Topic, rng: TurnRandom, index: int | None = None) -> str:
    """A line of conversation about what the speaker is doing or has seen.

    `index` picks the line (modulo how many fit the topic), so a conversation can
    walk through different lines turn by turn; None picks at random.
    """
    key = (topic.trait, bool(topic.has_home), bool(topic.place), bool(topic.made))
    options = _REMARKS.get(key)
    if options is None:
        options = _REMARKS[key] = _remarks(*key)
    line = rng.choice(options) if index is None else options[index % len(options)]
    return _fill(line, topic)


def _remarks(trait: str, has_home: bool, place: bool, made: bool) -> tuple[str, ...]:
    """The lines `remark` picks from, for a topic of this shape."""
    options: list[str] = list(_LINES.get(trait, _LINES["social"]))
    if has_home:
        options.extend(_HOME_LINES)
    if not place:
        options = [o for o in options if "{place}" not in o] or options
    if not made:
        options = [o for o in options if "{made}" not in o] or options
    return tuple(options)


_REMARKS: dict[tuple[str, bool, bool, bool], tuple[str, ...]] = {}
"""`_remarks` by topic shape, made once each (a few dozen shapes at most)."""


def farewell(topic: Topic, rng: TurnRandom) -> str:
    return _fill(rng.choice(_FAREWELLS), topic)


def goodnight(topic: Topic, rng: TurnRandom) -> str:
    return _fill(rng.choice(_GOODNIGHTS), topic)


# ------------------------------------------------------------------ signs and names

RETURNING = "I come back here every evening."
"""What a sign at an agent's haunt says; whoever reads it knows where to find company."""

LIVES_HERE = ("lives here", "shelter", "home of")
"""Words of a home sign (any of them, ignoring case)."""


def landmark_sign(me: str, landmark: str, day: int, note: str, rng: TurnRandom, *,
                  haunt: bool = False) -> str:
    opening = rng.choice(("{me} came to {place} on day {day}.",
                          "{place}. {me} rested here on day {day}.",
                          "{me} was here, at {place}, on day {day}."))
    text = opening.format(me=me, place=landmark, day=day)
    text = text[0].upper() + text[1:]
    return " ".join(part for part in (text, RETURNING if haunt else "", note) if part)


def says_someone_returns(text: str) -> bool:
    """Whether a sign says its writer comes back to this place (a haunt or a home)."""
    lowered = text.lower()
    return RETURNING.lower() in lowered or any(word in lowered for word in LIVES_HERE)


def home_sign(me: str, rng: TurnRandom) -> str:
    return rng.choice((f"{me}'s shelter. Come in by the south door; rest if you need to.",
                       f"{me} lives here. Knock on the wall, and you are welcome.",
                       f"Home of {me}. Built with what the land gave."))


def spot_sign(me: str, note: str, rng: TurnRandom) -> str:
    opening = rng.choice(("{me} stopped here and looked around.",
                          "A good place to stand still. - {me}",
                          "{me} passed this way."))
    return f"{opening.format(me=me)} {note}".strip()


_HOME_NAMES = ("{me}'s Hearth", "{me}'s Rest", "{me}'s Hut", "{me}'s Corner")
_ADJECTIVES = ("Quiet", "Windy", "Bright", "Still", "Green", "Little", "Far", "Old", "Mossy")
_NOUNS = {
    "grass": ("Meadow", "Field", "Green"),
    "forest": ("Grove", "Pines", "Wood"),
    "hill": ("Rise", "Knoll", "Brow"),
    "stone": ("Rocks", "Crag", "Steps"),
    "sand": ("Sands", "Dunes", "Strand"),
    "coast": ("Shallows", "Shore", "Landing"),
}


def home_name(me: str, rng: TurnRandom) -> str:
    return rng.choice(_HOME_NAMES).format(me=me)


def place_name(terrain: str, rng: TurnRandom) -> str:
    """A name for a spot: an adjective and a noun that suits the ground."""
    nouns = _NOUNS.get(terrain, ("Crossing", "Place", "Meeting"))
    return f"{rng.choice(_ADJECTIVES)} {rng.choice(nouns)}"


def surroundings_note(counts: Sequence[tuple[str, int]]) -> str:
    """A short note from terrain counts in view, biggest first: "Forest and grass around.\""""
    kinds = [name for name, n in counts if n][:2]
    if not kinds:
        return ""
    if len(kinds) == 1:
        return f"{kinds[0].capitalize()} all around."
    return f"{kinds[0].capitalize()} and {kinds[1]} around."


# ------------------------------------------------------------------ files

def journal_entry(me: str, day: int, diary: Sequence[str], trait: str, rng: TurnRandom) -> str:
    """A few lines for journal.md: the day's notable things, or a quiet day."""
    if diary:
        body = "; ".join(diary[-4:])
        closing = rng.choice(("Tired, in a good way.", "Tomorrow, more.",
                              "I want to remember this.", "A full day."))
        text = f"Today: {body}. {closing}"
    else:
        text = rng.choice(("A quiet day. I mostly watched the light change.",
                           "Not much happened, and that was fine.",
                           "I walked and looked. Nothing to report but the sky."))
    if trait == "writer":
        text += " Writing it down so it is not lost."
    return f"\n## Day {day}\n{text}\n"


def discovery_entry(key: str, output: str, quantity: int) -> str:
    """One line for discoveries.md from a recipe key like "work:wood:split"."""
    kind, _, rest = key.partition(":")
    if kind == "work":
        item, _, technique = rest.partition(":")
        how = f"{technique} {item}"
    elif kind == "combine":
        how = "combine " + " + ".join(rest.split("+"))
    else:
        tool, _, target = rest.partition(":")
        how = f"use {tool} on {target}"
    return f"- {how} -> {quantity} {output}\n"
