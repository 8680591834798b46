"""The Messages API's rate limits, as the stand-in keeps them ("limits mode").

Every rule below is quoted from RATE_LIMITS (https://platform.claude.com/docs/en/api/rate-limits,
the page as stored copies of it read in June-October 2026; the quotes are from the English
page), and the code that keeps each rule cites it:

- TOKEN BUCKET: "The API uses the token bucket algorithm to do rate limiting. This means
  that your capacity is continuously replenished up to your maximum limit, rather than
  being reset at fixed intervals." A bucket holds at most its per-minute limit and
  refills at limit/60 a second (`TokenBucket`).
- PER CLASS: "The rate limits for the Messages API are measured in requests per minute
  (RPM), input tokens per minute (ITPM), and output tokens per minute (OTPM) for each
  model class", and "Rate limits are applied separately for each model". The tables
  give each row its own limits; a row may be several models: "Sonnet 4.x rate limit is
  a total limit that applies to combined traffic across Sonnet 4.6 and Sonnet 4.5.
  Claude Sonnet 5 has a separate rate limit and is not part of this combined bucket"
  (likewise Opus 4.x and Opus 5). The October 2026 page has a table each for Sonnet 5.5,
  Sonnet 5, Sonnet 4.x, Haiku 5.5, Haiku 4.5, Opus 5.5, Opus 5, Opus 4.x and Fable 5.x
  (as listed by https://www.developersdigest.tech/rate-limits/anthropic, "read on
  October 17, 2026"). So a class is a row: `ModelRule.rate_class` in catalog.py.
  Limits are "set at the organization level": buckets are per account and class.
- ITPM: "For most Claude models, only uncached input tokens count toward your ITPM rate
  limits": `input_tokens` and `cache_creation_input_tokens` count,
  `cache_read_input_tokens` do not, except on the models marked † ("Claude Haiku 3.5
  ... also counts `cache_read_input_tokens` toward ITPM rate limits";
  `ModelRule.cache_reads_count`). "ITPM rate limits are estimated at the beginning of
  each request, and the estimate is adjusted during the request to reflect the actual
  number of input tokens used": the stand-in knows the exact count, and takes it as
  the request starts.
- OTPM: "OTPM rate limits are evaluated in real time as output tokens are produced,
  counting only the actual tokens generated. The `max_tokens` parameter does not
  factor into OTPM rate limit calculations, so there is no rate limit downside to
  setting a higher `max_tokens` value." A reply's output tokens leave the bucket
  evenly over the time the reply takes (`latency`), and `max_tokens` costs nothing.
  What the API does when the bucket runs dry while a reply is being written is not
  said; the stand-in lets the reply finish (the bucket goes below zero) and admits no
  request while the bucket holds less than one token (ASSUMED).
  `reserve_max_tokens=True` keeps the page's older rule instead (it is still in the
  docs.anthropic.com translations): "OTPM rate limits are estimated based on max_tokens
  at the beginning of each request, and the estimate is adjusted at the end of the
  request to reflect the actual number of output tokens used".
- 429: "If you exceed any of the rate limits you will get a 429 error describing which
  rate limit was exceeded, along with a `retry-after` header indicating how long to
  wait"; retry-after is "The number of seconds to wait until you can retry the request.
  Earlier retries will fail." The error type is `rate_limit_error` (the page's own
  spend-cap example: "The error type is `rate_limit_error`, the same as for a rate
  limit"). The message is the API's as users quote it (e.g.
  https://github.com/continuedev/continue/issues/12057, April 2026: "This request would
  exceed your organization's rate limit of 30,000 input tokens per minute (org: ...,
  model: claude-sonnet-4-20250514). ..."); the page does not give one.
- NEVER FITS: a request costing more than a bucket's whole limit (today: uncached input
  above the ITPM limit; with `reserve_max_tokens`, also `max_tokens` above the OTPM
  limit) is refused whenever it comes: a bucket never holds more than its limit. The
  page says nothing of its own about such a request, and users report the same 429
  and message for it (a 56,919-token prompt against 30,000 ITPM, refused on every
  retry: https://github.com/PRQELT/Autonomix/issues/8). Its retry-after is when the
  bucket is next full, after which it fails again (the header is always sent; no wait
  is enough).
- HEADERS: "The API response includes headers that show you the rate limit enforced,
  current usage, and when the limit will be reset": `anthropic-ratelimit-requests-*`,
  `-input-tokens-*`, `-output-tokens-*` and `-tokens-*`, each `-limit`, `-remaining`,
  `-reset`; token counts remaining are "rounded to the nearest thousand", a reset is
  "The time when the ... rate limit will be fully replenished, provided in RFC 3339
  format". "The `anthropic-ratelimit-tokens-*` headers display the values for the most
  restrictive limit currently in effect. ... If Workspace limits do not apply, the
  headers will return the total tokens remaining, where total is the sum of input and
  output tokens" (the stand-in has no workspaces: input + output). The
  `anthropic-priority-*` headers are Priority Tier only, and not sent.

Not modelled: "You might hit rate limits over shorter time intervals. For instance, a
rate of 60 requests per minute (RPM) might be enforced as 1 request per second" (a
bucket here holds the full minute's limit); acceleration limits ("429 errors because
of acceleration limits on the API if your organization has a sharp increase in usage");
workspace limits; the spend cap.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.standin.catalog import DOCS, ModelRule

RATE_LIMITS = f"{DOCS}/api/rate-limits"
KINDS = ("requests", "input-tokens", "output-tokens")
WORDS = {"requests": "requests", "input-tokens": "input tokens",
         "output-tokens": "output tokens"}

Limits = tuple[int | None, int | None, int | None]
"""(requests, input tokens, output tokens) a minute; None: no limit of that kind."""


@dataclass
class _Flow:
    """Tokens leaving a bucket evenly from `start` to `end` (at once when they are equal);
    a negative amount comes back."""

    start: float
    end: float
    amount: float


class TokenBucket:
    """TOKEN BUCKET: at most `limit`, refilled continuously at limit/60 a second. Flows
    are tokens taken while a reply is being written (OTPM "in real time as output
    tokens are produced"); the level may go below zero while they run."""

    def __init__(self, limit: float, level: float, at: float) -> None:
        if limit <= 0:
            raise ValueError(f"a rate limit must be above 0, not {limit}")
        self.limit, self.level, self.at = float(limit), float(level), at
        self.flows: list[_Flow] = []

    @property
    def rate(self) -> float:
        return self.limit / 60.0

    def advance(self, now: float) -> float:
        """Bring the level to `now` (refill and flows, exactly) and return it."""
        if now > self.at:
            self.level = self._level_at(now)
            self.flows = [f for f in self.flows if f.end > now]
            self.at = now
        return self.level

    def take(self, amount: float) -> None:
        self.level -= amount

    def flow(self, start: float, end: float, amount: float) -> None:
        """`amount` tokens to leave evenly between `start` and `end` (>= the bucket's now)."""
        if end <= self.at:  # already due
            self.level = min(self.limit, self.level - amount)
        else:
            self.flows.append(_Flow(max(start, self.at), end, amount))

    def wait_for(self, need: float, now: float) -> float:
        """Seconds from `now` until the bucket holds `need` (the flows known counted);
        math.inf when it never can (more than its limit: NEVER FITS)."""
        if need > self.limit:
            return math.inf
        level, at = self.advance(now), now
        if level >= need:
            return 0.0
        for end in self._breakpoints(now):
            net = self._net_rate(at, end)
            if net > 0 and level + net * (end - at) >= need:
                return at + (need - level) / net - now
            level = self._step(level, at, end)
            at = end
            if level >= need:
                return at - now
        return at + (need - level) / self.rate - now

    def full_in(self, now: float) -> float:
        """Seconds until the bucket is full again (the reset headers)."""
        return self.wait_for(self.limit, now)

    # ------------------------------------------------------------------ exact stepping

    def _breakpoints(self, after: float, until: float = math.inf) -> list[float]:
        """Where a flow starts or ends, in (after, until]."""
        points = {p for f in self.flows for p in (f.start, f.end) if after < p <= until}
        return sorted(points)

    def _net_rate(self, a: float, b: float) -> float:
        """Refill less the flows running over the whole of (a, b) (no breakpoint inside)."""
        drain = sum(f.amount / (f.end - f.start) for f in self.flows
                    if f.end > f.start and f.start <= a and f.end >= b)
        return self.rate - drain

    def _step(self, level: float, a: float, b: float) -> float:
        """The level at b from a, no breakpoint strictly between; flows due at b (at once)
        are applied at b."""
        net = self._net_rate(a, b)
        level = min(self.limit, level + net * (b - a)) if net >= 0 else (
            min(self.limit, level) + net * (b - a))
        for f in self.flows:
            if f.end == f.start == b:
                level = min(self.limit, level - f.amount)
        return level

    def _level_at(self, now: float) -> float:
        level, at = self.level, self.at
        for point in self._breakpoints(at, now):
            level, at = self._step(level, at, point), point
        return self._step(level, at, now) if now > at else level


def resolve(limits: Mapping[str, Limits], rate_class: str) -> Limits | None:
    """The limits a class has: the entry named by the class itself, else by the longest
    key it begins with ("sonnet" covers sonnet-5-5, sonnet-5 and sonnet-4; each keeps
    its own buckets, PER CLASS). None when no key names it."""
    if rate_class in limits:
        return limits[rate_class]
    keys = [k for k in limits if rate_class.startswith(f"{k}-")]
    return limits[max(keys, key=len)] if keys else None


def counted(usage: Mapping[str, Any], rule: ModelRule | None) -> int:
    """ITPM: input_tokens + cache_creation_input_tokens, and cache reads on the † models."""
    tokens = int(usage.get("input_tokens") or 0) + int(
        usage.get("cache_creation_input_tokens") or 0)
    if rule is not None and rule.cache_reads_count:
        tokens += int(usage.get("cache_read_input_tokens") or 0)
    return tokens


def message(limit: int, kind: str, account: str, model: str) -> str:
    """The 429's message, as users quote the API's (see the module's docstring)."""
    return (f"This request would exceed your organization's rate limit of {limit:,} "
            f"{WORDS[kind]} per minute (org: {account}, model: {model}). For details, "
            f"refer to: {RATE_LIMITS}. You can see the response headers for current usage. "
            "Please reduce the prompt length or the maximum tokens requested, or try again "
            "later.")


@dataclass(frozen=True)
class Limited:
    """One request answered 429 for a rate limit."""

    at: float
    """The stand-in's clock when it came."""
    model: str
    rate_class: str
    kind: str
    """The bucket named: requests, input-tokens or output-tokens."""
    cost: float
    limit: int
    never_fits: bool
    """Its cost exceeds the bucket's whole limit: no wait would have let it in."""
    retry_after: int


@dataclass
class ClassFigures:
    """What one model class saw: for tests to assert and benches to print."""

    served: int = 0
    limited: Counter[str] = field(default_factory=Counter)
    """429s by bucket, for requests that would fit once the bucket refills."""
    never_fits: Counter[str] = field(default_factory=Counter)
    """429s by bucket, for requests that cost more than the bucket's whole limit."""
    cut: int = 0
    """Replies whose stop_reason was max_tokens."""
    input_counted: int = 0
    """Input tokens counted toward ITPM (uncached input + cache writes; + reads for †)."""
    cache_read: int = 0
    output: int = 0
    max_tokens: int = 0
    """max_tokens asked, summed over served requests."""

    @property
    def refused(self) -> int:
        return sum(self.limited.values()) + sum(self.never_fits.values())
