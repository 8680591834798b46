"""The Message Batches API, as the stand-in keeps it (api.py routes /v1/messages/batches here).

The rules come from these pages (as stored copies read them in September 2026); the code
that keeps each one names its page:

- BATCHES (the guide): a batch holds at most 100,000 requests or 256 MB; each request is
  a `custom_id` matching ^[a-zA-Z0-9_-]{1,64}$ and the `params` of a Messages request.
  "Validation of the `params` object for each message request is performed
  asynchronously": a request the Messages API would refuse does not fail the batch, its
  result is `errored` with the standard error shape. `stream: true`, `speed` and
  `max_tokens: 0` are not supported in a batch ("returns a validation error"). Results
  are `succeeded`, `errored`, `canceled` or `expired` (24 hours after creation), "can be
  returned in any order" (match them by `custom_id`), and are billed at 50% of the
  standard prices (errored, canceled and expired ones not at all). Prompt caching works
  in a batch, "on a best-effort basis". "Usage of the Batches API does not affect rate
  limits in the Messages API" (the batch limits of RATE_LIMITS are not kept here).
- CREATE / RETRIEVE / LIST / CANCEL / RESULTS (the reference): the batch object's fields;
  `results_url` is given "only once processing ends", and the results are JSONL
  (application/x-jsonl). A cancel leaves the batch `canceling` until it has ended.

The stand-in's timing (its own choice): a batch has ended `batch_seconds` (of the
stand-in's clock) after its creation, and its requests are answered then, in the order
given, through the prompt cache, on the first look (retrieve, results, list or cancel)
at or after that time, so the cache sees the clock of that look. A request of a batch
sees what an earlier one of the same batch wrote; the real API promises no such hit.
Results come back in the reverse of the requests' order, so that callers match them by
`custom_id`. Answered requests are in `api.served` with `batch=True` and usage
`service_tier: "batch"`; errored ones in `api.refused`, their path ending `#custom_id`.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import httpx2

from tests.standin.catalog import DOCS, RATE_LIMITS
from tests.standin.shape import MESSAGES_API, Refused, bad, cursor_page, json_object

if TYPE_CHECKING:
    from tests.standin.api import StrictMessagesApi

BATCHES = f"{DOCS}/build-with-claude/batch-processing"
CREATE = f"{DOCS}/api/creating-message-batches"
RETRIEVE = f"{DOCS}/api/retrieving-message-batches"
LIST = f"{DOCS}/api/listing-message-batches"
CANCEL = f"{DOCS}/api/canceling-message-batches"
RESULTS = f"{DOCS}/api/retrieving-message-batch-results"
ERRORS = f"{DOCS}/api/errors"
SOURCES = (BATCHES, CREATE, RETRIEVE, LIST, CANCEL, RESULTS, ERRORS, MESSAGES_API, RATE_LIMITS)

PATH = "/v1/messages/batches"
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024
"""BATCHES: "256 MB" (read here as MiB; the page does not say which)."""
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
EXPIRES = 24 * 3600.0
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
JSONL = "application/x-jsonl"


@dataclass
class Batch:
    id: str
    account: str
    created: float
    """The stand-in's clock at creation."""
    wall: datetime.datetime
    """created_at; the other times are this plus the stand-in's seconds since."""
    items: list[tuple[str, dict[str, Any]]]
    due: float
    """When it has ended (created + batch_seconds), or expires (created + 24 h)."""
    expires: bool
    canceled: float | None = None
    """When a cancel was asked for (cancel_initiated_at)."""
    ended: float | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    """One per request, in the requests' order."""


def is_batches(path: str) -> bool:
    return path == PATH or path.startswith(f"{PATH}/")


