"""Ranking memories: relevance to the words asked, then recency and importance."""

from __future__ import annotations

from core.recall import Memory, rank, words


def test_words_drop_case_punctuation_and_filler():
    assert words("Where did I see the STONE, near the Spring?") == ["see", "stone", "near",
                                                                     "spring"]


def test_only_memories_sharing_a_word_are_found_the_closest_match_first():
    memories = [
        Memory(10, "did", "You gather 1 wood from the forest.", 0.4),
        Memory(11, "did", "You gather 1 stone from the rocks by the spring.", 0.4),
        Memory(12, "did", "You walk north onto grass.", 0.1),
    ]
    found = [m.text for _, m in rank(memories, "stone spring", now=12)]
    assert found == ["You gather 1 stone from the rocks by the spring."]


def test_between_equal_matches_the_recent_and_the_important_win():
    old = Memory(0, "did", "You talk with Sage about the river.", 0.5)
    new = Memory(200, "did", "You talk with Sage about the hills.", 0.5)
    built = Memory(0, "did", "You build a shelter; Sage watches.", 1.0)
    ranked = [m for _, m in rank([old, new, built], "Sage", now=200)]
    assert ranked[0] is new
    assert ranked.index(built) < ranked.index(old)


def test_an_empty_question_gives_recent_important_memories():
    memories = [Memory(t, "did", f"thing {t}", 0.2) for t in range(10)]
    memories.append(Memory(5, "did", "You build a shelter.", 1.0))
    top = [m.text for _, m in rank(memories, "", now=10, limit=2)]
    assert top[0] == "You build a shelter." and top[1] == "thing 9"


def test_limit_and_no_memories():
    assert rank([], "anything", now=5) == []
    memories = [Memory(t, "did", "stone", 0.3) for t in range(20)]
    assert len(rank(memories, "stone", now=20, limit=3)) == 3
    assert rank(memories, "stone", now=20, limit=0) == []
