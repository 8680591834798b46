"""StrictMessagesApi: a Messages API stand-in that refuses what the real API refuses.

Drive it through the real SDK, over `httpx2.MockTransport` (`client()`) or over HTTP on
127.0.0.1 for subprocesses that set ANTHROPIC_BASE_URL (`serve()`). The request rules
live in shape.py (form), thinking.py (thinking blocks) and cache.py (usage); the rate
limits in limits.py; the model's own part in agent.py; the Message Batches API in batches.py.

Time: `clock` is the stand-in's clock (cache lifetimes, rate limits); `latency` the
seconds of it each reply takes. With the real clock (no `clock=`) a reply really comes
`latency` seconds after its request (a stream opens at once, with its headers, and its
events follow); with an injected clock the test moves time itself, and `sleep` (an
async callable, given the seconds) is awaited for each reply's latency by `client()`
(none by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import json
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qs

import anthropic
import httpx2

from tests.standin import cache, thinking
from tests.standin.agent import Plan, Request, seed_of, simple_agent
from tests.standin.batches import Batches, is_batches
from tests.standin.catalog import CATALOG, DOCS, ModelRule
from tests.standin.limits import (
    KINDS,
    ClassFigures,
    Limited,
    Limits,
    TokenBucket,
    counted,
    message,
    resolve,
)
from tests.standin.shape import Refused, bad, blocks, check, cursor_page, json_object
from tests.standin.streaming import events

ERRORS = f"{DOCS}/api/errors"
MODELS_LIST = f"{DOCS}/api/models-list"
WAIT = "standin_wait"
"""The response extension that says how many seconds the answer is still to take."""


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
    rate_class: str = ""
    """The class whose buckets it drew from (limits.py PER CLASS)."""
    at: float = 0.0
    """The stand-in's clock when it was admitted; it was answered at `at` + latency."""
    batch: bool = False
    """Answered in a Message Batch (batches.py): billed at batch prices, no rate limits."""