class Batches:
    def __init__(self, api: StrictMessagesApi) -> None:
        self.api = api
        self.made: dict[str, Batch] = {}
        """Every batch by id, oldest first."""

    def route(self, request: httpx2.Request, path: str,
              account: str) -> tuple[int, Any, dict[str, str]]:
        parts = path.removeprefix(PATH).strip("/").split("/")
        method = request.method
        if parts == [""] and method == "POST":
            return 200, self._create(request, account), {}
        if parts == [""] and method == "GET":
            return 200, self._list(request, account), {}
        if len(parts) == 1 and method == "GET":
            return 200, self._object(self._find(parts[0], account), request), {}
        if len(parts) == 2 and parts[1] == "results" and method == "GET":
            return 200, self._results(self._find(parts[0], account)), {"content-type": JSONL}
        if len(parts) == 2 and parts[1] == "cancel" and method == "POST":
            return 200, self._object(self._cancel(self._find(parts[0], account)), request), {}
        raise Refused(404, "not_found_error", "Not found")

    # ------------------------------------------------------------------ create

    def _create(self, request: httpx2.Request, account: str) -> dict[str, Any]:
        if len(request.content) > MAX_BYTES:  # BATCHES (troubleshooting): 413 request_too_large
            raise Refused(413, "request_too_large", "Request exceeds the maximum allowed "
                          "size of 256 MB for a Message Batch.")
        body = json_object(request.content)
        extra = sorted(set(body) - {"requests"})  # CREATE: the body is `requests` alone
        if extra:
            raise bad(f"{extra[0]}: Extra inputs are not permitted")
        if "requests" not in body:
            raise bad("requests: Field required")
        requests = body["requests"]
        if not isinstance(requests, list):
            raise bad("requests: Input should be a valid list")
        if not requests:  # CREATE: minItems 1
            raise bad("requests: List should have at least 1 item after validation, not 0")
        if len(requests) > MAX_REQUESTS:  # CREATE: maxItems 100000; BATCHES: limitations
            raise bad(f"requests: List should have at most {MAX_REQUESTS} items after "
                      f"validation, not {len(requests)}")
        items: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for at, item in enumerate(requests):
            where = f"requests.{at}"
            if not isinstance(item, dict):
                raise bad(f"{where}: Input should be a valid dictionary")
            for key in ("custom_id", "params"):  # CREATE: both required, nothing else
                if key not in item:
                    raise bad(f"{where}.{key}: Field required")
            extra = sorted(set(item) - {"custom_id", "params"})
            if extra:
                raise bad(f"{where}.{extra[0]}: Extra inputs are not permitted")
            custom_id = item["custom_id"]
            # CREATE / BATCHES: 1 to 64 characters, ^[a-zA-Z0-9_-]{1,64}$
            if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
                raise bad(f"{where}.custom_id: String should match pattern "
                          "'^[a-zA-Z0-9_-]{1,64}$'")
            if custom_id in seen:  # CREATE: "Must be unique for each request"
                raise bad(f"{where}.custom_id: custom_id {custom_id!r} is used by another "
                          "request in this batch; each must be unique within the batch")
            if not isinstance(item["params"], dict):
                raise bad(f"{where}.params: Input should be a valid dictionary")
            seen.add(custom_id)
            items.append((custom_id, item["params"]))
        api = self.api
        now = api.clock()
        late = api.batch_seconds > EXPIRES  # BATCHES: "Batches expire ... within 24 hours"
        batch = Batch(api._id("msgbatch"), account, now, api._wall(), items,
                      now + (EXPIRES if late else api.batch_seconds), late)
        self.made[batch.id] = batch
        return self._object(batch, request)  # BATCHES: "processing status of in_progress"

    # ------------------------------------------------------------------ look

    def _find(self, batch_id: str, account: str) -> Batch:
        batch = self.made.get(batch_id)
        if batch is None or batch.account != account:  # BATCHES: batches are per Workspace
            raise Refused(404, "not_found_error", f"message_batch: {batch_id} not found")
        self._settle(batch)
        return batch

    def _settle(self, batch: Batch) -> None:
        """End the batch if its time has come (or it was canceled), at this look."""
        if batch.ended is not None:
            return
        now = self.api.clock()
        if batch.canceled is not None:  # BATCHES: canceling, then ended; none was sent
            batch.results = [self._line(c, {"type": "canceled"}) for c, _ in batch.items]
        elif now < batch.due:
            return
        elif batch.expires:  # BATCHES: "expired": 24 hours passed before it was sent
            batch.results = [self._line(c, {"type": "expired"}) for c, _ in batch.items]
            now = batch.due
        else:
            batch.results = [self._line(c, self._answer(batch, c, params))
                             for c, params in batch.items]
        batch.ended = now

    def _answer(self, batch: Batch, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request, by the rules of POST /v1/messages (api.py `_messages`), outside the
        Messages rate limits; a refusal is its `errored` result (BATCHES)."""
        from tests.standin.api import Refusal

        api = self.api
        api._batch = True
        try:
            if params.get("stream") is True:  # BATCHES: "What can be batched"
                raise bad("stream: streaming is not supported in a Message Batch; its "
                          "results come back as a file")
            if "speed" in params:
                raise bad("speed: fast mode is not supported in a Message Batch")
            if params.get("max_tokens") == 0:
                raise bad("max_tokens: must be at least 1 in a Message Batch (cache "
                          "pre-warming with max_tokens 0 is not supported)")
            reply = api._messages(params, batch.account, {})
        except Refused as refusal:
            api.refused.append(Refusal(refusal.status, refusal.kind, refusal.message,
                                       f"{PATH}/{batch.id}#{custom_id}"))
            # BATCHES: result.error is "the standard error shape" (ERRORS)
            return {"type": "errored", "error": {
                "type": "error", "error": {"type": refusal.kind, "message": refusal.message},
                "request_id": api._id("req")}}
        finally:
            api._batch = False
            api._due = None  # a batch's replies add no latency to the answer that ended it
        return {"type": "succeeded", "message": reply}

    @staticmethod
    def _line(custom_id: str, result: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "result": result}

    def _cancel(self, batch: Batch) -> Batch:
        # CANCEL: "Batches may be canceled any time before processing ends"; once ended,
        # the stand-in refuses (ASSUMED: the page names no error for it).
        if batch.ended is not None:
            raise bad(f"message_batch {batch.id} has already ended and cannot be canceled")
        if batch.canceled is None:
            batch.canceled = self.api.clock()
        return batch

    def _results(self, batch: Batch) -> bytes:
        if batch.ended is None:  # RESULTS lists only "4XX"; the stand-in's choice (ASSUMED)
            raise bad(f"message_batch {batch.id} has not ended yet; its results are "
                      "available once processing_status is 'ended'")
        # RESULTS: "not guaranteed to be in the same order as requests": here, reversed
        return "".join(json.dumps(line) + "\n" for line in reversed(batch.results)).encode()

    def _object(self, batch: Batch, request: httpx2.Request) -> dict[str, Any]:
        """RETRIEVE: the Message Batch object."""
        counts = dict.fromkeys(COUNTS, 0)
        if batch.ended is None:  # RETRIEVE: requests are `processing` until the batch ends
            counts["processing"] = len(batch.items)
        for line in batch.results:
            counts[line["result"]["type"]] += 1
        status = ("ended" if batch.ended is not None
                  else "canceling" if batch.canceled is not None else "in_progress")
        # RETRIEVE: results_url on the API's own host, e.g.
        # https://api.anthropic.com/v1/messages/batches/msgbatch_.../results (the SDK GETs
        # it as given, so it must name the host the request came to: serve() included)
        host = request.headers.get("host") or request.url.netloc.decode()
        url = f"{request.url.scheme}://{host}{PATH}/{batch.id}/results"

        def stamp(at: float | None) -> str | None:  # RFC 3339, as the docs' examples
            if at is None:
                return None
            when = batch.wall + datetime.timedelta(seconds=at - batch.created)
            return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

        return {"id": batch.id, "type": "message_batch", "processing_status": status,
                "request_counts": counts, "ended_at": stamp(batch.ended),
                "created_at": stamp(batch.created),
                "expires_at": stamp(batch.created + EXPIRES),  # "24 hours after creation"
                "cancel_initiated_at": stamp(batch.canceled), "archived_at": None,
                "results_url": url if batch.ended is not None else None}

    def _list(self, request: httpx2.Request, account: str) -> dict[str, Any]:
        # LIST: "Most recently created batches are returned first"; limit 1..1000
        # (default 20); after_id / before_id cursors, as the Models list pages.
        query = parse_qs(str(request.url.query, "ascii") if isinstance(request.url.query, bytes)
                         else str(request.url.query))
        rows = [b for b in reversed(self.made.values()) if b.account == account]
        for batch in rows:
            self._settle(batch)
        page, more = cursor_page(rows, [b.id for b in rows], query, "message batch")
        return {"data": [self._object(b, request) for b in page], "has_more": more,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None}
