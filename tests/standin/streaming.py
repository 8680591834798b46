"""A whole reply told as the Messages API streams one (server-sent events).

STREAMING (https://platform.claude.com/docs/en/build-with-claude/streaming): a stream
is `message_start` (the message with no content yet, its usage so far), then for
each content block a `content_block_start` (the block empty: "" text or thinking, {}
input), its deltas (`text_delta`, `thinking_delta` then one `signature_delta`,
`input_json_delta` with the input as partial JSON) and a `content_block_stop`; then
`message_delta` (the stop reason, and the output tokens as a running total) and
`message_stop`. Each event is `event: <type>` and `data: <json>` lines, then a
blank line. The HTTP headers (the rate-limit ones with them) come as the stream
opens, before any event: what a caller may read before the model has finished.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

PIECE = 40
"""Characters a delta carries (a stream sends a block in many small pieces)."""


def events(reply: Mapping[str, Any]) -> bytes:
    """The reply (as the stand-in answers it whole) as the bytes of its stream."""
    return "".join(_event(e) for e in _stream(reply)).encode("utf-8")


def _event(data: Mapping[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _stream(reply: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    usage = dict(reply.get("usage") or {})
    started = {**reply, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {**usage, "output_tokens": min(1, usage.get("output_tokens", 0))}}
    yield {"type": "message_start", "message": started}
    for index, block in enumerate(reply.get("content") or []):
        kind = block.get("type")
        if kind == "text":
            yield _start(index, {**block, "text": ""})
            yield from _pieces(index, "text_delta", "text", block.get("text", ""))
        elif kind == "thinking":
            yield _start(index, {**block, "thinking": "", "signature": ""})
            yield from _pieces(index, "thinking_delta", "thinking", block.get("thinking", ""))
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": block["signature"]}}
        elif kind in ("tool_use", "server_tool_use"):
            yield _start(index, {**block, "input": {}})
            yield from _pieces(index, "input_json_delta", "partial_json",
                               json.dumps(block.get("input", {}), ensure_ascii=False))
        else:  # redacted thinking and the rest come whole in their start
            yield _start(index, dict(block))
        yield {"type": "content_block_stop", "index": index}
    yield {"type": "message_delta",
           "delta": {"stop_reason": reply.get("stop_reason"),
                     "stop_sequence": reply.get("stop_sequence")},
           "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    yield {"type": "message_stop"}


def _start(index: int, block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": dict(block)}


def _pieces(index: int, kind: str, key: str, text: str) -> Iterator[dict[str, Any]]:
    for at in range(0, len(text), PIECE):
        yield {"type": "content_block_delta", "index": index,
               "delta": {"type": kind, key: text[at:at + PIECE]}}
