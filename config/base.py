"""What every configuration model shares: unknown keys refused, values frozen, types strict,
no number infinite or NaN (YAML's `.inf` and `.nan`: no setting means them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict, StringConstraints

StrictInt = Annotated[int, Strict()]
StrictFloat = Annotated[float, Strict()]
StrictBool = Annotated[bool, Strict()]
NonBlankStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
