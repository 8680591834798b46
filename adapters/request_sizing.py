"""How big a request to a Claude model may be, given the limits its key has.

The Messages API meters each model class with three token buckets a minute, refilled
continuously: requests, input tokens and output tokens
(https://platform.claude.com/docs/en/api/rate-limits). What follows from its rules:

- ITPM counts `input_tokens` and `cache_creation_input_tokens`, not cache reads, and
  is "estimated at the beginning of each request". A request whose uncached input is
  more than the whole bucket is refused however long it waits; an agent's first turn,
  or any turn after compaction rewrote its history, writes its whole prompt to the
  cache, so the history a request may carry is bounded by the bucket (`history_room`).
- OTPM is "evaluated in real time as output tokens are produced ... max_tokens does not
  factor into OTPM rate limit calculations". So `max_tokens` costs no room; it is
  still kept within the output limit, so that no one reply may write more than a
  minute's worth, with the room the chosen effort's thinking needs (`ROOM_FOR_EFFORT`:
  a reply cut off by `max_tokens` is a failed turn) and as much more as leaves the
  bucket to `SHARE` such replies. An output limit below that room serves no turn: the
  run stops and says which limit (`LimitTooLow`), as it does for input no bucket holds.

Until a key's first answer tells its limits, each class is assumed to have the
lowest limits the docs have published (`LOWEST_TIER`), so the first requests fit any
such key; a workspace an administrator set lower is told by the first answer's
headers, a refusal's included.
"""

from __future__ import annotations

from core.model_catalog import LINES

LOWEST_TIER: dict[str, tuple[int, int, int]] = {
    "fable": (50, 30_000, 8_000),
    "opus": (50, 30_000, 8_000),
    "sonnet": (50, 30_000, 8_000),
    "haiku": (50, 50_000, 10_000),
}
"""(requests, input tokens, output tokens) a minute per model family: the lowest the
rate-limits page has published, its former Tier 1 (Opus and Sonnet 50 / 30,000 /
8,000; Haiku 50 / 50,000 / 10,000). The page now lists a table row per class (Sonnet
5.5 apart from Sonnet 5, say) and an evaluation tier whose limits it does not give;
Fable was never listed that low and is taken as Opus. Only the assumption before the
first answer rests on this table: the answers' headers replace it."""

ROOM_FOR_EFFORT: dict[str | None, int] = {
    "low": 2_000, "medium": 4_000, "high": 8_000, "xhigh": 16_000, "max": 32_000,
    None: 4_000,
}
"""Output tokens one reply at each effort needs room for: thinking, a few words and a
tool call. The docs give no lengths, only that more effort thinks more; these are
about twice the longest thinking an agent's turn was seen to take at each level."""

SHARE = 4
"""Requests of one model that a full output bucket leaves room for at once, once each
has the room its effort needs: with replies that take seconds, one request at a time
would leave the bucket idle while it waits for the model."""

CHARS_PER_TOKEN = 3.0
"""Characters of a request body (JSON, as sent) a token is taken to stand for when a
request's input is estimated before it is sent: a 5.x model's tokenizer counts about
one token for every three to four characters of English, and the JSON around the
words makes the estimate err on the large side."""

INPUT_HEADROOM = 0.8
"""The share of an input bucket one request may be planned to fill: estimates are
estimates, and a request that would fill the whole bucket waits for all of it."""

KINDS = ("requests", "input-tokens", "output-tokens")
WORDS = {"requests": "requests", "input-tokens": "input tokens",
         "output-tokens": "output tokens"}
LIMIT_WORDS = {"requests": "request limit", "input-tokens": "input-token limit",
               "output-tokens": "output-token limit"}


class LimitTooLow(Exception):
    """A limit of the key is below what one request needs: no wait can help; a person
    must change a setting or the limit. `str()` is one line saying which and what to do;
    `kind` the bucket (input-tokens, output-tokens)."""

    def __init__(self, line: str, kind: str = "output-tokens") -> None:
        super().__init__(line)
        self.kind = kind


def model_class(model: str) -> str | None:
    """The family whose lowest limits a model is assumed to have (sonnet, haiku, opus,
    fable), or None for an id that names none (a local endpoint's model)."""
    for line in LINES:
        if line in model:
            return line
    return None


def lowest_tier(model: str) -> dict[str, float] | None:
    """The lowest published limits of the model's class, by bucket kind; None when the
    model is no Claude model (nothing is assumed of an endpoint's own models)."""
    line = model_class(model)
    if line is None:
        return None
    return dict(zip(KINDS, map(float, LOWEST_TIER[line]), strict=True))


def room_needed(effort: str | None, configured: int) -> int:
    """Output tokens a reply at `effort` needs (never more than the configured
    `max_tokens`: a person who set less chose to accept the risk of cut replies)."""
    return min(configured, ROOM_FOR_EFFORT.get(effort, ROOM_FOR_EFFORT[None]))


def output_room(model: str, effort: str | None, configured: int,
                output_limit: float | None, scale: float = 1.0) -> int:
    """The `max_tokens` to send: see the module's docstring. `scale`: how many times the
    usual room this model's replies were found to need (cut replies double it). Raises
    LimitTooLow when the output limit is below what one reply needs."""
    if output_limit is None:
        return configured
    need = min(configured, int(room_needed(effort, configured) * scale))
    if need > output_limit:
        at = f" at effort {effort}" if effort else ""
        raise LimitTooLow(
            f"{model}'s output-token limit is {output_limit:,.0f} a minute, below the "
            f"{need:,} one reply{at} needs: lower `claude.effort` (or `effort:` in "
            "agents.yaml) or raise the key's limit (Claude Console, Limits)")
    return min(configured, max(need, int(output_limit) // SHARE))


def over_limit(model: str, kind: str, limit: float, cost: float) -> str:
    """One line saying a request costs more of a bucket than its whole limit (no wait
    can admit it), and what a person can change."""
    if kind == "output-tokens":
        change = "lower `claude.max_tokens` or `claude.effort`, or raise the key's limit"
    else:
        change = "raise the key's limit"
    return (f"{model}'s {LIMIT_WORDS.get(kind, kind)} is {limit:,.0f} a minute, below the "
            f"{cost:,.0f} one request needs: {change} (Claude Console, Limits)")


def history_room(input_limit: float | None, fixed_chars: int) -> int | None:
    """The most history (JSON characters) a request may carry so that, sent with a cold
    cache (every token a cache write), it still fits the input bucket; None: no limit."""
    if input_limit is None:
        return None
    return max(0, int(input_limit * INPUT_HEADROOM * CHARS_PER_TOKEN) - fixed_chars)


def tokens_of(chars: int) -> float:
    """The input tokens `chars` characters of a request are planned as."""
    return chars / CHARS_PER_TOKEN


def pace_words(model: str, kind: str, limit: float, seconds: float) -> str:
    """Which limit paced a model, in words, with how long requests waited for it."""
    minutes, rest = divmod(round(seconds), 60)
    waited = f"{minutes} min {rest} s" if minutes else f"{rest} s"
    return (f"paced by {model}'s {WORDS.get(kind, kind)}: {limit:,.0f} a minute "
            f"(requests waited {waited} for room)")
