"""The pieces a `Capacity` (adapters/capacity.py) is built of: Hearth's copy of one of
the API's token buckets, an admitted request's ticket, the figures a bench reads, and
how the `anthropic-ratelimit-*` headers' numbers and times are read
(https://platform.claude.com/docs/en/api/rate-limits).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

HEADER = "anthropic-ratelimit-"
KINDS = ("requests", "input-tokens", "output-tokens")


@dataclass
class Bucket:
    """Hearth's copy of one of the API's token buckets (per minute, refilled continuously)."""

    limit: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        if now > self.at:
            self.level = min(self.limit, self.level + (now - self.at) * self.limit / 60.0)
            self.at = now

    def wait_for(self, cost: float, now: float) -> float:
        """Seconds until `cost` is in the bucket (a cost above the limit waits for a full one)."""
        self.refill(now)
        need = min(cost, self.limit) - self.level
        return 0.0 if need <= 0 else need * 60.0 / self.limit


@dataclass
class Ticket:
    """One admitted request, and what its answer must be set against."""

    seq: int
    started: float
    input_tokens: float
    output_tokens: float
    marks: tuple[float, float, float]
    """Requests, input and output tokens admitted before this one (running totals)."""
    waited: float = 0.0
    """Seconds it waited for room."""
    done: bool = False


@dataclass
class Figures:
    """What a capacity did, for a bench or a status line."""

    admitted: int = 0
    answered: int = 0
    rate_limited: int = 0
    overloaded: int = 0
    peak_in_flight: int = 0
    waited: float = 0.0
    windows: list[int] = field(default_factory=list)
    """Each size the window took, in order."""
    waited_for: dict[str, float] = field(default_factory=dict)
    """Seconds requests waited, by what held them: a bucket's kind, "window" (too many
    in flight) or "pause" (after a 429)."""


def number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def instant(raw: str | None) -> float | None:
    """An RFC 3339 time as a Unix time, or None."""
    if not raw:
        return None
    try:
        return dt.datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
