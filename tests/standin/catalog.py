"""The models the stand-in knows, with the rules each one enforces (and where the docs say so).

Every field is a rule some request can break; the URL beside each value is the page it
comes from. "assumed" marks a value the docs we could read did not give: there the
stand-in is strict but reasonable, and says so.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

DOCS = "https://platform.claude.com/docs/en"
THINKING_TABLE = f"{DOCS}/build-with-claude/thinking-troubleshooting"
"""Per model: thinking types accepted, the default, and the types refused with a 400."""
EFFORT = f"{DOCS}/build-with-claude/effort"
PRESERVED = f"{DOCS}/build-with-claude/preserved-thinking"
CACHING = f"{DOCS}/build-with-claude/prompt-caching"
DEPRECATIONS = f"{DOCS}/about-claude/model-deprecations"
OVERVIEW = f"{DOCS}/about-claude/models/overview"
RATE_LIMITS = f"{DOCS}/api/rate-limits"
"""Rate-limit classes (`rate_class`): a table each for Fable 5.x, Opus 5.5, Opus 5, Opus 4.x
("combined traffic across Claude Opus 4.8, Opus 4.7, Opus 4.6, and Opus 4.5"), Sonnet 5.5,
Sonnet 5, Sonnet 4.x ("combined traffic across Sonnet 4.6 and Sonnet 4.5"), Haiku 5.5 and
Haiku 4.5 (the October 2026 page, as listed by
https://www.developersdigest.tech/rate-limits/anthropic; the quotes are the page's footnotes).
Sonnet 4 (retired) was in the Sonnet 4.x total on earlier versions of the page."""

ALL_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
EFFORT_ORDER = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class ModelRule:
    """One model id and what the API holds requests to it to."""

    id: str
    family: str
    """"adaptive" (5.x: adaptive thinking, on by default) or "extended" (4.5: budget_tokens)."""
    max_output: int
    retires: datetime.date | None = None
    """From this date on the id answers 404 and is not listed."""
    efforts: frozenset[str] = frozenset()
    """output_config.effort values accepted; empty: the model refuses effort altogether."""
    default_effort: str | None = None
    token_factor: float = 1.0
    """Tokens per chars/4: the 5.x tokenizer counts about 1.3x what the 4.5 one did."""
    display_name: str = ""
    released: datetime.date = datetime.date(2025, 1, 1)
    deprecated: datetime.date | None = None
    context: int = 200_000
    min_cache: int = 1024
    """Shortest prefix (tokens) a breakpoint caches; below it nothing is written, silently."""
    thinking_types: frozenset[str] = frozenset({"enabled", "disabled"})
    disabled_up_to: str | None = None
    """"disabled" is accepted only at this effort or below (None: at any effort)."""
    forced_tool_choice: bool = True
    forced_tool_needs_thinking_off: bool = False
    prefill: bool = True
    sampling: bool = True
    """Whether non-default temperature / top_p / top_k are accepted."""
    preserved: bool = False
    """Its thinking blocks are bound to their prefix: a changed prefix is a 400."""
    account_bound: bool = False
    """Its thinking blocks work only in the account that produced them (others: dropped)."""
    reads: frozenset[str] = field(default_factory=frozenset)
    """Other models whose thinking blocks this one reads; any other's are dropped, no error."""
    rate_class: str = ""
    """The row of RATE_LIMITS' tables whose buckets it draws from (limits.py PER CLASS):
    models of one class share them. Empty: a class of its own, named by the id."""
    cache_reads_count: bool = False
    """Its cache reads count toward ITPM (RATE_LIMITS' † models: Claude Haiku 3.5 only)."""

    @property
    def adaptive(self) -> bool:
        return self.family == "adaptive"

    @property
    def limits_class(self) -> str:
        return self.rate_class or self.id


_EARLY = frozenset({"claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5", "claude-sonnet-4"})


def _five(id: str, name: str, released: datetime.date, **kw: object) -> ModelRule:
    # 128K output, 1M context, the newer tokenizer (~1.3x, "the same newer tokenizer as Claude 4.7
    # and later"): https://platform.claude.com/docs/en/models/haiku-5-5/whats-new-haiku-5-5,
    # https://platform.claude.com/docs/en/models/sonnet-5-5/overview. Non-default sampling
    # parameters are a 400 on Claude 4.7 and later: DEPRECATIONS ("temperature, top_p, top_k").
    base: dict[str, object] = dict(
        family="adaptive", max_output=128_000, efforts=ALL_EFFORTS, token_factor=1.3,
        display_name=name, released=released, context=1_000_000, min_cache=512,
        thinking_types=frozenset({"adaptive"}), forced_tool_choice=False, prefill=False,
        sampling=False, preserved=True)
    base.update(kw)
    return ModelRule(id=id, **base)  # type: ignore[arg-type]


CATALOG: Mapping[str, ModelRule] = MappingProxyType({m.id: m for m in (
    # Fable 5.1 / Opus 5.5: "Adaptive (always on)", "enabled"/"disabled" refused, forced tool use
    # refused, thinking tied to model and conversation:
    # https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5 ("The first three also
    # apply on Claude Fable 5.1"); reads:
    # https://platform.claude.com/docs/en/build-with-claude/preserved-thinking#switching-models.
    # Fable's release date and minimum cache are assumed.
    _five("claude-fable-5-1", "Claude Fable 5.1", datetime.date(2026, 9, 15),
          default_effort="high", min_cache=1024, rate_class="fable-5",
          reads=frozenset({"claude-opus-5", "claude-opus-5-5"})),
    _five("claude-opus-5-5", "Claude Opus 5.5", datetime.date(2026, 9, 22),
          default_effort="medium", rate_class="opus-5-5",
          reads=_EARLY | {"claude-opus-5", "claude-sonnet-5"}),
    # Sonnet 5.5: "adaptive" and "between_tools" (its lowest setting, at effort high or below, with
    # no other field); account-bound blocks; reads Sonnet 5, Haiku 4.5 and earlier, not Opus 5 /
    # 5.5 or Fable: https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5.
    _five("claude-sonnet-5-5", "Claude Sonnet 5.5", datetime.date(2026, 9, 28),
          default_effort="high", rate_class="sonnet-5-5",
          thinking_types=frozenset({"adaptive", "between_tools"}),
          account_bound=True, reads=_EARLY | {"claude-sonnet-5"}),
    # Haiku 5.5: adaptive by default, effort default medium, blocks work only in the account that
    # made them: https://platform.claude.com/docs/en/models/haiku-5-5/whats-new-haiku-5-5.
    # "disabled" only at effort high or below, forced tool_choice only with thinking off, prefill
    # refused even with thinking off:
    # https://platform.claude.com/docs/en/models/haiku-5-5/migration-guide as quoted by third-party
    # snapshots (not read first-hand). Which models it reads is assumed.
    _five("claude-haiku-5-5", "Claude Haiku 5.5", datetime.date(2026, 10, 7),
          default_effort="medium", rate_class="haiku-5-5", account_bound=True, reads=_EARLY,
          thinking_types=frozenset({"adaptive", "disabled"}), disabled_up_to="high",
          forced_tool_choice=True, forced_tool_needs_thinking_off=True),
    # Opus 5 / Sonnet 5: adaptive by default; "disabled" accepted (Opus 5: at effort high or
    # below); forced tool use accepted (it is a breaking change only from 5.5 on); no prefix
    # binding (THINKING_TABLE,
    # https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5). Prefill refused:
    # "already the case on Opus 5"; Sonnet 5.5's migration guide lists only 4.5 and older as
    # accepting one. Minimum cache for Opus 5 assumed 1,024.
    _five("claude-opus-5", "Claude Opus 5", datetime.date(2026, 7, 24), default_effort="high",
          rate_class="opus-5",
          min_cache=1024, thinking_types=frozenset({"adaptive", "disabled"}),
          disabled_up_to="high", forced_tool_choice=True, preserved=False,
          reads=_EARLY | {"claude-sonnet-5"}),
    _five("claude-sonnet-5", "Claude Sonnet 5", datetime.date(2026, 6, 30),
          default_effort="high", rate_class="sonnet-5", min_cache=1024,
          thinking_types=frozenset({"adaptive", "disabled"}), forced_tool_choice=True,
          preserved=False, reads=_EARLY),
    # 4.5: extended thinking only ("adaptive" refused), off by default: THINKING_TABLE. Effort:
    # Opus 4.5 low/medium/high; Sonnet 4.5 and Haiku 4.5 refuse it (EFFORT, "supportedModels" has
    # no Haiku 4.5; Sonnet 4.5 "rejects effort entirely"). Minimum cache: 4,096 Opus 4.5 and Haiku
    # 4.5, 1,024 Sonnet 4.5 (CACHING). Sonnet 4.5 retires 2026-11-30 (DEPRECATIONS;
    # https://platform.claude.com/docs/en/models/sonnet-4-5/overview).
    ModelRule("claude-haiku-4-5", "extended", 64_000, display_name="Claude Haiku 4.5",
              released=datetime.date(2025, 10, 15), min_cache=4096, reads=_EARLY,
              rate_class="haiku-4-5"),
    ModelRule("claude-sonnet-4-5", "extended", 64_000, retires=datetime.date(2026, 11, 30),
              deprecated=datetime.date(2026, 9, 30), display_name="Claude Sonnet 4.5",
              released=datetime.date(2025, 9, 29), reads=_EARLY, rate_class="sonnet-4"),
    # Opus 4.5 reaches end of life on 2027-01-22 (the SDK's DEPRECATED_MODELS; its
    # deprecation date is not known, so deprecated_at stays empty).
    ModelRule("claude-opus-4-5", "extended", 64_000, efforts=frozenset({"low", "medium", "high"}),
              default_effort="high", display_name="Claude Opus 4.5",
              retires=datetime.date(2027, 1, 22),
              released=datetime.date(2025, 11, 24), min_cache=4096, reads=_EARLY,
              rate_class="opus-4"),
    # Sonnet 4 was retired on 2026-06-15 (release notes,
    # https://platform.claude.com/docs/en/release-notes/overview).
    ModelRule("claude-sonnet-4", "extended", 64_000, retires=datetime.date(2026, 6, 15),
              display_name="Claude Sonnet 4", released=datetime.date(2025, 5, 22),
              reads=_EARLY, rate_class="sonnet-4"),
)})


def effort_at_most(effort: str, ceiling: str) -> bool:
    return EFFORT_ORDER.index(effort) <= EFFORT_ORDER.index(ceiling)
