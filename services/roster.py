"""Who lives in a new world: the agents of agents.yaml, and more if asked for.

`--agents N` with N larger than agents.yaml gives the extra agents generated
names and personalities, drawn from the seeded generator so a world's seed
decides them. Personalities describe a temperament and a leaning, never a goal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from config import AgentConfig

NAMES = (
    "Alder", "Birch", "Briar", "Cedar", "Clover", "Dell", "Dune", "Elm", "Fern", "Finch",
    "Flint", "Glen", "Hazel", "Heath", "Heron", "Ivy", "Juniper", "Kestrel", "Lark",
    "Linden", "Maple", "Marsh", "Moss", "Nettle", "Oak", "Otter", "Pebble", "Pine", "Quill",
    "Reed", "Rowan", "Rush", "Sedge", "Sorrel", "Tansy", "Teal", "Thistle", "Vale",
    "Willow", "Wren", "Yarrow",
)

TEMPERAMENTS = (
    "You are gentle and unhurried, and you notice small things others walk past.",
    "You are bold and talkative, quick to laugh and quick to try.",
    "You are thoughtful and a little shy; you warm to others slowly and for good.",
    "You are restless and curious, always wondering what lies past the next hill.",
    "You are steady and practical, and you like things that are made to last.",
    "You are playful and full of questions, and you rarely ask the same one twice.",
    "You are quiet and watchful, and you find peace in places where nothing happens.",
    "You are warm and generous, and you remember what others care about.",
)

LEANINGS = (
    "Water draws you: lakes, shallows and the sound of a spring.",
    "You love to build, and a well-placed wall pleases you for days.",
    "You like maps and names, and a place feels real to you once it has one.",
    "You keep a careful journal, and you think best with something to write on.",
    "You are fond of woods and the things that grow in them.",
    "High ground calls you; you like to see far.",
    "You like company, and a conversation is the best part of your day.",
    "Making things with your hands is how you think.",
)


@dataclass(frozen=True)
class Resident:
    name: str
    model_id: str
    personality: str
    generated: bool


def roster(configured: Sequence[AgentConfig], count: int | None, seed: int) -> list[Resident]:
    """`count` residents (all configured ones if None): configured first, then generated."""
    if count is None:
        count = len(configured)
    if count < 1:
        raise ValueError(f"a world needs at least one agent, got {count}")
    chosen = [
        Resident(a.name, a.model_id, a.personality, generated=False)
        for a in configured[:count]
    ]
    extra = count - len(chosen)
    if extra <= 0:
        return chosen
    rng = np.random.default_rng([seed, 2])
    model_id = configured[0].model_id
    taken = {a.name.casefold() for a in configured}
    names = [n for n in NAMES if n.casefold() not in taken]
    order = rng.permutation(len(names)).tolist() if names else []
    for i in range(extra):
        name = _fresh_name(names, order, i, taken)
        taken.add(name.casefold())
        personality = (
            f"{TEMPERAMENTS[int(rng.integers(len(TEMPERAMENTS)))]} "
            f"{LEANINGS[int(rng.integers(len(LEANINGS)))]}"
        )
        chosen.append(Resident(name, model_id, personality, generated=True))
    return chosen


def _fresh_name(names: list[str], order: list[int], i: int, taken: set[str]) -> str:
    """The i-th generated name: a plain one while they last, then numbered ones
    (Alder2, Alder3, ...), skipping any name already taken, ignoring case."""
    if i < len(names):
        candidate = names[order[i]]
        if candidate.casefold() not in taken:
            return candidate
    base = names[order[i % len(names)]] if names else "Wanderer"
    number = max(2, 1 + i // max(len(names), 1))
    while f"{base}{number}".casefold() in taken:
        number += 1
    return f"{base}{number}"
