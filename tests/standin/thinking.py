"""Thinking-block signatures: what a block was issued with, and whether it may come back.

A signature carries its own record (account, model, reply id, position, prefix hash, the
thinking's token count) and an HMAC over that record and the thinking text, so it can be
checked without memory, as the real API checks an opaque signature: any process holding
the secret verifies it, and a changed text or record fails.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_SECRET = b"hearth-standin-thinking-v1"


def canonical(value: Any) -> str:
    """JSON with sorted keys and without cache_control: the bytes a prefix is judged by.
    cache_control only moves the breakpoint; it is no part of what the model read."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if '"cache_control"' not in text:  # most blocks: nothing to strip
        return text
    # A key can only be spelled `"cache_control":` outside a string (inside one, its
    # quotes are escaped), and its value is a flat object: cut it out of the text,
    # which gives what dumping the value without it gives, without a Python walk.
    cut = _TRAILING.sub("", _LEADING.sub("", text))
    return cut if '"cache_control"' not in cut else _slow_canonical(value)


_VALUE = r'\{(?:"[a-z_]+":"[a-z0-9]*"(?:,(?=")|(?=\})))*\}'
"""A cache_control value as the API takes it: {"type":"ephemeral","ttl":"5m"}."""
_LEADING = re.compile(',"cache_control":' + _VALUE)
_TRAILING = re.compile('"cache_control":' + _VALUE + ',?')


def _slow_canonical(value: Any) -> str:
    """What `canonical` gives, the plain way (kept to test the fast one against)."""
    return json.dumps(_strip(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, (list, tuple)):
        return [_strip(v) for v in value]
    return value


def blocks_of(content: Any) -> list[Any]:
    """A message's (or system's) content as a list of blocks; a string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def prefix_hash(tools: Any, system: Any, messages: Sequence[Mapping[str, Any]],
                head: Iterable[Any] = ()) -> str:
    """The hash of everything before a block: tools, system, earlier messages, and the
    blocks before it in its own assistant message (`head`)."""
    shape = [tools or [], blocks_of(system) if system is not None else [],
             [[m.get("role"), blocks_of(m.get("content"))] for m in messages], list(head)]
    return hashlib.sha256(canonical(shape).encode()).hexdigest()[:32]


_SEEN: dict[str, list[str]] = {}
"""canonical_each's answers by the items' plain JSON (a bench's 240 agents send the
same 27 tools with every request: made canonical once, not 40 times a request)."""
SEEN_MOST = 512


def canonical_each(items: Sequence[Any]) -> list[str]:
    """[canonical(item) for item in items], remembered for items sent again unchanged."""
    key = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    known = _SEEN.get(key)
    if known is None:
        if len(_SEEN) >= SEEN_MOST:
            _SEEN.clear()
        known = _SEEN[key] = [canonical(item) for item in items]
    return list(known)


class Prefixes:
    """`prefix_hash` for every block of one request, each block made canonical once.

    The canonical text of a list is its items' texts joined by commas, and cutting
    cache_control out of the whole is cutting it out of each item, so the text
    `prefix_hash` hashes is put together from the blocks' own texts (which the prompt
    cache needs as well) instead of dumping the whole prefix again for every block."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.body = body
        system, messages = body.get("system"), body["messages"]
        self.tools = canonical_each(body.get("tools") or [])
        self.system = canonical_each(blocks_of(system)) if system is not None else []
        self.roles = [json.dumps(m.get("role"), ensure_ascii=False) for m in messages]
        self.blocks = [[canonical(b) for b in blocks_of(m.get("content"))] for m in messages]

    def text(self, path: str) -> str:
        """The canonical text of the block at `path` (as shape.blocks names it)."""
        part, _, rest = path.partition(".")
        if part == "tools":
            return self.tools[int(rest)]
        if part == "system":
            return self.system[int(rest)]
        i, _, j = rest.partition(".content.")
        return self.blocks[int(i)][int(j)]

    def hash(self, i: int, j: int = 0) -> str:
        """`prefix_hash(tools, system, messages[:i], messages[i]["content"][:j])`."""
        earlier = ",".join(f"[{self.roles[k]},[{','.join(self.blocks[k])}]]" for k in range(i))
        head = ",".join(self.blocks[i][:j]) if i < len(self.blocks) else ""
        text = (f"[[{','.join(self.tools)}],[{','.join(self.system)}],[{earlier}],"
                f"[{head}]]")
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def sign(record: Mapping[str, Any], text: str) -> str:
    payload = base64.urlsafe_b64encode(canonical(record).encode()).decode().rstrip("=")
    return f"{payload}.{_mac(payload, text)}"


def verify(signature: Any, text: Any) -> dict[str, Any] | None:
    """The record a signature was issued with, or None if it is not ours or the text was
    changed since."""
    if not isinstance(signature, str) or not isinstance(text, str) or "." not in signature:
        return None
    payload, mac = signature.rsplit(".", 1)
    if not hmac.compare_digest(mac, _mac(payload, text)):
        return None
    try:
        record = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _mac(payload: str, text: str) -> str:
    return hmac.new(_SECRET, f"{payload}\n{text}".encode(), hashlib.sha256).hexdigest()[:40]