class StrictMessagesApi:
    def __init__(self, *, models: Mapping[str, ModelRule] | None = None,
                 behaviour: Callable[[Request], Plan] | None = None,
                 keys: Mapping[str, str] | None = None,
                 today: datetime.date = datetime.date(2026, 11, 26),
                 clock: Callable[[], float] | None = None,
                 rpm: int | None = None, itpm: int | None = None,
                 otpm: int | None = None, full: bool = True,
                 limits: Mapping[str, Limits] | None = None, latency: float = 0.0,
                 sleep: Callable[[float], Awaitable[None]] | None = None,
                 reserve_max_tokens: bool = False,
                 wall: Callable[[], datetime.datetime] | None = None,
                 batch_seconds: float = 0.0) -> None:
        self.models = dict(CATALOG if models is None else models)
        self.behaviour = behaviour or simple_agent
        self.keys = dict(keys or {"test-key": "acct-1"})
        self.today = today
        self.clock = clock or time.monotonic
        self.rpm = rpm
        """Requests per minute per account and model class (None: no limit); over it, a
        429 (RATE_LIMITS). rpm, itpm and otpm hold for every class `limits` does not name."""
        self.itpm, self.otpm = itpm, otpm
        """Input tokens (uncached: input + cache writes) and output tokens per minute."""
        self.limits = _checked(limits or {}, self.models)
        """(rpm, itpm, otpm) per model class (limits.py PER CLASS): a key is a class
        (catalog.py `rate_class`, "sonnet-5-5") or the start of one ("sonnet": every
        Sonnet class, each with buckets of its own)."""
        self.full = full
        """Whether the buckets start full (a fresh key) or empty (a key just spent)."""
        self.latency = latency
        """Seconds of the stand-in's clock each reply takes (see the module's docstring);
        its output tokens leave the bucket over that time (limits.py OTPM)."""
        self.reserve_max_tokens = reserve_max_tokens
        """limits.py OTPM: the page's older rule (max_tokens taken as the request starts,
        the unused rest given back as it ends) instead of its current one."""
        self._real_time = clock is None
        self._sleep = sleep
        self._wall = wall or (lambda: datetime.datetime.now(datetime.UTC))
        self.limited: list[Limited] = []
        """Requests answered 429 for a rate limit, first first (limits.py)."""
        self.faults: list[int] = []
        """Statuses (500, 529) the next /v1/messages requests answer with, first first."""
        self.refused: list[Refusal] = []
        self.served: list[Served] = []
        self.cache = cache.PromptCache(self.clock)
        self._replies: dict[str, dict[str, Any]] = {}
        self._prefixes: thinking.Prefixes | None = None
        """The newest request's Prefixes (thinking.py), which _reply reuses."""
        self._calls: dict[str, str] = {}
        self._buckets: dict[tuple[str, str, str], TokenBucket] = {}
        """(account, model class, kind) -> its bucket (limits.py TOKEN BUCKET, PER CLASS)."""
        self._count = 0
        self._due: float | None = None
        """When the reply being answered is due (the stand-in's clock)."""
        self._lock = threading.Lock()
        self.batch_seconds = batch_seconds
        """Seconds of the stand-in's clock after its creation a Message Batch ends."""
        self.batches = Batches(self)
        self._batch = False
        """Whether _messages answers a request of a batch (set by batches.py)."""

    # ------------------------------------------------------------------ clients

    def client(self, *, api_key: str = "test-key", max_retries: int = 0,
               **kw: Any) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=api_key, max_retries=max_retries,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self._answer_async)),
            **kw)

    def sync_client(self, *, api_key: str = "test-key", max_retries: int = 0,
                    **kw: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key=api_key, max_retries=max_retries,
            http_client=httpx2.Client(transport=httpx2.MockTransport(self._answer_sync)), **kw)

    async def _answer_async(self, request: httpx2.Request) -> httpx2.Response:
        """`handler`, taking the reply's latency: a stream opens at once (its headers are
        what a caller may read before the model has finished) and its events follow."""
        response = self.handler(request)
        wait = self._wait(response)
        if wait is None:
            return response
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        if response.headers.get("content-type") == "text/event-stream":
            body = response.content

            async def later() -> AsyncIterator[bytes]:
                await sleep(wait)
                yield body

            return httpx2.Response(response.status_code, headers=response.headers,
                                   content=later())
        await sleep(wait)
        return response

    def _answer_sync(self, request: httpx2.Request) -> httpx2.Response:
        response = self.handler(request)
        wait = self._wait(response)
        if wait is None or not self._real_time:  # an injected clock: the test moves time
            return response
        if response.headers.get("content-type") == "text/event-stream":
            body = response.content

            def later() -> Iterator[bytes]:
                time.sleep(wait)
                yield body

            return httpx2.Response(response.status_code, headers=response.headers,
                                   content=later())
        time.sleep(wait)
        return response

    def _wait(self, response: httpx2.Response) -> float | None:
        """Seconds the answer is still to take, or None when it comes at once: real ones
        with the real clock; with an injected clock, the latency, for `sleep` (if any)."""
        due = response.extensions.get(WAIT)
        if due is None:
            return None
        if self._real_time:
            return max(0.0, due - self.clock())
        return self.latency if self._sleep is not None else None

    @contextlib.contextmanager
    def serve(self, *, keep_alive: bool = False) -> Iterator[str]:
        """The stand-in on a real socket; yields its base URL. `keep_alive`: HTTP/1.1,
        one connection for many requests, as the real API serves (a bench's choice;
        tests keep one connection a request, so nothing lingers after them). With the
        real clock each reply takes `latency` seconds (a thread a connection waits)."""
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
                due = response.extensions.get(WAIT) if api._real_time else None
                streamed = response.headers.get("content-type") == "text/event-stream"
                if due is not None and not streamed:  # the reply takes its latency
                    time.sleep(max(0.0, due - api.clock()))
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                if due is not None and streamed:  # a stream opens at once; events follow
                    self.wfile.flush()
                    time.sleep(max(0.0, due - api.clock()))
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
            self._due = None
            try:
                status, answer, headers = self._route(request, path)
            except Refused as refusal:
                self.refused.append(Refusal(refusal.status, refusal.kind, refusal.message, path))
                # ERRORS: {"type": "error", "error": {"type", "message"}, "request_id"}
                return httpx2.Response(
                    refusal.status, headers={"request-id": rid, **getattr(refusal, "headers", {})},
                    json={"type": "error", "request_id": rid,
                          "error": {"type": refusal.kind, "message": refusal.message}})
            due, self._due = self._due, None
            extensions = {WAIT: due} if due is not None and status == 200 else None
            if isinstance(answer, bytes):  # a streamed answer (server-sent events)
                return httpx2.Response(status, headers={"request-id": rid, **headers},
                                       content=answer, extensions=extensions)
            return httpx2.Response(status, headers={"request-id": rid, **headers}, json=answer,
                                   extensions=extensions)

    def _route(self, request: httpx2.Request, path: str) -> tuple[int, Any, dict[str, str]]:
        account = self._account(request)
        if is_batches(path):
            return self.batches.route(request, path, account)
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
            body = json_object(request.content)
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

    # ------------------------------------------------------------------ rate limits

    def limits_of(self, model: str) -> dict[str, int]:
        """The limits a model's class has now, by bucket kind (none: unlimited)."""
        return self._limits(self.models[model])

    def _limits(self, rule: ModelRule) -> dict[str, int]:
        """limits.py PER CLASS: the class's entry in `limits`, else rpm/itpm/otpm."""
        chosen = resolve(self.limits, rule.limits_class) if self.limits else None
        values = chosen if chosen is not None else (self.rpm, self.itpm, self.otpm)
        return {kind: int(limit) for kind, limit in zip(KINDS, values, strict=True)
                if limit is not None}

    def _bucket(self, account: str, rate_class: str, kind: str, limit: int) -> TokenBucket:
        """limits.py TOKEN BUCKET, one per account ("set at the organization level"),
        class and kind, brought to now."""
        now = self.clock()
        bucket = self._buckets.get((account, rate_class, kind))
        if bucket is None:
            bucket = self._buckets[(account, rate_class, kind)] = TokenBucket(
                limit, float(limit) if self.full else 0.0, now)
        bucket.advance(now)
        if bucket.limit != limit:  # the limit was changed (api.rpm = ...)
            bucket.limit, bucket.level = float(limit), min(bucket.level, float(limit))
        return bucket

    def _admit(self, account: str, rule: ModelRule, input_cost: int,
               max_tokens: int) -> dict[str, str]:
        """Take the request's cost from each bucket of its class, or refuse it with 429
        rate_limit_error and retry-after (limits.py 429, NEVER FITS); the headers either
        way (limits.py HEADERS). Costs: one request; input tokens counted for ITPM
        (limits.py ITPM); output tokens nothing as the request starts, but the bucket
        must hold one (limits.py OTPM), or max_tokens with `reserve_max_tokens`."""
        limits = self._limits(rule)
        if not limits:
            return {}
        now, rate_class = self.clock(), rule.limits_class
        buckets = {kind: self._bucket(account, rate_class, kind, limit)
                   for kind, limit in limits.items()}
        out_cost = float(max_tokens) if self.reserve_max_tokens else 1.0
        need = {"requests": 1.0, "input-tokens": float(input_cost), "output-tokens": out_cost}
        waits = {kind: buckets[kind].wait_for(need[kind], now) for kind in limits}
        short = {kind: wait for kind, wait in waits.items() if wait > 0}
        if not short:
            take = {**need, "output-tokens": out_cost if self.reserve_max_tokens else 0.0}
            for kind, bucket in buckets.items():
                bucket.take(take[kind])
            return self._headers(limits, buckets, now)
        never = [kind for kind in short if math.isinf(short[kind])]
        worst = never[0] if never else max(short, key=lambda k: short[k])
        # "how long to wait": until every bucket short holds its cost; NEVER FITS: until
        # the bucket named is next full (and the retry fails again).
        wait = buckets[worst].full_in(now) if never else max(short.values())
        retry_after = max(1, math.ceil(wait - 1e-9))
        self.limited.append(Limited(now, rule.id, rate_class, worst, need[worst],
                                    limits[worst], bool(never), retry_after))
        refusal = Refused(429, "rate_limit_error",
                          message(limits[worst], worst, account, rule.id))
        refusal.headers = {  # type: ignore[attr-defined]
            **self._headers(limits, buckets, now), "retry-after": str(retry_after)}
        raise refusal

    def _headers(self, limits: Mapping[str, int], buckets: Mapping[str, TokenBucket],
                 now: float) -> dict[str, str]:
        """limits.py HEADERS: -limit, -remaining (tokens "rounded to the nearest
        thousand"), -reset ("fully replenished", RFC 3339) for each limited kind, and
        tokens-* for input and output together."""
        wall = self._wall()

        def reset(seconds: float) -> str:
            when = wall + datetime.timedelta(seconds=seconds)
            if when.microsecond:  # full only at the end of that second
                when = when.replace(microsecond=0) + datetime.timedelta(seconds=1)
            return when.strftime("%Y-%m-%dT%H:%M:%SZ")

        headers: dict[str, str] = {}
        left = {kind: max(0.0, bucket.level) for kind, bucket in buckets.items()}
        full = {kind: bucket.full_in(now) for kind, bucket in buckets.items()}
        for kind, limit in limits.items():
            shown = int(left[kind]) if kind == "requests" else _thousands(left[kind])
            headers[f"anthropic-ratelimit-{kind}-limit"] = str(limit)
            headers[f"anthropic-ratelimit-{kind}-remaining"] = str(shown)
            headers[f"anthropic-ratelimit-{kind}-reset"] = reset(full[kind])
        tokens = [kind for kind in ("input-tokens", "output-tokens") if kind in limits]
        if tokens:
            headers["anthropic-ratelimit-tokens-limit"] = str(sum(limits[k] for k in tokens))
            headers["anthropic-ratelimit-tokens-remaining"] = str(
                _thousands(sum(left[k] for k in tokens)))
            headers["anthropic-ratelimit-tokens-reset"] = reset(max(full[k] for k in tokens))
        return headers

    def _spend_output(self, account: str, rule: ModelRule, start: float, due: float,
                      used: int, max_tokens: int) -> None:
        """limits.py OTPM: the reply's output tokens leave the bucket as they are written,
        evenly from `start` to `due`; with `reserve_max_tokens`, max_tokens was taken as
        the request started and what was not written comes back at `due`."""
        limit = self._limits(rule).get("output-tokens")
        if limit is None:
            return
        bucket = self._bucket(account, rule.limits_class, "output-tokens", limit)
        if self.reserve_max_tokens:
            bucket.flow(due, due, -float(max(0, max_tokens - used)))
        else:
            bucket.flow(start, due, float(used))

    def figures(self) -> dict[str, ClassFigures]:
        """Per model class: served, 429s by bucket (and "never fits" apart), replies cut
        by max_tokens, tokens counted (limits.py ClassFigures)."""
        out: dict[str, ClassFigures] = {}
        for served in self.served:
            rule = self.models.get(served.model)
            mine = out.setdefault(served.rate_class, ClassFigures())
            mine.served += 1
            mine.cut += served.stop_reason == "max_tokens"
            usage = served.usage
            mine.input_counted += counted(usage, rule)
            mine.cache_read += int(usage.get("cache_read_input_tokens") or 0)
            mine.output += int(usage.get("output_tokens") or 0)
            mine.max_tokens += int(served.body.get("max_tokens") or 0)
        for limited in self.limited:
            mine = out.setdefault(limited.rate_class, ClassFigures())
            (mine.never_fits if limited.never_fits else mine.limited)[limited.kind] += 1
        return out

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
        page, more = cursor_page(rows, [r.id for r in rows], query, "model")
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
        started = self.clock()
        try:  # batches.py: a batch's requests are outside the Messages rate limits
            headers.update({} if self._batch else self._admit(
                account, rule, counted(usage, rule), body["max_tokens"]))
        except Refused:  # a refused request leaves the cache as it was
            self.cache.entries = kept_cache
            raise
        request = Request(rule, body, account, shape.effort, shape.thinking, seed_of(body))
        self._prefixes = prefixes  # for _reply (whose signature subclasses override)
        reply = self._reply(request, shape, self.behaviour(request))
        out = reply.pop("_spent")
        self._due = started + self.latency
        if not self._batch:
            self._spend_output(account, rule, started, self._due, out[0], body["max_tokens"])
        reply["usage"] = {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
            "cache_read_input_tokens": usage["cache_read_input_tokens"],
            "cache_creation": {"ephemeral_5m_input_tokens": usage["ephemeral_5m_input_tokens"],
                               "ephemeral_1h_input_tokens": usage["ephemeral_1h_input_tokens"]},
            "output_tokens": out[0], "output_tokens_details": {"thinking_tokens": out[1]},
            "service_tier": "batch" if self._batch else "standard"}
        self.served.append(Served(rule.id, body, reply["usage"], reply["stop_reason"], account,
                                  reply, tuple(dropped), rule.limits_class, started,
                                  self._batch))
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


def _thousands(tokens: float) -> int:
    """limits.py HEADERS: "rounded to the nearest thousand" (halves up)."""
    return int(math.floor(tokens / 1000.0 + 0.5)) * 1000


def _checked(limits: Mapping[str, Limits], models: Mapping[str, ModelRule]
             ) -> dict[str, Limits]:
    """`limits` with every key naming a class of some model (or the start of one) and
    every value (rpm, itpm, otpm), each above 0 or None."""
    classes = sorted({m.limits_class for m in models.values()})
    for key, value in limits.items():
        if not any(c == key or c.startswith(f"{key}-") for c in classes):
            raise ValueError(f"limits: {key!r} names no model class; classes: "
                             f"{', '.join(classes)} (or the start of one, as 'sonnet')")
        if len(value) != 3 or any(v is not None and (not isinstance(v, int) or v <= 0)
                                  for v in value):
            raise ValueError(f"limits[{key!r}]: (requests, input tokens, output tokens) a "
                             f"minute, each a whole number above 0 or None, not {value!r}")
    return dict(limits)


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
