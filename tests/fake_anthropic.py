"""A scripted Messages API behind httpx2.MockTransport, for tests of Claude minds.

The real `anthropic` SDK is used throughout; only the network is replaced. Each
request the SDK sends is kept (its JSON body) and answered by the next scripted
reply: a message dict (`reply(...)`), an `httpx2.Response` (faults: 429, 529, 500),
an exception (a dropped connection or a timeout), or a callable given the body.

    api = ScriptedApi([reply(tool_use("walk", direction="north")), reply(text("Done."))])
    client = api.client()           # AsyncAnthropic over the mock transport, no retries
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anthropic
import httpx2

from tests.standin.streaming import events

Answer = Mapping[str, Any] | httpx2.Response | BaseException | Callable[[dict], Any]

_ids = itertools.count(1)


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def tool_use(name: str, call_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id or f"toolu_{next(_ids):04d}", "name": name,
            "input": arguments}


def reply(*blocks: Mapping[str, Any], stop: str | None = None, input_tokens: int = 100,
          output_tokens: int = 20, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    """A Messages API response; the stop reason follows the blocks unless given."""
    if stop is None:
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant",
        "model": "claude-test", "content": list(blocks), "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cache_creation_input_tokens": cache_write,
                  "cache_read_input_tokens": cache_read},
    }


def error(status: int, kind: str, message: str, **headers: str) -> httpx2.Response:
    return httpx2.Response(status, headers=headers,
                           json={"type": "error", "error": {"type": kind, "message": message}})


class ScriptedApi:
    """Answers requests in order from a script; every request body is kept in `requests`."""

    def __init__(self, script: Iterable[Answer] = (),
                 otherwise: Callable[[dict], Answer] | None = None) -> None:
        self.script: list[Answer] = list(script)
        self.otherwise = otherwise
        """Answers each request once the script is used up (None: such a request fails)."""
        self.requests: list[dict[str, Any]] = []

    def add(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.script:
            answer = self.script.pop(0)
        elif self.otherwise is not None:
            answer = self.otherwise
        else:
            raise AssertionError(f"request {len(self.requests)} has no scripted answer")
        if callable(answer) and not isinstance(answer, (Mapping, httpx2.Response)):
            answer = answer(body)
        if isinstance(answer, BaseException):
            raise answer
        if body.get("stream"):  # the API streams a 200 answer; refusals come whole
            return _streamed(answer)
        if isinstance(answer, httpx2.Response):
            return answer
        return httpx2.Response(200, json=dict(answer))

    def client(self, *, max_retries: int = 0) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key="test-key", max_retries=max_retries,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)),
        )


def _streamed(answer: Mapping[str, Any] | httpx2.Response) -> httpx2.Response:
    """A scripted answer to a streamed request: a reply as its events (with the
    scripted response's headers, if it was one); anything but a 200 as it is."""
    headers: dict[str, str] = {}
    if isinstance(answer, httpx2.Response):
        if answer.status_code != 200 or answer.headers.get("content-type") == \
                "text/event-stream":  # a refusal, or a stream scripted as it is
            return answer
        headers = {k: v for k, v in answer.headers.items()
                   if k.lower() not in ("content-type", "content-length")}
        answer = answer.json()
    return httpx2.Response(200, headers={**headers, "content-type": "text/event-stream"},
                           content=events(dict(answer)))
