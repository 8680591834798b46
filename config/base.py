"""What every configuration model shares: unknown keys refused, values frozen, types strict,
no number infinite or NaN (YAML's `.inf` and `.nan`: no setting means them); and the names
and limits more than one file's models use (item names, the longest count of ticks, the
largest weight), so each file's module can hold its own models alone.

Numbers and booleans are strict: YAML already gives them their types, so a quoted "500"
or a `yes` where a number belongs is a mistake worth reporting, not something to coerce.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Strict, StringConstraints

StrictInt = Annotated[int, Strict()]
StrictFloat = Annotated[float, Strict()]
StrictBool = Annotated[bool, Strict()]
NonBlankStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

_SNAKE_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")

MAX_TICKS = 1_000_000
"""The longest any setting counted in ticks may be (over a century at 24 a day): ticks
added to it stay far from a 64-bit integer's end, in SQLite and numpy alike."""
MAX_WEIGHT = 1000.0
"""The largest relative weight (terrain, weather): sums of them stay finite."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _snake_case(raw: str) -> str:
    """Item types are identifiers that agents type, so keep them uniform."""
    if not _SNAKE_RE.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a lowercase snake_case name (like 'clay_brick')")
    return raw


ItemName = Annotated[str, AfterValidator(_snake_case)]
