"""What a /v1/messages request must look like before any model sees it.

Each check raises `Refused` with the status, error type and message of the real API (the
real wording where a doc quotes it) and carries the doc page it comes from in a comment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.standin.catalog import (
    CACHING,
    DEPRECATIONS,
    DOCS,
    EFFORT,
    THINKING_TABLE,
    ModelRule,
    effort_at_most,
)

MESSAGES_API = f"{DOCS}/api/messages"
TOOL_USE = f"{DOCS}/agents-and-tools/tool-use/handle-tool-calls"
EXTENDED = f"{DOCS}/build-with-claude/extended-thinking"
SONNET_55 = f"{DOCS}/models/sonnet-5-5/whats-new-sonnet-5-5"
OPUS_55 = f"{DOCS}/models/opus-5-5/whats-new-opus-5-5"

FIELDS = frozenset({
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "thinking",
    "output_config", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "stream",
    "service_tier", "cache_control", "container", "mcp_servers", "inference_geo",
    "context_management", "fallbacks", "speed"})
"""Top-level fields the Messages API takes (MESSAGES_API); any other is a 400."""
SOURCES = (MESSAGES_API, TOOL_USE, EXTENDED, SONNET_55, OPUS_55, CACHING, DEPRECATIONS, EFFORT,
           THINKING_TABLE)
"""The doc pages the rules below cite by these names (full URLs in tests/standin/catalog.py)."""
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


class Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def bad(message: str) -> Refused:
    return Refused(400, "invalid_request_error", message)


@dataclass(frozen=True)
class Shape:
    effort: str | None
    thinking: str | None
    """The thinking mode in effect: "adaptive", "between_tools", "enabled" or None (off)."""
    budget: int | None
    display: str


def check(body: Mapping[str, Any], rule: ModelRule) -> Shape:
    for required in ("max_tokens", "messages"):
        if required not in body:
            raise bad(f"{required}: Field required")
    extra = sorted(set(body) - FIELDS)
    if extra:
        raise bad(f"{extra[0]}: Extra inputs are not permitted")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise bad("stream: Input should be a valid boolean")
    _messages(body.get("messages"))
    limit = body.get("max_tokens")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise bad("max_tokens: Input should be greater than or equal to 1")
    if limit > rule.max_output:  # OVERVIEW: "Max output" per model
        raise bad(f"max_tokens: {limit} > {rule.max_output}, which is the maximum allowed "
                  f"number of output tokens for {rule.id}")
    effort = _effort(body, rule)
    thinking, budget, display = _thinking(body, rule, effort, limit)
    _sampling(body, rule, thinking)
    _prefill(body, rule, thinking)
    _tools(body, rule, thinking)
    _breakpoints(body)
    _tool_pairs(body["messages"])
    return Shape(effort, thinking, budget, display)


def _messages(messages: Any) -> None:
    # MESSAGES_API: messages alternate user/assistant, the first is a user turn, every
    # message has content, and text blocks may not be empty.
    if not isinstance(messages, list) or not messages:
        raise bad("messages: at least one message is required")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        final_assistant = i == len(messages) - 1 and message["role"] == "assistant"
        if not content and not final_assistant:
            raise bad(f"messages.{i}: all messages must have non-empty content except for "
                      "the optional final assistant message")
        if isinstance(content, list):
            for j, block in enumerate(content):
                if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
                    raise bad(f"messages.{i}.content.{j}: each block needs a type")
                if block["type"] == "text" and not block.get("text"):
                    raise bad("messages: text content blocks must be non-empty")
        elif not isinstance(content, str):
            raise bad(f"messages.{i}.content: Input should be a valid string or list")
    if messages[0]["role"] != "user":
        raise bad('messages: first message must use the "user" role')


def _effort(body: Mapping[str, Any], rule: ModelRule) -> str | None:
    # EFFORT: output_config.effort is low/medium/high/xhigh/max where the model has it;
    # models outside its supportedModels refuse the parameter.
    config = body.get("output_config") or {}
    if not isinstance(config, Mapping):
        raise bad("output_config: Input should be an object")
    effort = config.get("effort")
    if effort is None:
        return rule.default_effort
    if not rule.efforts:
        raise bad(f"output_config.effort: effort is not supported by {rule.id}")
    if effort not in rule.efforts:
        raise bad(f"output_config.effort: {effort!r} is not supported by {rule.id}; "
                  f"use one of {', '.join(sorted(rule.efforts))}")
    return effort


def _thinking(body: Mapping[str, Any], rule: ModelRule, effort: str | None,
              limit: int) -> tuple[str | None, int | None, str]:
    config = body.get("thinking")
    display = "omitted" if rule.adaptive else "summarized"  # SONNET_55, OPUS_55: default
    if config is None:  # THINKING_TABLE: on by default on 5.x, off on 4.5
        return ("adaptive" if rule.adaptive else None), None, display
    kind = config.get("type") if isinstance(config, Mapping) else None
    if kind not in ("adaptive", "enabled", "disabled", "between_tools"):
        raise bad("thinking.type: Input should be 'adaptive', 'enabled', 'disabled' or "
                  "'between_tools'")
    if kind not in rule.thinking_types:  # THINKING_TABLE: refused with a 400
        if not rule.adaptive:  # the wording many public reports quote for Haiku 4.5
            raise bad(f"{kind} thinking is not supported on this model")
        hint = ('Use "thinking.type.between_tools" to turn off up-front thinking.'
                if "between_tools" in rule.thinking_types and kind == "disabled" else
                'Use "thinking.type.adaptive" and "output_config.effort" to control '
                'thinking behavior.')  # OPUS_55 quotes this message
        raise bad(f'"thinking.type.{kind}" is not supported for this model. {hint}')
    others = set(config) - {"type", "display", "budget_tokens", "block_binding"}
    if others:
        raise bad(f"thinking.{sorted(others)[0]}: Extra inputs are not permitted")
    if kind == "between_tools":  # SONNET_55: no other field, effort high or below
        if set(config) != {"type"}:
            raise bad("thinking: between_tools takes no other field")
        if effort and not effort_at_most(effort, "high"):
            raise bad(f"thinking.type.between_tools is not supported at effort {effort}; "
                      "use adaptive thinking to run at xhigh or max")
        return kind, None, "summarized"
    if kind == "disabled":  # THINKING_TABLE: Opus 5 takes it only at effort high or below
        if rule.disabled_up_to and effort and not effort_at_most(effort, rule.disabled_up_to):
            raise bad(f"thinking.type.disabled is not supported at effort {effort}")
        return None, None, display
    if kind == "enabled":  # EXTENDED: budget_tokens >= 1,024 and below max_tokens
        budget = config.get("budget_tokens")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024:
            raise bad("thinking.enabled.budget_tokens: Input should be greater than or "
                      "equal to 1024")
        if budget >= limit:
            raise bad("max_tokens must be greater than thinking.budget_tokens")
        return kind, budget, config.get("display") or "summarized"
    if "budget_tokens" in config:
        raise bad("thinking.adaptive.budget_tokens: Extra inputs are not permitted")
    return kind, None, config.get("display") or display


def _sampling(body: Mapping[str, Any], rule: ModelRule, thinking: str | None) -> None:
    # DEPRECATIONS: non-default temperature/top_p/top_k are a 400 on Claude 4.7 and later.
    # EXTENDED: with thinking on, temperature only 1, no top_k, top_p 0.95 to 1.
    # Defaults: temperature 1.0, top_p 1.0 (MESSAGES_API); top_k has none, so any is refused.
    temperature, top_p = body.get("temperature"), body.get("top_p")
    if not rule.sampling or thinking == "enabled":
        if temperature not in (None, 1, 1.0):
            raise bad("temperature: only the default (1) is supported "
                      + ("when thinking is enabled" if rule.sampling else "on this model"))
        if body.get("top_k") is not None:
            raise bad("top_k: not supported " + ("when thinking is enabled" if rule.sampling
                                                 else "on this model"))
        low = 0.95 if rule.sampling else 1.0
        if top_p is not None and not (low <= top_p <= 1):
            raise bad(f"top_p: must be between {low} and 1 "
                      + ("when thinking is enabled" if rule.sampling else "on this model"))


def _prefill(body: Mapping[str, Any], rule: ModelRule, thinking: str | None) -> None:
    # https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide: "Claude Sonnet 5.5
    # rejects a prefilled last assistant turn with a 400 error ... Claude Sonnet 4.5, Claude Haiku
    # 4.5, and older models accept one." EXTENDED: prefill is incompatible with thinking.
    if body["messages"][-1]["role"] != "assistant":
        return
    if not rule.prefill:
        raise bad("This model does not support assistant message prefill. The conversation "
                  "must end with a user message.")
    if thinking == "enabled":
        raise bad("Assistant prefill is not compatible with extended thinking.")


def _tools(body: Mapping[str, Any], rule: ModelRule, thinking: str | None) -> None:
    tools = body.get("tools") or []
    names = []
    for i, tool in enumerate(tools):  # https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools
        if not isinstance(tool, Mapping):
            raise bad(f"tools.{i}: Input should be an object")
        if tool.get("type") not in (None, "custom"):
            continue  # a server tool: not modelled, taken as given
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            raise bad(f"tools.{i}.custom.name: String should match pattern "
                      "'^[a-zA-Z0-9_-]{1,128}$'")
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            raise bad(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        names.append(tool["name"])
    if len(names) != len(set(names)):
        raise bad("tools: Tool names must be unique.")
    choice = body.get("tool_choice")
    if choice is None:
        return
    kind = choice.get("type") if isinstance(choice, Mapping) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise bad("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if kind in ("any", "tool"):
        if not rule.forced_tool_choice:  # SONNET_55, OPUS_55 (the message is quoted there)
            raise bad('tool_choice: type "tool" and "any" are not supported for this model.')
        if thinking == "enabled" or (thinking and rule.forced_tool_needs_thinking_off):
            # https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows; Haiku
            # 5.5 (catalog.py)
            raise bad("Thinking may not be enabled when tool_choice forces tool use.")
        if kind == "tool" and choice.get("name") not in names:
            raise bad(f"tool_choice.name: no tool named {choice.get('name')!r} in tools")


def blocks(body: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every block of the prompt in cache order (tools, system, messages), with its path."""
    for i, tool in enumerate(body.get("tools") or []):
        yield f"tools.{i}", tool
    system = body.get("system")
    for i, block in enumerate([{"type": "text", "text": system}] if isinstance(system, str)
                              else system or []):
        yield f"system.{i}", block
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        for j, block in enumerate([{"type": "text", "text": content}]
                                  if isinstance(content, str) else content or []):
            yield f"messages.{i}.content.{j}", block


