"""The observer's words for a world's lineage (observe/lineage.py): none for a world that
is no fork, the chain nearest first, unreachable worlds marked, one line of trouble."""

from __future__ import annotations

from observe.lineage import chain_words, origin_words, past_words, trouble_words
from storage.lineage import Ancestor, WorldLineage

B = Ancestor("/worlds/b/data", 50, "b" * 32)
A = Ancestor("/worlds/a/data", 30, "a" * 32)
GONE = Ancestor("/worlds/gone/data", 50, "c" * 32, "no world is there any more")


def test_a_world_that_is_no_fork_has_no_words() -> None:
    none = WorldLineage()
    assert not none.is_fork
    assert origin_words(none) is None and past_words(none, 3) is None
    assert trouble_words(none) is None and chain_words(none) == []


def test_a_chain_is_named_nearest_first_and_each_tick_by_who_lived_it() -> None:
    lineage = WorldLineage((B, A))
    assert origin_words(lineage) == "forked from b at t50, from a at t30"
    assert past_words(lineage, 50) is None  # the fork's own first tick
    assert past_words(lineage, 49) == "lived in b, before it was forked at t50"
    assert past_words(lineage, 29) == "lived in a, before it was forked at t30"
    assert chain_words(lineage) == ["forked at tick 50 from /worlds/b/data",
                                    "forked at tick 30 from /worlds/a/data"]
    assert trouble_words(lineage) is None


def test_a_folder_not_named_data_is_named_itself() -> None:
    assert Ancestor("/worlds/branch-7", 4, None).name == "branch-7"


def test_what_cannot_be_read_is_marked_and_said_in_one_line() -> None:
    lineage = WorldLineage((GONE,))
    assert origin_words(lineage) == "forked from gone (unreachable) at t50"
    said = trouble_words(lineage)
    assert said is not None and "\n" not in said
    assert said.startswith("Lineage: the parent world at /worlds/gone/data cannot be read: "
                           "no world is there any more")
    assert "looking back still works" in said
    assert "what it came from is unknown" in chain_words(lineage)[0]


def test_a_record_that_cannot_be_read_is_a_fork_of_unknown_origin() -> None:
    lineage = WorldLineage((B,), "/worlds/b/data/lineage.json is damaged (...)")
    assert lineage.is_fork
    assert origin_words(lineage) == "forked from b at t50, from an unreadable record"
    assert origin_words(WorldLineage((), "x")) == "forked from an unreadable record"
    assert trouble_words(lineage).startswith("Lineage: /worlds/b/data/lineage.json is damaged")
    two = WorldLineage((GONE,), "damaged")
    assert "(and 1 more in the chain)" in trouble_words(two)
