"""A Messages API stand-in that refuses what the real API refuses, for tests.

    api = StrictMessagesApi()                 # the CATALOG's models, one key "test-key"
    client = api.client()                     # AsyncAnthropic over httpx2.MockTransport
    with api.serve() as base_url: ...         # or on 127.0.0.1 for ANTHROPIC_BASE_URL
    api.refused, api.served                   # what was refused, and what was answered

Options beyond the defaults: `today=` (retirement), `keys={key: account}`, `behaviour=`,
`clock=` (seconds, for cache lifetimes and the rate limit), `rpm=` (a 429 past it), and
`api.faults.append(529)` for the next request to fail; `sync_client()` for sync code.

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