def review(body: Mapping[str, Any], rule: Any, account: str, catalog: Mapping[str, Any],
           replies: Mapping[str, Mapping[str, Any]], calls: Mapping[str, str],
           prefixes: Prefixes | None = None) -> dict[str, int]:
    """Check every thinking block a request sends back; the blocks the model may use, by
    path, with the tokens each is billed for (dropped blocks are absent). Raises Refused.

    `replies`: reply id -> {"signatures": [...], "model": id}; `calls`: tool_use id -> reply id;
    `prefixes`: the body's Prefixes, if already made.
    """
    from tests.standin.shape import bad

    messages = body["messages"]
    kept: dict[str, int] = {}
    for i, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        origins = {calls[b["id"]] for b in content
                   if b.get("type") == "tool_use" and b.get("id") in calls}
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind not in ("thinking", "redacted_thinking"):
                continue
            path = f"messages.{i}.content.{j}"
            if message["role"] != "assistant":
                raise bad(f"{path}: thinking blocks may appear only in assistant messages")
            # https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows: pass
            # thinking blocks back complete and unmodified; a changed text or signature fails
            # verification.
            record = (verify(block.get("signature"), block.get("thinking")) if kind == "thinking"
                      else verify(block.get("data"), ""))
            if record is None:
                raise bad(f"{path}: Invalid `signature` in `thinking` block")
            writer = catalog.get(record["model"])
            # https://platform.claude.com/docs/en/build-with-claude/preserved-thinking#switching-models
            # and #account-bound-thinking: a block the model can't read, or one from another
            # account (Sonnet 5.5, Haiku 5.5), is dropped before the model sees it; the request
            # succeeds and the block is not billed.
            if record["model"] != rule.id and record["model"] not in rule.reads:
                continue
            if writer is not None and writer.account_bound and record["account"] != account:
                continue
            # https://platform.claude.com/docs/en/build-with-claude/preserved-thinking#prefix-check:
            # if anything before the block (tools, system, earlier messages, earlier blocks of its
            # message) differs from what was sent when it was produced, the request is refused (the
            # default for accounts made after 2026-08-31, which every stand-in account is).
            if writer is not None and writer.preserved:
                prefixes = prefixes or Prefixes(body)
                bound = record["prefix"] != prefixes.hash(i, j)
            else:
                bound = False
            if bound:
                raise bad(f"{path}: Invalid `signature` in `thinking` block. The block is "
                          "bound to a different conversation. Remove the block, or set "
                          "`thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\". "
                          "That setting requires the `thinking-binding-controls-2026-08-01` "
                          "value in the `anthropic-beta` header.")
            # Docs are silent on a block moved into another reply's message on models without
            # the prefix check; the stand-in refuses an assistant message mixing replies.
            if origins - {record["reply"]}:
                raise bad(f"messages.{i}: this assistant message holds blocks from different "
                          f"replies ({record['reply']}, {sorted(origins)[0]})")
            kept[path] = int(record.get("tokens", 0))
    _loop_keeps_thinking(messages, rule, replies, calls, bad)
    return kept


def _loop_keeps_thinking(messages: Sequence[Mapping[str, Any]], rule: Any,
                         replies: Mapping[str, Mapping[str, Any]], calls: Mapping[str, str],
                         bad: Any) -> None:
    """https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows:
    "when you return a tool result, the thinking blocks from the assistant message must
    come back with it"; "rebuilding the message ... triggers a 400 error". Only the tool
    loop in progress needs them: the newest message is the user's tool results answering
    the assistant message before it.
    https://platform.claude.com/docs/en/build-with-claude/thinking: "Allowed: outside tool
    use, omit prior turns' thinking" (nothing then remains to check)."""
    last = messages[-1].get("content")
    if len(messages) < 2 or not isinstance(last, list) or not last \
            or last[0].get("type") != "tool_result":
        return
    answered = messages[-2].get("content")
    if messages[-2]["role"] != "assistant" or not isinstance(answered, list):
        return
    sent = {b.get("signature") for b in answered if b.get("type") == "thinking"}
    for reply_id in {calls[b["id"]] for b in answered
                     if b.get("type") == "tool_use" and b.get("id") in calls}:
        reply = replies[reply_id]
        readable = reply["model"] == rule.id or reply["model"] in rule.reads
        if readable and not set(reply["signatures"]) <= sent:
            raise bad(f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
                      "`redacted_thinking`, but found `" + str(answered[0].get("type")) +
                      "`. When `thinking` is enabled, a final `assistant` message must start "
                      "with a thinking block (preceding the lastmost set of `tool_use` and "
                      "`tool_result` blocks).")
