"""The observer's words for a world's lineage (storage/lineage.py), with no Textual.

    lineage = world_lineage(api.history)           # read once, when the observer opens
    origin_words(lineage)      # the header's part: "forked from parent at t77"
    past_words(lineage, 40)    # a past tick's note: "lived in parent, before it was forked at t77"
    trouble_words(lineage)     # one line for a warning, or None
    chain_words(lineage)       # the whole chain with folders, for the palette

A world that is no fork has no words at all (None, []): nothing new is shown for it.
"""

from __future__ import annotations

from storage.history import HistoryReader
from storage.lineage import Ancestor, WorldLineage, read_lineage_chain

UNREACHABLE = "unreachable"

NO_FORK = WorldLineage()


def world_lineage(history: HistoryReader | None) -> WorldLineage:
    """The lineage of the world `history` reads (that of none without a reader)."""
    if history is None:
        return NO_FORK
    return read_lineage_chain(history.path.parent)


def _link(ancestor: Ancestor) -> str:
    mark = "" if ancestor.reachable else f" ({UNREACHABLE})"
    return f"{ancestor.name}{mark} at t{ancestor.tick}"


def origin_words(lineage: WorldLineage) -> str | None:
    """"forked from b at t50, from a at t30": the chain, nearest first, each ancestor
    unreachable marked so; None for a world that is no fork."""
    if not lineage.is_fork:
        return None
    words = "forked from " + ", from ".join(_link(a) for a in lineage.ancestors)
    if lineage.problem is not None:
        words = ("forked from an unreadable record" if not lineage.ancestors
                 else words + ", from an unreadable record")
    return words


def past_words(lineage: WorldLineage, tick: int) -> str | None:
    """For a past tick the world's parent (or an older ancestor) lived: which one, and the
    fork it reached this world by; None for a tick the world lived itself."""
    owner = lineage.lived_in(tick)
    if owner is None:
        return None
    return f"lived in {owner.name}, before it was forked at t{owner.tick}"


def trouble_words(lineage: WorldLineage) -> str | None:
    """One line for what cannot be read in the chain (the first such thing), saying that
    this world's own history is whole all the same; None when all of it can be read."""
    found = lineage.problems()
    if not found:
        return None
    more = f" (and {len(found) - 1} more in the chain)" if len(found) > 1 else ""
    return (f"Lineage: {found[0]}{more}. This world keeps its own copy of that past, so "
            "looking back still works.")


def chain_words(lineage: WorldLineage) -> list[str]:
    """One line a world in the chain, nearest first, with its folder and fork tick."""
    lines = []
    for ancestor in lineage.ancestors:
        state = ("" if ancestor.reachable else f" — {UNREACHABLE}: {ancestor.problem}; "
                 "what it came from is unknown")
        lines.append(f"forked at tick {ancestor.tick} from {ancestor.folder}{state}")
    if lineage.problem is not None:
        lines.append(lineage.problem)
    return lines
