"""A Messages API stand-in that refuses what the real API refuses, for tests.

    api = StrictMessagesApi()                 # the CATALOG's models, one key "test-key"
    client = api.client()                     # AsyncAnthropic over httpx2.MockTransport
    with api.serve() as base_url: ...         # or on 127.0.0.1 for ANTHROPIC_BASE_URL
    api.refused, api.served                   # what was refused, and what was answered

Options beyond the defaults: `today=` (retirement), `keys={key: account}`, `behaviour=`,
`clock=` (seconds, for cache lifetimes and the rate limits), and `api.faults.append(529)`
for the next request to fail; `sync_client()` for sync code.

Limits mode (tests/standin/limits.py, each rule quoted from the rate-limits page): token
buckets per account and model class, `rpm=`, `itpm=`, `otpm=` for every class or
`limits={"sonnet": (50, 30_000, 8_000), "haiku": (50, 50_000, 10_000)}` per class (a key
names a class, "sonnet-5-5", or the start of several, "sonnet"); ITPM counts uncached input
and cache writes; OTPM the output as it is written (`reserve_max_tokens=True`: the older
rule, max_tokens held while the reply is written); 429 + `retry-after` past a limit, and
always for a request that can never fit; the `anthropic-ratelimit-*` headers on every
answer. `latency=` seconds of the stand-in's clock a reply (real waits with the real clock;
`sleep=` with an injected one). `api.limited` lists the 429s, `api.figures()` counts per
class (served, 429s by bucket, never fits, cut by max_tokens, tokens).

Message Batches (tests/standin/batches.py): `client.messages.batches` create / retrieve /
list / cancel / results. A batch is refused whole (400) only for its own faults (no
requests, a custom_id repeated or not matching ^[a-zA-Z0-9_-]{1,64}$, unknown fields); each
request's params are checked as /v1/messages checks them when the batch ends, and a refused
one is `errored`. `batch_seconds=` (0 by default) is when a batch has ended, on the
stand-in's clock; its requests are answered then (through the prompt cache, outside the
rate limits), on the first look at or after it. Results come in reverse order (match them
by custom_id); answered ones are in `api.served` with `batch=True` (batch prices).

Unlike tests/fake_anthropic.py (which answers whatever it is scripted to), every request
is checked against the documented rules first (shape, models and retirement, effort and
thinking per model, cache breakpoints, tool_use/tool_result pairing, thinking-block
signatures and their prefix), and usage follows a simulated prompt cache. Each rule names
its doc page in tests/standin/. A request with `stream: true` is answered as the API
streams (tests/standin/streaming.py); tests/fake_anthropic.py streams its scripted
replies the same way. The model's part is `behaviour(request) -> Plan`;
`simple_agent` walks or gathers, ends its turn after the results, retells for the
narrator keeping every fact, and answers the Gardener with valid JSON.
"""

from tests.standin.agent import THINKING_TOKENS, Plan, Request, simple_agent
from tests.standin.api import Refusal, Served, StrictMessagesApi
from tests.standin.catalog import CATALOG, ModelRule

__all__ = ["CATALOG", "THINKING_TOKENS", "ModelRule", "Plan", "Refusal", "Request", "Served",
           "StrictMessagesApi", "simple_agent"]