def _breakpoints(body: Mapping[str, Any]) -> None:
    # CACHING: at most 4 breakpoints; type "ephemeral"; ttl "5m" or "1h"; a longer TTL must
    # come before a shorter one.
    marks = [(path, b["cache_control"]) for path, b in blocks(body)
             if isinstance(b, Mapping) and b.get("cache_control") is not None]
    if body.get("cache_control") is not None:  # automatic caching takes a slot too
        marks.append(("cache_control", body["cache_control"]))
    if len(marks) > 4:
        raise bad(f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}.")
    seen_short = False
    for path, mark in marks:
        if not isinstance(mark, Mapping) or mark.get("type") != "ephemeral":
            raise bad(f"{path}.cache_control.type: Input should be 'ephemeral'")
        ttl = mark.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise bad(f"{path}.cache_control.ttl: Input should be '5m' or '1h'")
        if ttl == "1h" and seen_short:
            raise bad("a cache_control with ttl '1h' must come before any with ttl '5m'")
        seen_short = seen_short or ttl == "5m"


def _tool_pairs(messages: list[Mapping[str, Any]]) -> None:
    # TOOL_USE: each tool_use is answered by a tool_result in the very next message, a user
    # message whose tool_result blocks come first; a result must answer a call just made.
    # (The wording is the real API's, as quoted in public issue reports.)
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks_ = content if isinstance(content, list) else []
        if message["role"] == "user":
            before = messages[i - 1] if i else {}
            called = {b.get("id") for b in before.get("content") or []
                      if isinstance(b, Mapping) and b.get("type") == "tool_use"
                      and before.get("role") == "assistant"}
            for j, block in enumerate(blocks_):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in called:
                    raise bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                              f"`tool_result` blocks: {block.get('tool_use_id')}. Each "
                              "`tool_result` block must have a corresponding `tool_use` "
                              "block in the previous message.")
    for i, message in enumerate(messages):
        content = message.get("content")
        asked = [b.get("id") for b in content if b.get("type") == "tool_use"] \
            if isinstance(content, list) else []
        if not asked or message["role"] != "assistant":
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        following = nxt.get("content") if nxt and nxt["role"] == "user" else None
        following = following if isinstance(following, list) else []
        lead = []
        for block in following:
            if block.get("type") != "tool_result":
                break
            lead.append(block.get("tool_use_id"))
        missing = [a for a in asked if a not in lead]
        if missing and not any(b.get("type") == "tool_result" for b in following):
            raise bad(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                      f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                      "have a corresponding `tool_result` block in the next message.")
        if missing:
            raise bad(f"messages.{i + 1}: Did not find {len(asked)} tool_result block(s) at "
                      "the beginning of this message. Messages following tool_use blocks "
                      "must begin with a matching number of tool_result blocks.")


