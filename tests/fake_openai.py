"""A scripted chat-completions API behind httpx2.MockTransport, for tests of OpenAIMind.

The real `openai` client (3.x, built on httpx2) is used throughout; only the network
is replaced. Each request the client sends is kept (its JSON body) and answered by
the next scripted reply: a completion dict (`reply(...)`), an `httpx2.Response`
(faults: `error(500, ...)`), an exception (a dropped connection, a timeout), or a
callable given the body.

    api = ScriptedApi([reply(calls=[tool_call("walk", direction="north")]), reply("Done.")])
    client = api.client()           # AsyncOpenAI over the mock transport, no retries
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx2
import openai

Answer = Mapping[str, Any] | httpx2.Response | BaseException | Callable[[dict], Any]

BASE_URL = "http://local.test/v1"

_ids = itertools.count(1)


def tool_call(name: str, call_id: str | None = None, *, raw: str | None = None,
              **arguments: Any) -> dict[str, Any]:
    """One call as the API gives it: `raw` is the arguments text as sent (may be broken)."""
    return {"id": call_id or f"call_{next(_ids):04d}", "type": "function",
            "function": {"name": name,
                         "arguments": raw if raw is not None else json.dumps(arguments)}}


def reply(content: str | None = None, *, calls: Sequence[Mapping[str, Any]] = (),
          finish: str | None = None, prompt_tokens: int = 100,
          completion_tokens: int = 20) -> dict[str, Any]:
    """A chat completion; the finish reason follows the calls unless given."""
    if finish is None:
        finish = "tool_calls" if calls else "stop"
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [dict(c) for c in calls]
    return {
        "id": f"chatcmpl-{next(_ids):04d}", "object": "chat.completion", "created": 0,
        "model": "local-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def error(status: int, message: str, kind: str = "server_error",
          **headers: str) -> httpx2.Response:
    """An error answer shaped like OpenAI's (Ollama, vLLM and llama.cpp send the same)."""
    return httpx2.Response(status, headers=headers,
                           json={"error": {"message": message, "type": kind,
                                           "code": None, "param": None}})


class ScriptedApi:
    """Answers requests in order from a script; every request body is kept in `requests`."""

    def __init__(self, script: Iterable[Answer] = (),
                 otherwise: Callable[[dict], Answer] | None = None) -> None:
        self.script: list[Answer] = list(script)
        self.otherwise = otherwise
        """Answers each request once the script is used up (None: such a request fails)."""
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []

    def add(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.paths.append(request.url.path)
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
        if isinstance(answer, httpx2.Response):
            return answer
        return httpx2.Response(200, json=dict(answer))

    def client(self, *, max_retries: int = 0) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key="test-key", base_url=BASE_URL, max_retries=max_retries,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)),
        )
