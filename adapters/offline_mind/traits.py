"""Who an agent is, read from its personality text by plain word counting.

The offline mind has no language model, yet Ember should not behave like Sage.
Each trait is scored by counting words (by their beginnings, so "writes",
"written" and "writing" all count for "writ") in the personality text from
config/agents.yaml. Counting is deterministic and cheap, and it is done once
per agent, never per turn.

Four traits weight what an agent chooses among the useful things it could do:

- explorer: walks far, follows the horizon, heads for landmarks;
- maker: gathers, experiments with materials, builds;
- writer: reads and writes signs, names places, keeps its journal;
- social: seeks company, accepts invitations, talks longer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Word beginnings that speak for each trait. A word counts once per trait even
# if several stems match it; "curious" and "restless" count for both explorer
# and maker, as the brief for the offline mind says they should.
EXPLORER_STEMS = (
    "curious", "restless", "wander", "horizon", "explor", "bored", "journey", "travel",
    "advent", "roam", "far", "next", "new", "odd",
)
MAKER_STEMS = (
    "curious", "restless", "hand", "make", "making", "build", "craft", "try", "tinker", "busy",
    "tool", "branch", "stone", "fix", "shap",
)
WRITER_STEMS = (
    "patient", "observ", "writ", "sign", "learn", "understand", "record", "note", "remember",
    "quiet", "careful", "sit", "read", "word", "lost",
)
SOCIAL_STEMS = (
    "warm", "sociab", "meet", "company", "other", "friend", "stor", "talk", "gift", "news",
    "together", "kind", "voice", "trad", "share", "people",
)

_WORD = re.compile(r"[a-z]+")

BASE = 0.15
"""Every agent has a little of every trait: nobody never explores or never speaks."""
PER_WORD = 0.17
"""Each matching word adds this much, up to 1.0."""


@dataclass(frozen=True, slots=True)
class Traits:
    """How strongly each inclination shows, each in [BASE, 1.0]."""

    explorer: float
    maker: float
    writer: float
    social: float

    def __post_init__(self) -> None:
        for name in ("explorer", "maker", "writer", "social"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"trait {name} must be within 0..1, got {value}")

    @property
    def dominant(self) -> str:
        """The strongest trait's name (ties go to the earlier one in field order)."""
        pairs = (("explorer", self.explorer), ("maker", self.maker),
                 ("writer", self.writer), ("social", self.social))
        return max(pairs, key=lambda pair: pair[1])[0]

    def as_dict(self) -> dict[str, float]:
        return {"explorer": self.explorer, "maker": self.maker,
                "writer": self.writer, "social": self.social}


NEUTRAL = Traits(BASE + PER_WORD, BASE + PER_WORD, BASE + PER_WORD, BASE + PER_WORD)
"""For an agent with no personality text: a little of everything."""


def _count(words: list[str], stems: tuple[str, ...]) -> int:
    return sum(1 for word in words if word.startswith(stems))


def score_personality(text: str) -> Traits:
    """The traits a personality text speaks for; empty text gives NEUTRAL."""
    words = _WORD.findall(text.lower()) if isinstance(text, str) else []
    if not words:
        return NEUTRAL

    def level(stems: tuple[str, ...]) -> float:
        return round(min(1.0, BASE + PER_WORD * _count(words, stems)), 3)

    return Traits(level(EXPLORER_STEMS), level(MAKER_STEMS), level(WRITER_STEMS),
                  level(SOCIAL_STEMS))