def cursor_page(rows: list[Any], ids: list[str], query: Mapping[str, list[str]],
                noun: str) -> tuple[list[Any], bool]:
    """One page of a list endpoint (MODELS_LIST, and the batches list, which pages the
    same way): `limit` 1..1000 (default 20), an `after_id` or `before_id` cursor among
    `ids`; gives (the page, whether more lie in the direction asked)."""
    try:
        limit = int(query.get("limit", ["20"])[0])
    except ValueError:
        raise bad("limit: Input should be a valid integer") from None
    if not 1 <= limit <= 1000:
        raise bad("limit: Input should be between 1 and 1000")
    after, before = query.get("after_id", [None])[0], query.get("before_id", [None])[0]
    for cursor in (after, before):
        if cursor is not None and cursor not in ids:
            raise bad(f"no {noun} with id {cursor} in this list")
    if before is not None:
        end = ids.index(before)
        return rows[max(0, end - limit):end], end - limit > 0
    start = ids.index(after) + 1 if after is not None else 0
    return rows[start:start + limit], start + limit < len(rows)


def json_object(content: bytes) -> dict[str, Any]:
    """A request body as the API reads it: JSON, and an object, else a 400."""
    try:
        body = json.loads(content)
    except ValueError:
        raise bad("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise bad("The request body must be a JSON object.")
    return body
