"""The live observer: a Textual app over an ObserverAPI."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from observe.api import ObserverAPI
    from services.world_service import Clock


def observe_world(api: ObserverAPI | None, data_dir: str, clock: Clock | None = None) -> int:
    """Run the observer until the person quits; with no API (no world), say how to
    make one. Returns the exit code."""
    if api is None:
        from observe.tui.no_world import NoWorldApp

        return NoWorldApp(data_dir).run() or 1
    from observe.tui.app import HearthApp

    return HearthApp(api, clock).run() or 0
