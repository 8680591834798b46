"""StrictMessagesApi: a Messages API stand-in that refuses what the real API refuses.

Drive it through the real SDK, over `httpx2.MockTransport` (`client()`) or over HTTP on
127.0.0.1 for subprocesses that set ANTHROPIC_BASE_URL (`serve()`). The request rules
live in shape.py (form), thinking.py (thinking blocks) and cache.py (usage); the
model's own part in agent.py.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qs

import anthropic
import httpx2

from tests.standin import cache, thinking
from tests.standin.agent import Plan, Request, seed_of, simple_agent
from tests.standin.catalog import CATALOG, DOCS, ModelRule
from tests.standin.shape import Refused, bad, blocks, check
from tests.standin.streaming import events

ERRORS = f"{DOCS}/api/errors"
RATE_LIMITS = f"{DOCS}/api/rate-limits"
MODELS_LIST = f"{DOCS}/api/models-list"


class Refusal(NamedTuple):
    status: int
    error_type: str
    message: str
    path: str


@dataclass(frozen=True)
class Served:
    model: str
    body: Mapping[str, Any]
    usage: Mapping[str, Any]
    stop_reason: str
    account: str
    reply: Mapping[str, Any] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    """Paths of thinking blocks the model could not read (dropped, not billed)."""


class StrictMessagesApi:
    def __init__(self, *, models: Mapping[str, ModelRule] | None = None,
                 behaviour: Callable[[Request], Plan] | None = None,
                 keys: Mapping[str, str] | None = None,
                 today: datetime.date = datetime.date(2026, 11, 26),
                 clock: Callable[[], float] | None = None,
                 rpm: int | None = None, itpm: int | None = None,
                 otpm: int | None = None, full: bool = True) -> None:
        self.models = dict(CATALOG if models is None else models)
        self.behaviour = behaviour or simple_agent
        self.keys = dict(keys or {"test-key": "acct-1"})
        self.today = today
        self.clock = clock or time.monotonic
        self.rpm = rpm
        """Requests per minute per account and model (None: no limit); over it, a 429
        (RATE_LIMITS)."""
        self.itpm, self.otpm = itpm, otpm
        """Input tokens (uncached: input + cache writes) and output tokens per minute."""
        self.full = full
        """Whether the buckets start full (a fresh key) or empty (a key just spent)."""
        self.faults: list[int] = []
        """Statuses (500, 529) the next /v1/messages requests answer with, first first."""
        self.refused: list[Refusal] = []
        self.served: list[Served] = []
        self.cache = cache.PromptCache(self.clock)
        self._replies: dict[str, dict[str, Any]] = {}
        self._prefixes: thinking.Prefixes | None = None
        """The newest request's Prefixes (thinking.py), which _reply reuses."""
        self._calls: dict[str, str] = {}
        self._buckets: dict[tuple[str, str, str], list[float]] = {}
        """(account, model, kind) -> [level, time of level]; RATE_LIMITS: token buckets."""
        self._count = 0
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ clients

    def client(self, *, api_key: str = "test-key", max_retries: int = 0,
               **kw: Any) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=api_key, max_retries=max_retries,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)), **kw)

    def sync_client(self, *, api_key: str = "test-key", max_retries: int = 0,
                    **kw: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key=api_key, max_retries=max_retries,
            http_client=httpx2.Client(transport=httpx2.MockTransport(self.handler)), **kw)

    @contextlib.contextmanager
    def serve(self, *, keep_alive: bool = False) -> Iterator[str]:
        """The stand-in on a real socket; yields its base URL. `keep_alive`: HTTP/1.1,
        one connection for many requests, as the real API serves (a bench's choice;
        tests keep one connection a request, so nothing lingers after them)."""
        api = self

        class Handler(BaseHTTPRequestHandler):
            if keep_alive:
                protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                request = httpx2.Request(
                    self.command, f"http://127.0.0.1{self.path}",
                    headers=[(k, v) for k, v in self.headers.items()],
                    content=self.rfile.read(size) if size else b"")
                response = api.handler(request)
                body = response.content
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer  # noqa: N815 (the http.server names)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()

    # ------------------------------------------------------------------ the handler

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            rid = self._id("req")
            path = request.url.path
            try:
                status, answer, headers = self._route(request, path)
            except Refused as refusal:
                self.refused.append(Refusal(refusal.status, refusal.kind, refusal.message, path))
                # ERRORS: {"type": "error", "error": {"type", "message"}, "request_id"}
                return httpx2.Response(
                    refusal.status, headers={"request-id": rid, **getattr(refusal, "headers", {})},
                    json={"type": "error", "request_id": rid,
                          "error": {"type": refusal.kind, "message": refusal.message}})
            if isinstance(answer, bytes):  # a streamed answer (server-sent events)
                return httpx2.Response(status, headers={"request-id": rid, **headers},
                                       content=answer)
            return httpx2.Response(status, headers={"request-id": rid, **headers}, json=answer)

    def _route(self, request: httpx2.Request, path: str) -> tuple[int, Any, dict[str, str]]:
        account = self._account(request)
        if request.method == "GET" and path == "/v1/models":
            return 200, self._list(request), {}
        if request.method == "GET" and path.startswith("/v1/models/"):
            rule = self.models.get(path.removeprefix("/v1/models/"))
            if rule is None:
                raise Refused(404, "not_found_error", f"model: {path.removeprefix('/v1/models/')}")
            return 200, self._info(rule), {}
        if request.method == "POST" and path == "/v1/messages":
            if self.faults:
                status = self.faults.pop(0)
                raise Refused(status, "overloaded_error" if status == 529 else "api_error",
                              "Overloaded" if status == 529 else "Internal server error")
            try:
                body = json.loads(request.content)
            except ValueError:
                raise bad("The request body is not valid JSON.") from None
            if not isinstance(body, dict):
                raise bad("The request body must be a JSON object.")
            headers: dict[str, str] = {}
            reply = self._messages(body, account, headers)
            if body.get("stream"):
                return 200, events(reply), {**headers, "content-type": "text/event-stream"}
            return 200, reply, headers
        raise Refused(404, "not_found_error", "Not found")

    def _account(self, request: httpx2.Request) -> str:
        # The SDK (2.14) sends "Authorization: Bearer <key>"; curl examples use x-api-key.
        key = request.headers.get("x-api-key")
        bearer = request.headers.get("authorization", "")
        if key is None and bearer.lower().startswith("bearer "):
            key = bearer[7:].strip()
        if key not in self.keys:  # ERRORS: 401 authentication_error
            raise Refused(401, "authentication_error", "invalid x-api-key")
        return self.keys[key]

    def _limits(self) -> dict[str, int]:
        return {kind: limit for kind, limit in (("requests", self.rpm),
                                                 ("input-tokens", self.itpm),
                                                 ("output-tokens", self.otpm))
                if limit is not None}

    def _bucket(self, account: str, model: str, kind: str, limit: int) -> list[float]:
        """RATE_LIMITS: "your capacity is continuously replenished up to your maximum
        limit, rather than being reset at fixed intervals" (a token bucket per model)."""
        now = self.clock()
        bucket = self._buckets.setdefault((account, model, kind),
                                          [float(limit) if self.full else 0.0, now])
        bucket[0] = min(float(limit), bucket[0] + (now - bucket[1]) * limit / 60.0)
        bucket[1] = now
        return bucket

    def _admit(self, account: str, model: str, costs: Mapping[str, float]) -> dict[str, str]:
        """RATE_LIMITS: a request over any limit is refused with 429 rate_limit_error and
        retry-after (seconds; "earlier retries will fail"); every answer carries the
        anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}
        headers (token counts "rounded to the nearest thousand", reset "when the rate
        limit will be fully replenished", RFC 3339). Output tokens are counted from
        max_tokens as the request starts and adjusted when it ends (`_settle`); input
        tokens are uncached ones (input + cache writes: cache reads are free)."""
        limits = self._limits()
        if not limits:
            return {}
        buckets = {kind: self._bucket(account, model, kind, limit)
                   for kind, limit in limits.items()}
        short = {kind: (min(costs[kind], limits[kind]) - buckets[kind][0]) * 60.0 / limits[kind]
                 for kind in limits if buckets[kind][0] < min(costs[kind], limits[kind])}
        if not short:
            for kind in limits:
                buckets[kind][0] -= min(costs[kind], limits[kind])
        headers = self._headers(limits, buckets)
        if short:
            worst = max(short, key=lambda k: short[k])
            refusal = Refused(429, "rate_limit_error", f"This request would exceed your "
                              f"organization's rate limit of {limits[worst]:,} "
                              f"{worst.replace('-', ' ')} per minute")
            refusal.headers = {  # type: ignore[attr-defined]
                **headers, "retry-after": str(max(1, math.ceil(short[worst])))}
            raise refusal
        return headers

    def _headers(self, limits: Mapping[str, int],
                 buckets: Mapping[str, list[float]]) -> dict[str, str]:
        wall = datetime.datetime.now(datetime.UTC)
        headers = {}
        for kind, limit in limits.items():
            level = max(0.0, buckets[kind][0])
            left = int(level) if kind == "requests" else int(round(level, -3))
            full = wall + datetime.timedelta(seconds=(limit - level) * 60.0 / limit)
            headers[f"anthropic-ratelimit-{kind}-limit"] = str(limit)
            headers[f"anthropic-ratelimit-{kind}-remaining"] = str(max(0, left))
            headers[f"anthropic-ratelimit-{kind}-reset"] = full.strftime("%Y-%m-%dT%H:%M:%SZ")
        return headers

    def _settle(self, account: str, model: str, reserved: int, used: int) -> None:
        """Output tokens reserved as max_tokens and not written go back into the bucket."""
        if self.otpm is not None:
            bucket = self._bucket(account, model, "output-tokens", self.otpm)
            bucket[0] = min(float(self.otpm), bucket[0] + max(0, reserved - used))

    # ------------------------------------------------------------------ models

    def _model(self, model: Any) -> ModelRule:
        if not isinstance(model, str):
            raise bad("model: Field required")
        rule = self.models.get(model)
        if rule is None or self._lifecycle(rule) == "retired":  # DEPRECATIONS: requests fail
            raise Refused(404, "not_found_error", f"model: {model}")
        return rule

    def _lifecycle(self, rule: ModelRule) -> str:
        if rule.retires and self.today >= rule.retires:
            return "retired"
        # DEPRECATIONS: a retirement date is assigned when a model is deprecated.
        return "deprecated" if rule.retires else "active"

    def _info(self, rule: ModelRule) -> dict[str, Any]:
        # MODELS_LIST; lifecycle / retires_at as in the SDK's ModelInfo (a retired model is
        # still found by id, "as the historical record of its retirement").
        def stamp(day: datetime.date | None) -> str | None:
            return f"{day.isoformat()}T00:00:00Z" if day else None
        return {"type": "model", "id": rule.id, "display_name": rule.display_name or rule.id,
                "created_at": stamp(rule.released), "lifecycle": self._lifecycle(rule),
                "deprecated_at": stamp(rule.deprecated), "retires_at": stamp(rule.retires),
                "max_tokens": rule.max_output, "max_input_tokens": rule.context}

    def _list(self, request: httpx2.Request) -> dict[str, Any]:
        # MODELS_LIST: newest first; limit 1..1000 (default 20); after_id / before_id
        # cursors; has_more is about the direction asked; first_id / last_id bound the page.
        query = parse_qs(request.url.query.decode() if isinstance(request.url.query, bytes)
                         else str(request.url.query))
        wanted = set(query.get("lifecycle[]", []) or ["active", "deprecated"])
        rows = sorted((r for r in self.models.values() if self._lifecycle(r) in wanted),
                      key=lambda r: (r.released, r.id), reverse=True)
        ids = [r.id for r in rows]
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            raise bad("limit: Input should be a valid integer") from None
        if not 1 <= limit <= 1000:
            raise bad("limit: Input should be between 1 and 1000")
        after, before = query.get("after_id", [None])[0], query.get("before_id", [None])[0]
        for cursor in (after, before):
            if cursor is not None and cursor not in ids:
                raise bad(f"no model with id {cursor} in this list")
        if before is not None:
            end = ids.index(before)
            page, more = rows[max(0, end - limit):end], end - limit > 0
        else:
            start = ids.index(after) + 1 if after is not None else 0
            page, more = rows[start:start + limit], start + limit < len(rows)
        return {"data": [self._info(r) for r in page], "has_more": more,
                "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None}

    # ------------------------------------------------------------------ messages

    def _messages(self, body: dict[str, Any], account: str,
                  headers: dict[str, str]) -> dict[str, Any]:
        rule = self._model(body.get("model"))
        shape = check(body, rule)
        prefixes = thinking.Prefixes(body)  # each block made canonical once, used thrice
        kept = thinking.review(body, rule, account, self.models, self._replies, self._calls,
                               prefixes)
        dropped = []
        prompt = []
        for path, block in blocks(body):
            text = prefixes.text(path)
            if block.get("type") in ("thinking", "redacted_thinking"):
                if path not in kept:
                    dropped.append(path)
                tokens = kept.get(path, 0)
            else:
                tokens = self._tokens(text, rule)
            ttl = (block.get("cache_control") or {}).get("ttl", "5m") \
                if block.get("cache_control") else None
            prompt.append(cache.Block(text, tokens, ttl))
        if body.get("cache_control") and prompt:  # automatic caching: on the last block
            prompt[-1] = cache.Block(prompt[-1].text, prompt[-1].tokens,
                                     body["cache_control"].get("ttl", "5m"))
        total = sum(b.tokens for b in prompt)
        if total > rule.context:  # the mind reads "too long" as a full context
            raise bad(f"prompt is too long: {total} tokens > {rule.context} maximum")
        kept_cache = dict(self.cache.entries)
        usage = self.cache.usage(f"{rule.id}|{account}", prompt, rule.min_cache)
        try:
            headers.update(self._admit(account, rule.id, {
                "requests": 1.0,
                "input-tokens": float(usage["input_tokens"]
                                      + usage["cache_creation_input_tokens"]),
                "output-tokens": float(body["max_tokens"])}))
        except Refused:  # a refused request leaves the cache as it was
            self.cache.entries = kept_cache
            raise
        request = Request(rule, body, account, shape.effort, shape.thinking, seed_of(body))
        self._prefixes = prefixes  # for _reply (whose signature subclasses override)
        reply = self._reply(request, shape, self.behaviour(request))
        out = reply.pop("_spent")
        self._settle(account, rule.id, body["max_tokens"], out[0])
        reply["usage"] = {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
            "cache_read_input_tokens": usage["cache_read_input_tokens"],
            "cache_creation": {"ephemeral_5m_input_tokens": usage["ephemeral_5m_input_tokens"],
                               "ephemeral_1h_input_tokens": usage["ephemeral_1h_input_tokens"]},
            "output_tokens": out[0], "output_tokens_details": {"thinking_tokens": out[1]},
            "service_tier": "standard"}
        self.served.append(Served(rule.id, body, reply["usage"], reply["stop_reason"], account,
                                  reply, tuple(dropped)))
        return reply

    def _reply(self, request: Request, shape: Any, plan: Plan) -> dict[str, Any]:
        body, rule = request.body, request.model
        reply_id = self._id("msg")
        limit = body["max_tokens"]
        think = 0
        if shape.thinking in ("adaptive", "enabled"):
            think = min(plan.thinking, shape.budget or plan.thinking)
        elif shape.thinking == "between_tools" and request.after_results and plan.calls:
            think = min(plan.thinking, 80)  # a short progress note between tool calls
        content: list[dict[str, Any]] = []
        spent, stop, signatures = 0, None, []
        if think > 0:
            used = min(think, limit)
            words = "" if shape.display == "omitted" else _filler(request.seed, used, rule)
            record = {"account": request.account, "model": rule.id, "reply": reply_id,
                      "tokens": used, "prefix": self._prefixes_of(body).hash(
                          len(body["messages"]))}
            signature = thinking.sign(record, words)
            content.append({"type": "thinking", "thinking": words, "signature": signature})
            signatures.append(signature)
            spent, stop = used, ("max_tokens" if think > limit else None)
        thought = spent
        if plan.text and stop is None:
            need = self._tokens(plan.text, rule)
            if spent + need > limit:
                cut = int((limit - spent) * 4 / rule.token_factor)
                plan_text, stop, spent = plan.text[:cut], "max_tokens", limit
            else:
                plan_text, spent = plan.text, spent + need
            if plan_text:
                content.append({"type": "text", "text": plan_text})
        choice = (body.get("tool_choice") or {}).get("type")
        for name, arguments in plan.calls if body.get("tools") and choice != "none" else ():
            call = {"type": "tool_use", "id": self._id("toolu"), "name": name,
                    "input": dict(arguments)}
            need = self._tokens(json.dumps(call), rule)
            if stop is not None or spent + need > limit:  # a cut call is dropped
                stop = "max_tokens"
                break
            content.append(call)
            spent += need
            self._calls[call["id"]] = reply_id
        stop = stop or ("tool_use" if any(b["type"] == "tool_use" for b in content)
                        else "end_turn")
        self._replies[reply_id] = {"signatures": signatures, "model": rule.id}
        return {"id": reply_id, "type": "message", "role": "assistant", "model": rule.id,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "_spent": (spent, thought)}

    def _prefixes_of(self, body: dict[str, Any]) -> thinking.Prefixes:
        """The Prefixes _messages made of this body (each block made canonical once)."""
        made = self._prefixes
        return made if made is not None and made.body is body else thinking.Prefixes(body)

    def _tokens(self, text: str, rule: ModelRule) -> int:
        return math.ceil(len(text) / 4 * rule.token_factor)

    def _id(self, kind: str) -> str:
        self._count += 1
        return f"{kind}_01" + hashlib.sha256(f"{kind}{self._count}".encode()).hexdigest()[:22]


_WORDS = ("the", "path", "north", "looks", "clear", "wood", "would", "help", "later", "maybe",
          "first", "look", "around", "then", "decide", "where", "to", "go", "and", "why")


def _filler(seed: int, tokens: int, rule: ModelRule) -> str:
    """Deterministic thinking text about `tokens` long for this model's tokenizer."""
    import random

    rng = random.Random(seed)
    chars = int(tokens * 4 / rule.token_factor)
    words: list[str] = []
    size = 0
    while size < chars:
        words.append(rng.choice(_WORDS))
        size += len(words[-1]) + 1
    return " ".join(words)[:max(chars, 1)]
