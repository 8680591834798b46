"""World-wide constants of the domain.

The timezone is kept as an IANA name, not a ZoneInfo object: building a
ZoneInfo reads the system's tz database from disk, and core does no I/O. The
adapter that formats wall-clock times resolves the name.
"""

from __future__ import annotations

HEARTH_TZ_NAME = "America/New_York"

DEFAULT_VISION_RADIUS = 3
"""Cells visible in each direction by day: a 7x7 window."""

NIGHT_VISION_MODIFIER = 0.6
"""Night vision is this share of day vision (rounded, never below 1)."""

CLUSTER_BUFFER = 2
"""Agents within vision + this many cells are scheduled together."""

SENSE_NEARBY_MAX = 10
SENSE_FAR_MAX = 30
"""sense_others buckets: nearby <= 10 < far <= 30 < very far (Manhattan)."""

MAX_WALK_STEPS = 5
"""One walk call may take up to this many steps in one direction."""
MAX_SIGN_LENGTH = 500
MAX_SPEECH_LENGTH = 2000
MAX_PLACE_NAME_LENGTH = 60


def effective_vision_radius(radius: int, is_night: bool) -> int:
    """The radius an agent actually sees, given the time of day."""
    if radius < 0:
        raise ValueError(f"vision radius must be non-negative, got {radius}")
    if not is_night:
        return radius
    return max(1, round(radius * NIGHT_VISION_MODIFIER)) if radius > 0 else 0


def distance_bucket(distance: int) -> str:
    """The categorical distance sense_others reports: nearby, far or very far."""
    if distance <= SENSE_NEARBY_MAX:
        return "nearby"
    if distance <= SENSE_FAR_MAX:
        return "far"
    return "very far"
