"""Whether a retelling keeps every checkable fact of the text it retells.

    keeps_facts("Sage is 2 cells to the north; forest just to the west.",
                "Two cells north stands Sage, and the woods lie just to the west.")  # True

A language model may retell what the templates say (adapters/claude_mind/narrator.py);
its words are used only if they cannot mislead. The facts read from a text are:

- positions, "(3, 4)", each one fact;
- numbers: digits, number words ("three"), and a single step or cell ("a step",
  "just to the north" is 1 away);
- directions: the four points, the four diagonals ("north-east"), "to the left/right";
- terrain, by kind, with its synonyms ("woods" is forest, "rock" is stone);
- names: capitalised words that are not ordinary sentence openers, and snake_case items;
- distances with their directions ("3 cells to the east" is the pair (3, east));
- quoted text, which must survive verbatim (and is read for nothing else: an agent's
  own words are not parsed).

A retelling keeps the facts when it says each fact at least as often as the source, says
no number, direction, terrain or name the source does not, keeps every (distance,
direction) pair and no other, and keeps what each sentence of the source binds together
within one sentence of its own (so facts cannot trade places between sentences). It may
reorder sentences, use the synonyms above, and add colour that names no such fact.
Anything else is refused, and the template stands: a refusal costs a plainer sentence,
an acceptance that misled would cost the truth.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_NUMBER_WORDS = {
    w: i for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())
} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12}

_POINTS = ("north", "south", "east", "west")
_TERRAIN = {
    "water": "water waters lake lakes pond ponds pool pools",
    "coast": "coast coasts shore shores shoreline",
    "sand": "sand sands sandy dune dunes",
    "grass": "grass grasses grassy grassland grasslands meadow meadows",
    "forest": "forest forests forested woods woodland woodlands tree trees",
    "hill": "hill hills hillside hilly",
    "stone": "stone stones stony rock rocks rocky boulder boulders",
}
TERRAIN_WORDS = {word: kind for kind, words in _TERRAIN.items() for word in words.split()}
"""Every word read as terrain, to its kind (core.terrain.Terrain's values)."""

COMMON = frozenset("""
You Your Yours In Under As With The A An By Beneath Within Indoors Through It Its There
This That These Those Nothing No Somewhere Around Nearby Here Farther Further Far Beyond
Close Near Just Then Now And But So Yet Still Only Once When While Where What Who Whose
Above Below Behind Ahead Before After At On Off Out Over Up Down Inside Outside From To
Into Onto Toward Towards Across Along Past Everything Something Someone Nobody Everyone
Every Each All Some Any Both Either Neither Morning Afternoon Evening Night Noon Dawn Dusk
Rain Fog Mist Cloud Clouds Sun Sunlight Light Dark Darkness Stars Starlight Wind Air Sky
Day Today Tonight Time Weather Soft Quiet Slowly Gently Carefully Again Also Even Not
Is Are Was Were Be Being Been Has Have Had Do Does Did Can Could Will Would May Might
Must Shall Should Let Yes One Ground Land Earth World Grey Gray Golden Bright Pale Cold
Warm Wet Dry Damp Still Steady Low High Above Overhead
""".split())
"""Capitalised words that open sentences (or colour them) rather than name anything."""

_WORD = re.compile(
    r"\(\s*\d+\s*,\s*\d+\s*\)|\d+|[A-Za-z]+(?:_[A-Za-z]+)+|[A-Za-z]+(?:'s)?|[.!?](?=\s|$)|—")
_UNITS = frozenset("cell cells step steps pace paces square squares tile tiles".split())
_NOT_A_COUNT_BEFORE = frozenset(
    "no any some every each the this that which anyone no-one".split())
_NOT_A_COUNT_AFTER = frozenset("of another who which more else".split())
_QUOTED = re.compile(r"(?<![A-Za-z])'([^']{2,}?)'(?![A-Za-z])|\"([^\"]{2,})\"|“([^”]{2,})”")
"""Quoted text; an apostrophe inside a word ("world's") opens no quote."""

Fact = tuple[str, str]
"""(kind, value): ("num", "3"), ("dir", "northeast"), ("terrain", "forest"),
("name", "ember")."""


def facts(text: str, items: frozenset[str] = frozenset()) -> list[list[Fact]]:
    """The facts of `text`, sentence by sentence, in order. `items` are lower-case words
    that name things here (a plural counts as the word)."""
    words = _WORD.findall(text)
    sentences: list[list[Fact]] = [[]]
    start = True  # at a sentence's first word
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        low = w.lower()
        nxt = words[i + 1].lower() if i + 1 < n else ""
        out = sentences[-1]
        if w in ".!?":
            if out:
                sentences.append([])
            start = True
            i += 1
            continue
        if w == "—":
            i += 1
            continue
        if w[0] == "(":  # a position, "(3, 4)": one fact, so x and y cannot trade places
            out.append(("at", ",".join(re.findall(r"\d+", w))))
        elif w.isdigit():
            out.append(("num", str(int(w))))
        elif low in _POINTS:
            point = low
            if low in ("north", "south") and nxt in ("east", "west"):
                point += nxt  # "north east"
                i += 1
            out.append(("dir", point))
        elif (m := re.fullmatch(r"(north|south)-?(east|west)(?:ern|erly|wards?)?", low)) \
                or (m := re.fullmatch(r"(north|south|east|west)(?:ern|erly|wards?)", low)):
            out.append(("dir", "".join(g for g in m.groups() if g)))
        elif low in ("left", "right") and i >= 2 and words[i - 1].lower() in ("the", "your") \
                and words[i - 2].lower() in ("to", "on", "at"):
            out.append(("dir", low))
        elif low == "just" and (nxt in _POINTS or re.fullmatch(
                r"(north|south)-?(east|west)", nxt) or nxt == "to"):
            out.append(("num", "1"))  # "just to the north": one cell away
        elif low in ("a", "an", "single") and nxt in _UNITS and not nxt.endswith("s"):
            out.append(("num", "1"))
        elif low in _NUMBER_WORDS:
            before = words[i - 1].lower() if i else ""
            if low == "one" and (before in _NOT_A_COUNT_BEFORE or nxt in _NOT_A_COUNT_AFTER):
                pass
            elif low == "dozen" and before not in ("a", "one"):
                pass
            elif low != "dozen" or not out or out[-1] != ("num", "1"):
                out.append(("num", str(_NUMBER_WORDS[low])))
            else:
                out[-1] = ("num", "12")  # "a dozen"
        elif "_" in w:
            out.append(("name", low))
        elif low in items or (low[-1:] == "s" and low[:-1] in items
                              and low not in TERRAIN_WORDS):  # "woods" is forest
            out.append(("name", low if low in items else low[:-1]))
        elif w[0].isupper() and not start and low not in TERRAIN_WORDS:
            if w.removesuffix("'s") not in COMMON:
                out.append(("name", low.removesuffix("'s")))
        elif low in TERRAIN_WORDS:
            out.append(("terrain", TERRAIN_WORDS[low]))
        elif w[0].isupper() and start and w.removesuffix("'s") not in COMMON:
            out.append(("name?", low.removesuffix("'s")))  # a name, or just an opener
        start = False
        i += 1
    if not sentences[-1]:
        sentences.pop()
    return sentences


def _settle(sentences: list[list[Fact]], names: set[str]) -> list[list[Fact]]:
    """Sentence openers that are names elsewhere (or given) count as names; the rest
    are ordinary words."""
    return [[("name", v) if k == "name?" else (k, v) for k, v in s
             if k != "name?" or v in names] for s in sentences]


def _pairs(text: str) -> Counter[tuple[str, str]]:
    """(distance, direction) pairs: a number followed by a direction, with only units and
    "to the" / "away" / "off" between ("3 cells to the east", "two steps north")."""
    found: Counter[tuple[str, str]] = Counter()
    for m in _PAIR.finditer(text.lower()):
        amount, point = m.group("n"), m.group("d")
        value = (str(int(amount)) if amount.isdigit()
                 else "1" if amount in ("a", "an", "single", "just") else
                 str(_NUMBER_WORDS.get(amount, amount)))
        found[value, point.replace("-", "").replace(" ", "")] += 1
    return found


_PAIR = re.compile(
    r"\b(?P<n>\d+|" + "|".join(_NUMBER_WORDS) + r"|an?|single|just)"
    r"(?:\s+(?:more\s+)?(?:cells?|steps?|paces?|squares?|tiles?))?(?:\s+away)?"
    r"(?:\s+(?:to\s+the|toward\s+the|towards\s+the|off\s+to\s+the|to|off))?\s+"
    r"(?P<d>(?:north|south)[- ]?(?:east|west)|north|south|east|west)\b")


def keeps_facts(source: str, told: str, *, names: Iterable[str] = (),
                items: Iterable[str] = ()) -> bool:
    """Whether `told` keeps every checkable fact of `source` and adds none (see the module
    docstring). `names` are further words that must survive (an item's or agent's name
    from the action's data); a lower-case one is counted like any other fact, and so are
    the `items` (the names of things in this world: "wood" swapped for "clay" is caught
    wherever it stands)."""
    lowered = told.lower()
    for group in _QUOTED.findall(source):
        quote = next(q for q in group if q)
        if quote.lower() not in lowered:
            return False
    for name in names:
        if name and not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name.lower())}", lowered):
            return False
    # Quoted text (an agent's words) is kept verbatim above and read for nothing else.
    names = tuple(names)
    items = frozenset(n for n in (*names, *items)
                      if n.isalpha() and n.islower() and n not in TERRAIN_WORDS)
    raw_src = facts(_QUOTED.sub("“”", source), items)
    raw_told = facts(_QUOTED.sub("“”", told), items)
    known = {v for s in raw_src for k, v in s if k == "name"}
    known |= {v for s in raw_src for k, v in s if k == "name?"}
    src = _settle(raw_src, known)
    got = _settle(raw_told, known)
    want = Counter(f for s in src for f in s)
    have = Counter(f for s in got for f in s)
    if any(have[f] < count for f, count in want.items()):
        return False  # a fact lost, or said fewer times
    if any(f not in want for f in have):
        return False  # a number, direction, terrain or name the source never gave
    sent_pairs, told_pairs = _pairs(_QUOTED.sub("“”", source)), _pairs(_QUOTED.sub("“”", told))
    if any(told_pairs[p] < c for p, c in sent_pairs.items()) or not set(told_pairs) <= set(
            sent_pairs):
        return False  # a distance moved to another direction
    if not _matched(src, got):
        return False  # facts one sentence binds together, told apart
    # A sentence naming two or more directions keeps them in order with what it names
    # ("from west to east", "Sage to the north and Ash to the east").
    for s in src:
        if len({v for k, v in s if k == "dir"}) > 1:
            order = [f for f in s if f[0] in ("dir", "at")]
            if not any(_in_order(order, [f for f in t if f[0] in ("dir", "at")]) for t in got):
                return False
    return True


def _matched(src: list[list[Fact]], got: list[list[Fact]]) -> bool:
    """Whether each source sentence's facts are all in one told sentence, a told sentence
    holding several source sentences only if it holds all their facts (each fact used
    once): largest sentences first, each into the told one it fills most closely."""
    left = [Counter(s) for s in got]
    for need in sorted((Counter(s) for s in src if len(set(s)) > 1),
                       key=lambda c: -c.total()):
        fits = [c for c in left if not need - c]
        if not fits:
            return False
        best = min(fits, key=lambda c: (c - need).total())
        best.subtract(need)
    return True


def _in_order(wanted: list[Fact], sentence: list[Fact]) -> bool:
    """Whether `wanted` is a subsequence of `sentence`."""
    it = iter(sentence)
    return all(f in it for f in wanted)
