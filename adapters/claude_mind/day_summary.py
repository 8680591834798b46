"""A summary by in-world day: where the agent went, what it made, built and wrote, whom it
met, what was said to it and what it said, within a size limit, older days shorter.

    days = read_days(messages)                  # from a history's oldest turns
    text = fit(merge(parse(summary), days), 8_000)

Made without a model from the text the agent was shown: each perception gives the day
("It is day 3, ...") and the position ("You are at (12, 5)"), a named place or shelter,
who is in sight and in conversation, and what was said since the last turn; each call
and its outcome give what was made, built, written, said and done. A day renders as

    Day 3:
      went: (8, 8) → (9, 8) → (12, 4), Ash Corner → set out for (20, 3)
      made: 4 plank · 2 adobe_brick
      built: you raise a wall of plank on the north side
      wrote: sign: 'hello'
      met: Birch · Cedar
      heard: Birch: hello there · Cedar: shall we build?
      you said: hello (to Birch)
      you thought: The river might be worth a look.
      did: walk ×12 · gather ×3 · examine (failed)

The text is also what is parsed back at the next compaction, so a day folded in two
parts is joined. Each kind of line is bounded even at full detail (the newest dozen or
so). To fit the limit, days are shortened, oldest first, in four steps (fewer lines of
each kind each time, no thoughts after the first), the newest k days spared at step k,
so the older a day the shorter; then the oldest days go whole,
leaving a line that says they are on record. What the agent said or wrote is quoted as
it was (a long line cut with "…"), never reworded, and what is left out is counted
("(+5 more)"); all of it stays in the turn records, which the recall tool searches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FIELDS = ("went", "made", "built", "wrote", "met", "heard", "said", "thought", "did")
LABELS = {"said": "you said", "thought": "you thought"}
SEPS = {"went": " → "}
SEP = " · "
LINE = 160
"""The most of any one item (a thing said, heard, thought) at full detail."""

_HEADER = re.compile(r"^Day (\d+):$|^Before the first day:$")
_FIELD = re.compile(r"^  ([a-z ]+): (.*)$")
_MORE = re.compile(r"^\(\+(\d+) more\)$")
_EARLIER = "Earlier days"
_DAY = re.compile(r"\bday (\d+)\b")
_AT = re.compile(r"You are at \((\d+), (\d+)\)")
_PLACE = re.compile(r"This place is called (.+?)\.(?:\s|$)")
_SHELTER = re.compile(r"inside a shelter called (.+?)\.(?:\s|$)")
_WITH = re.compile(r"You are in an? \w+ conversation with (.+?)\.(?:\s|$)")
_IN_SIGHT = re.compile(r"^[A-Z] ([A-Z][\w'-]*): .*\bat \(\d+, \d+\)", re.M)
_MADE = re.compile(r"\byou make (\d+ [\w_]+)")
_TO = re.compile(r"\(to ([^)]+)\)|talking with ([^;.]+)|conversation of ([^;.]+)")
_NAME_LIST = re.compile(r",\s*|\s+and\s+")
_COUNT = re.compile(r"^(.*) ×(\d+)$")
MOVES = frozenset({"walk", "approach", "journey"})
MAKES = frozenset({"combine", "work", "apply"})
BUILDS = frozenset({"build_shelter", "place_wall", "place_door", "remove_wall", "place_item"})


@dataclass
class Day:
    """One in-world day's entry (`day` None: before any day was read)."""

    day: int | None
    items: dict[str, list[str]] = field(default_factory=lambda: {f: [] for f in FIELDS})
    more: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIELDS, 0))

    def add(self, name: str, item: str) -> None:
        item = " ".join(item.split())
        if not item:
            return
        items = self.items[name]
        if name == "went" and items and items[-1] == item:
            return  # stood still
        if name == "met" and item in items:
            return
        if name == "did":
            self.count(item, 1)
            return
        items.append(item)

    def count(self, what: str, n: int) -> None:
        items = self.items["did"]
        for i, item in enumerate(items):
            m = _COUNT.match(item)
            name, had = (m.group(1), int(m.group(2))) if m else (item, 1)
            if name == what:
                items[i] = f"{what} ×{had + n}"
                return
        items.append(what if n == 1 else f"{what} ×{n}")

    def absorb(self, other: Day) -> None:
        for name in FIELDS:
            for item in other.items[name]:
                if name == "did":
                    m = _COUNT.match(item)
                    self.count(*((m.group(1), int(m.group(2))) if m else (item, 1)))
                else:
                    self.add(name, item)
            self.more[name] += other.more[name]

    def render(self) -> str:
        head = "Before the first day:" if self.day is None else f"Day {self.day}:"
        lines = [head]
        for name in FIELDS:
            items = list(self.items[name])
            if self.more[name]:
                items.append(f"(+{self.more[name]} more)")
            if items:
                lines.append(f"  {LABELS.get(name, name)}: {SEPS.get(name, SEP).join(items)}")
        return "\n".join(lines)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


# ------------------------------------------------------------------ reading a history


