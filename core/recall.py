"""Ranking an agent's memories for a question: relevance, recency and importance.

    best = rank(memories, "where did I see stone", now=420, limit=5)

The three signals of the memory stream in the reference design (HermitClaw, after
Generative Agents), each scaled to 0..1 and summed with weights:

- *relevance*: BM25 over the memories' words (lexical: no embeddings, no network);
- *recency*: halves every `half_life` ticks since the memory's tick;
- *importance*: fixed when the memory is made (building something matters more
  than a step on grass; see services/recall.py).

With words in the question, only memories sharing at least one of them are
candidates; an empty question gives the most recent important memories.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

WEIGHTS = (1.0, 0.5, 0.5)
"""Relevance, recency, importance: the question counts most, since the agent asked one."""

STOPWORDS = frozenset(
    "a an and are as at be by did do for from had has have i if in is it its me my of on "
    "or so that the their them then there these they this to was we were what when where "
    "which who why will with you your".split())

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@dataclass(frozen=True, slots=True)
class Memory:
    tick: int
    kind: str
    """did (an action and its outcome), saw (a perception), said, heard."""
    text: str
    importance: float
    """0..1."""


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1]


def rank(
    memories: Sequence[Memory], question: str, now: int, *, limit: int = 5,
    half_life: float = 48.0,
) -> list[tuple[float, Memory]]:
    """The best `limit` memories for the question, best first, with their scores."""
    asked = set(words(question))
    docs = [words(m.text) for m in memories]
    relevance = _bm25(docs, asked) if asked else [0.0] * len(memories)
    top = max(relevance, default=0.0) or 1.0
    scored = []
    for i, memory in enumerate(memories):
        if asked and relevance[i] <= 0:
            continue
        recency = 0.5 ** (max(0, now - memory.tick) / half_life)
        score = (WEIGHTS[0] * relevance[i] / top + WEIGHTS[1] * recency
                 + WEIGHTS[2] * min(1.0, max(0.0, memory.importance)))
        scored.append((score, -memory.tick, i))
    scored.sort(reverse=True)
    return [(round(s, 4), memories[i]) for s, _, i in scored[:max(0, limit)]]


def _bm25(docs: list[list[str]], asked: set[str], k1: float = 1.2, b: float = 0.75
          ) -> list[float]:
    n = len(docs)
    if not n:
        return []
    average = sum(len(d) for d in docs) / n or 1.0
    holding = Counter(w for d in docs for w in set(d) if w in asked)
    idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in holding.items()}
    scores = []
    for doc in docs:
        counts = Counter(w for w in doc if w in idf)
        norm = k1 * (1 - b + b * len(doc) / average)
        scores.append(sum(idf[w] * c * (k1 + 1) / (c + norm) for w, c in counts.items()))
    return scores
