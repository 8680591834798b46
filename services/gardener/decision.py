"""A decision: the interventions a cycle asks for, with the reason, read strictly.

A model's answer is outside input. It must be one JSON object,
`{"rationale": "...", "interventions": [{"type": "...", ...params}, ...]}`, nothing
more; every intervention must be one the domain knows, with exactly its parameters
(`core.gardener.interventions.from_params`). Anything else makes the whole answer
invalid, and an invalid answer means no intervention this cycle (the cycle records
why). The same reading serves the rules' decisions, so both take one path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from core.gardener import Intervention, NoIntervention
from core.gardener.interventions import InvalidIntervention, from_params

MAX_INTERVENTIONS = 5
"""More than any level allows (3), so a model asking for more is told plainly."""


class InvalidDecision(ValueError):
    """An answer that cannot be taken as a decision; the cycle intervenes in nothing."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rationale: StrictStr = Field(min_length=1, max_length=2000)
    interventions: list[dict[str, Any]] = Field(max_length=MAX_INTERVENTIONS)


@dataclass(frozen=True, slots=True)
class Decision:
    interventions: tuple[Intervention, ...]
    """Never holds NoIntervention: "none" is the empty tuple."""
    rationale: str

    def as_json(self) -> str:
        return json.dumps({"rationale": self.rationale, "interventions": [
            {"type": i.kind, **i.params()} for i in self.interventions]}, sort_keys=True)


def _json_object(text: str) -> object:
    """The JSON object in `text`: all of it, or the one fenced or braced part of it (a
    model may wrap its JSON in a code fence or a sentence)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(stripped[start:end + 1])
        except ValueError:
            pass
    raise InvalidDecision("the answer is not a JSON object")


def read_decision(answer: str | object, size: tuple[int, int]) -> Decision:
    """The decision `answer` (model text, or an already parsed object) states, for a
    world of `size`; InvalidDecision saying what is wrong otherwise."""
    raw = _json_object(answer) if isinstance(answer, str) else answer
    if not isinstance(raw, dict):
        raise InvalidDecision("the answer must be a JSON object with rationale and interventions")
    try:
        parsed = _Answer.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise InvalidDecision(f"{where}: {first['msg']}") from None
    chosen: list[Intervention] = []
    for n, item in enumerate(parsed.interventions):
        params = dict(item)
        kind = params.pop("type", None)
        try:
            intervention = from_params(kind, params, size)
        except InvalidIntervention as exc:
            raise InvalidDecision(f"interventions.{n}: {exc}") from None
        if not isinstance(intervention, NoIntervention):
            chosen.append(intervention)
    return Decision(tuple(chosen), parsed.rationale.strip())