def read_days(messages: Iterable[Mapping[str, Any]], day: int | None = None) -> list[Day]:
    """The days the messages tell of, in order (`day`: the day before the first message)."""
    days: list[Day] = [Day(day)]
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for message in messages:
        role = message.get("role")
        for block in message.get("content", ()):
            kind = block.get("type")
            if kind == "text" and role == "user":
                text = str(block.get("text", ""))
                if text.startswith(SUMMARY_MARK):
                    continue
                m = _DAY.search(text.split("\n", 1)[0])
                if m and int(m.group(1)) != days[-1].day:
                    days.append(Day(int(m.group(1))))
                _read_perception(days[-1], text)
            elif kind == "text":
                days[-1].add("thought", _cut(" ".join(str(block.get("text", "")).split()), LINE))
            elif kind == "tool_use":
                calls[str(block.get("id"))] = (str(block.get("name")), block.get("input") or {})
            elif kind == "tool_result":
                name, args = calls.get(str(block.get("tool_use_id")), ("?", {}))
                _read_outcome(days[-1], name, args if isinstance(args, Mapping) else {},
                              _result_text(block), bool(block.get("is_error")))
    return [d for d in days if any(d.items.values())]


SUMMARY_MARK = "What you remember from before"
"""How a summary block begins (compaction.SUMMARY_HEAD): never read as a perception."""


def _read_perception(day: Day, text: str) -> None:
    at = _AT.search(text)
    if at:
        where = f"({at.group(1)}, {at.group(2)})"
        names = [m.group(1) for m in (_PLACE.search(text), _SHELTER.search(text)) if m]
        day.add("went", ", ".join([where, *names]))
    with_ = _WITH.search(text)
    for name in _names(with_.group(1)) if with_ else ():
        day.add("met", name)
    for name in _IN_SIGHT.findall(text):
        day.add("met", name)
    if "Since your last turn:" in text:
        entries: list[list[str]] = []
        for line in text.split("Since your last turn:", 1)[1].split("\n")[1:]:
            m = re.match(r"^  (\S[^:]*): (.*)$", line)
            if m:
                entries.append([m.group(1), m.group(2)])
            elif line.startswith("    ") and entries:  # a said line's continuation
                entries[-1][1] += " " + line.strip()
            else:
                break
        for speaker, words in entries:
            if speaker != "You":  # the agent's own words are read from its calls
                day.add("heard", _cut(f"{speaker}: {words}", LINE))
                day.add("met", speaker)


def _names(text: str) -> list[str]:
    return [n.strip() for n in _NAME_LIST.split(text) if n.strip()]


def _read_outcome(day: Day, name: str, args: Mapping[str, Any], told: str,
                  failed: bool) -> None:
    if failed:
        day.add("did", f"{name} (failed)")
        return
    message = told.split(" — ", 1)[1] if " — " in told else told
    for m in _TO.finditer(message):
        for who in _names(next(g for g in m.groups() if g)):
            day.add("met", who)
    if name in MAKES:
        made = _MADE.findall(message)
        for item in made or [_cut(message, 80)]:
            day.add("made", item)
    elif name in BUILDS:
        day.add("built", _cut(message.rstrip("."), 100))
    elif name == "write_sign":
        day.add("wrote", _cut(f"sign: {json.dumps(str(args.get('text', '')), ensure_ascii=False)}",
                              LINE))
    elif name == "name_place":
        place = str(args.get("place_name", ""))
        day.add("wrote", _cut(f"named a place: {json.dumps(place, ensure_ascii=False)}", LINE))
    elif name == "speak":
        to = re.search(r"\(to ([^)]+)\)", message)
        words = _cut(" ".join(str(args.get("message", "")).split()), LINE)
        day.add("said", words + (f" (to {to.group(1)})" if to else ""))
    elif name == "journey":
        set_out = re.search(r"set out for (\([^)]*\)|[^:;]+)", message)
        day.add("went", f"set out for {set_out.group(1)}" if set_out else "set out")
    elif name == "give":
        day.add("did", _cut(message.replace("you give", "gave", 1), 80))
    elif name in ("invite", "join_conversation"):
        who = args.get("invitee") or args.get("participant")
        if isinstance(who, str) and who:
            day.add("met", who)
    if name not in MAKES | BUILDS | {"give", "write_sign", "name_place", "speak"}:
        day.add("did", name)


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    return " ".join(str(content).split())


# ------------------------------------------------------------------ the summary's text


def parse(summary: str) -> tuple[list[str], list[Day]]:
    """(lines before the days: an "Earlier days" line or an older summary's lines, the
    days), from a summary this module wrote (any other text is kept as lines)."""
    before: list[str] = []
    days: list[Day] = []
    for line in summary.splitlines():
        head = _HEADER.match(line)
        if head:
            days.append(Day(int(head.group(1)) if head.group(1) else None))
            continue
        m = _FIELD.match(line)
        name = next((f for f in FIELDS if LABELS.get(f, f) == m.group(1)), None) if m else None
        if days and m and name:
            parts = m.group(2).split(SEPS.get(name, SEP))
            if parts and (more := _MORE.match(parts[-1])):
                days[-1].more[name] += int(more.group(1))
                parts = parts[:-1]
            days[-1].items[name].extend(parts)
        elif not days:
            before.append(line)
    return before, days


