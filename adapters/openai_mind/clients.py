"""The client a local model's agents are spoken for through."""

from __future__ import annotations

import openai

from adapters.sdk_http import sdk_http_client


def local_client(base_url: str, api_key: str, retries: int, timeout: float) -> openai.AsyncOpenAI:
    """An OpenAI-SDK client with the SDK's own HTTP client and defaults (proxies from
    the environment included), its connections as Claude's clients' are
    (adapters/sdk_http.py: the same per-request saving)."""
    http = sdk_http_client(openai.DefaultAsyncHttpxClient)
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=retries,
                              timeout=timeout, http_client=http)
