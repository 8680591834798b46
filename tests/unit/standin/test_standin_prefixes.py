"""The stand-in's fast prefix hashes (thinking.Prefixes) are the plain ones (prefix_hash)."""

from __future__ import annotations

from tests.standin import thinking
from tests.standin.shape import blocks

BODY = {
    "tools": [{"name": "walk", "description": "Walk. ☀ \"quoted\" cache_control",
               "input_schema": {"type": "object", "properties": {"d": {"enum": ["n", "s"]}}},
               "cache_control": {"type": "ephemeral"}},
              {"name": "look", "description": "", "input_schema": {"type": "object"}}],
    "system": [{"type": "text", "text": "You are Ember. 🌲🌊 \\u00e9",
                "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    "messages": [
        {"role": "user", "content": "a plain string"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "x.y"},
            {"type": "text", "text": "{\"cache_control\": 1}"},
            {"type": "tool_use", "id": "t1", "name": "walk", "input": {"d": "n", "z": [1, 2]}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "walked",
             "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "ünïcode"}]},
    ],
}


def _bodies():
    yield BODY
    yield {**BODY, "system": "a system string"}
    yield {"messages": BODY["messages"]}  # neither tools nor system
    yield {**BODY, "tools": [], "system": []}


def test_every_prefix_hash_is_the_plain_one():
    for body in _bodies():
        fast = thinking.Prefixes(body)
        messages = body["messages"]
        for i in range(len(messages) + 1):
            content = messages[i]["content"] if i < len(messages) else []
            heads = range(len(content) + 1) if isinstance(content, list) else [0]
            for j in heads:
                plain = thinking.prefix_hash(body.get("tools"), body.get("system"), messages[:i],
                                             content[:j] if isinstance(content, list) else ())
                assert fast.hash(i, j) == plain, (i, j)


def test_each_blocks_text_is_its_canonical_json():
    for body in _bodies():
        fast = thinking.Prefixes(body)
        seen = 0
        for path, block in blocks(body):
            assert fast.text(path) == thinking._slow_canonical(block), path
            seen += 1
        assert seen >= len(body["messages"])


def test_a_changed_block_changes_the_hash_after_it():
    fast = thinking.Prefixes(BODY)
    changed = {**BODY, "messages": [BODY["messages"][0], {
        **BODY["messages"][1], "content": [*BODY["messages"][1]["content"][:1],
                                           {"type": "text", "text": "else"}]}]}
    other = thinking.Prefixes(changed)
    assert other.hash(1, 1) == fast.hash(1, 1)  # the thinking block's own prefix is unchanged
    assert other.hash(2) != fast.hash(2)


def test_canonical_each_is_each_canonical_and_never_stale() -> None:
    """The remembered answers are the items' own, and an item changed in any way (a
    key's order aside, which canonical ignores too) is made canonical afresh."""
    tools = [{"name": "walk", "input_schema": {"type": "object"},
              "cache_control": {"type": "ephemeral"}},
             {"name": "look", "description": "Look around."}]
    first = thinking.canonical_each(tools)
    assert first == [thinking.canonical(t) for t in tools]
    first.append("a caller's change")  # a copy: the remembered list is not the caller's
    assert thinking.canonical_each(tools) == [thinking.canonical(t) for t in tools]
    changed = [{**tools[0], "name": "run"}, tools[1]]
    assert thinking.canonical_each(changed) == [thinking.canonical(t) for t in changed]
    assert thinking.canonical_each(changed) != thinking.canonical_each(tools)
    reordered = [dict(reversed(list(tools[0].items()))), tools[1]]
    assert thinking.canonical_each(reordered) == thinking.canonical_each(tools)
