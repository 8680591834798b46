"""A prompt cache that reports usage the way the API does.

Source: https://platform.claude.com/docs/en/build-with-claude/prompt-caching
- The prefix is tools, then system, then messages, up to and including the block that
  carries cache_control; each breakpoint writes the prefix up to it.
- "The lookback window is 20 blocks": a breakpoint finds an earlier entry at most 20
  positions back, counting its own; the longest prefix found is read.
- A prefix shorter than the model's minimum is not written, and no error is given.
- Entries live 5 minutes, or an hour with ttl "1h"; each read refreshes the lifetime.
- input_tokens counts only what comes after the last breakpoint or cache read:
  total = cache_read_input_tokens + cache_creation_input_tokens + input_tokens.
Entries are kept per model and account (an assumption of the stand-in: one account's
cache is never read by another).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

LOOKBACK = 20
TTL = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class Block:
    text: str
    """Canonical JSON of the block (without cache_control)."""
    tokens: int
    ttl: str | None = None
    """None: no breakpoint here; else "5m" or "1h"."""


class PromptCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.entries: dict[str, tuple[float, float]] = {}
        """key -> (expires at, lifetime)"""
        self._pruned = float("-inf")

    def usage(self, scope: str, blocks: Sequence[Block], min_cache: int) -> dict[str, int]:
        now = self.clock()
        if now - self._pruned >= 1.0 or now < self._pruned:  # expired entries go, now and then
            self.entries = {k: v for k, v in self.entries.items() if v[0] > now}
            self._pruned = now
        keys, totals, running, digest = [], [], 0, hashlib.sha256(scope.encode())
        for block in blocks:
            digest.update(block.text.encode() + b"\x00")
            keys.append(f"{scope}:{digest.copy().hexdigest()}")
            running += block.tokens
            totals.append(running)
        marks = [i for i, b in enumerate(blocks) if b.ttl]
        read = -1
        for mark in marks:
            for at in range(mark, max(-1, mark - LOOKBACK), -1):
                entry = self.entries.get(keys[at])
                if entry is not None and entry[0] > now:  # an entry not yet pruned may be old
                    read = max(read, at)
                    break
        if read >= 0:
            life = self.entries[keys[read]][1]
            self.entries[keys[read]] = (now + life, life)
        made = {"5m": 0, "1h": 0}
        start = read + 1
        for mark in marks:
            if mark <= read or totals[mark] < min_cache:
                continue
            ttl = blocks[mark].ttl or "5m"
            made[ttl] += totals[mark] - (totals[start - 1] if start > 0 else 0)
            start = mark + 1
            self.entries[keys[mark]] = (now + TTL[ttl], TTL[ttl])
        cached = totals[read] if read >= 0 else 0
        created = made["5m"] + made["1h"]
        return {"input_tokens": running - cached - created,
                "cache_creation_input_tokens": created, "cache_read_input_tokens": cached,
                "ephemeral_5m_input_tokens": made["5m"], "ephemeral_1h_input_tokens": made["1h"]}