def merge(old: list[Day], new: list[Day]) -> list[Day]:
    """The old days, then the new; a day told in both is one entry."""
    days = list(old)
    for day in new:
        if days and (days[-1].day == day.day or day.day is None):
            days[-1].absorb(day)
        else:
            days.append(day)
    return days


SHORTER = {
    0: ({"thought": 10, "heard": 12, "said": 12, "made": 12, "built": 12, "wrote": 12,
         "did": 12, "went": 16, "met": 99}, LINE),
    1: ({"thought": 2, "heard": 4, "said": 4, "made": 6, "built": 6, "wrote": 6, "did": 6,
         "went": 8, "met": 99}, 80),
    2: ({"thought": 0, "heard": 2, "said": 2, "made": 3, "built": 2, "wrote": 2, "did": 0,
         "went": 4, "met": 99}, 60),
    3: ({"thought": 0, "heard": 1, "said": 1, "made": 1, "built": 1, "wrote": 1, "did": 0,
         "went": 2, "met": 99}, 48),
    4: ({"thought": 0, "heard": 1, "said": 0, "made": 1, "built": 1, "wrote": 1, "did": 0,
         "went": 2, "met": 99}, 36),
}
"""Per level of shortening: how many of each kind of line stay (the newest; for places,
the first and last and the named ones between), and how long each may be. Level 0 is a
day at full detail, still bounded; from level 2 thoughts and the tally of calls go
without a count."""
UNCOUNTED = frozenset({"thought", "did"})


def _shorten(day: Day, level: int) -> Day:
    """The day with less detail (`SHORTER`); what goes is counted as "(+N more)"."""
    keep, width = SHORTER[level]
    out = Day(day.day)
    for name in FIELDS:
        items = day.items[name]
        n = keep[name]
        if name == "went" and len(items) > n:
            named = [i for i in items[1:-1] if re.search(r"\)\s*,|set out", i)]
            kept = [items[0], *named[len(named) - (n - 2):], items[-1]] if n > 2 else [
                items[0], items[-1]]
        elif name == "did":
            kept = sorted(items, key=lambda i: -_times(i))[:n]
        else:
            kept = items[-n:] if n else []
        out.items[name] = [_cut(i, width) for i in kept]
        out.more[name] = day.more[name] + len(items) - len(kept)
        if not kept and level >= 2 and name in UNCOUNTED:
            out.more[name] = 0
    return out


def _times(item: str) -> int:
    m = _COUNT.match(item)
    return int(m.group(2)) if m else 1


def fit(before: list[str], days: list[Day], most: int) -> str:
    """The summary's text within `most` characters: an older summary's own lines go
    first, then days are shortened, oldest first, a step at a time (`SHORTER`; step k
    spares the newest k days), then the oldest days are left out whole, and last the
    days left are shortened further."""
    earlier = next((line for line in before if line.startswith(_EARLIER)), None)
    legacy = [line for line in before if not line.startswith(_EARLIER)]
    full, shown = list(days), [_shorten(d, 0) for d in days]

    def text() -> str:
        head = [earlier] if earlier else []
        return "\n".join([*head, *legacy, *(d.render() for d in shown)])

    if len(text()) > most and legacy:
        room = most - (len(text()) - len("\n".join(legacy)))
        legacy = newest_lines(legacy, room).splitlines() if room > 0 else []
    levels = [level for level in SHORTER if level]
    for level in levels:  # level k spares the newest k days, so older days are shorter
        for i in range(len(shown) - level):
            if len(text()) <= most:
                return text()
            shown[i] = _shorten(full[i], level)
    while len(shown) > 1 and len(text()) > most:
        gone = shown.pop(0)
        full.pop(0)
        legacy = []
        earlier = _earlier(earlier, gone)
    for level in levels:  # the days left, newest last
        for i in range(len(shown)):
            if len(text()) > most:
                shown[i] = _shorten(full[i], level)
    if len(text()) > most:  # a limit too small for even one day: its newest lines
        return newest_lines(text().splitlines(), most)
    return text()


def _earlier(line: str | None, gone: Day) -> str:
    """The line standing for the days left out, with `gone` among them."""
    known = [int(d) for d in re.findall(r"\d+", (line or "").split(":", 1)[0])]
    if gone.day is not None:
        known.append(gone.day)
    span = (f" (days {min(known)}-{max(known)})" if len(set(known)) > 1
            else f" (day {known[0]})" if known else "")
    return (f"{_EARLIER}{span}: left out to keep this short; every turn is on record "
            f"and recall can search it.")


def newest_lines(lines: list[str], most: int) -> str:
    """The newest lines that fit in `most` characters (older ones dropped first)."""
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > most:
            break
        kept.append(line)
    return "\n".join(reversed(kept))
