"""The command palette's Hearth commands (ctrl+p): follow an agent, go to an agent or
a landmark, run N ticks, toggle ASCII, return to live, and in a fork show its lineage.

Commands are made afresh from the app's latest snapshot each time the palette asks,
so a renamed place or a new agent shows up without any bookkeeping. Typing "run 25"
offers "Run 25 ticks" for any number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider

from observe.lineage import chain_words, origin_words
from observe.tui.safe_text import clean, short_words

if TYPE_CHECKING:
    from observe.snapshot import WorldSnapshot
    from storage.lineage import WorldLineage

_RUN_N = re.compile(r"^\s*(?:run\s*)?(\d{1,6})(?:\s*ticks?)?\s*$", re.IGNORECASE)
RUN_CHOICES = (1, 10, 100)


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    title: str
    help: str
    run: Callable[[], object]


class Commanded(Protocol):
    """What the palette asks of the app (HearthApp, observe/tui/app.py, which lists these
    commands, so this module names a port rather than the app)."""

    @property
    def current(self) -> WorldSnapshot | None: ...

    @property
    def lineage(self) -> WorldLineage: ...

    def notify(self, message: str, *, title: str = "", timeout: float | None = None,
               markup: bool = True) -> None: ...

    def run_ticks(self, count: int) -> None: ...

    def action_toggle_ascii(self) -> None: ...

    def action_live(self) -> None: ...

    def follow(self, name: str) -> None: ...

    def go_to_agent(self, name: str) -> None: ...

    def go_to(self, x: int, y: int) -> None: ...


def hearth_commands(app: Commanded) -> Iterator[PaletteCommand]:
    snapshot = app.current
    for n in RUN_CHOICES:
        yield PaletteCommand(f"Run {n} tick{'s' if n != 1 else ''}",
                             "Let the world live on (it keeps its own pace)",
                             partial(app.run_ticks, n))
    yield PaletteCommand("Toggle ASCII", "Draw the grid with plain characters (or emoji again)",
                         app.action_toggle_ascii)
    yield PaletteCommand("Return to live", "Stop looking back and show the world now",
                         app.action_live)
    origin = origin_words(app.lineage)
    if origin is not None:  # a fork: where it came from, folders and all
        yield PaletteCommand("Show lineage", short_words(clean(origin), 80),
                             partial(show_lineage, app))
    if snapshot is None:
        return
    for view in snapshot.agents:
        name = clean(view.name)
        yield PaletteCommand(f"Follow {name}", "Keep this agent in the middle of the grid",
                             partial(app.follow, view.name))
        yield PaletteCommand(f"Go to {name}", f"Move the grid to {name} (not following)",
                             partial(app.go_to_agent, view.name))
    for mark in snapshot.landmarks:
        yield PaletteCommand(f"Go to landmark {clean(mark.name)}",
                             short_words(clean(mark.description), 80),
                             partial(app.go_to, mark.position.x, mark.position.y))
    for place in snapshot.places:
        yield PaletteCommand(f"Go to place {clean(place.name)}", "A place an agent named",
                             partial(app.go_to, place.position.x, place.position.y))


def show_lineage(app: Commanded) -> None:
    """Every world in the chain a fork came from, with its folder, in a notice."""
    app.notify(clean("\n".join(chain_words(app.lineage)), one_line=False), title="Lineage",
               markup=False, timeout=10)


class HearthCommands(Provider):
    @property
    def hearth(self) -> Commanded:
        return self.app  # type: ignore[return-value]

    async def discover(self) -> Hits:
        for command in hearth_commands(self.hearth):
            yield DiscoveryHit(command.title, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        wanted = _RUN_N.match(query)
        if wanted and int(wanted.group(1)) > 0:
            count = int(wanted.group(1))
            yield Hit(1.0, f"Run {count} tick{'s' if count != 1 else ''}",
                      partial(self.hearth.run_ticks, count), help="Let the world live on")
        matcher = self.matcher(query)
        for command in hearth_commands(self.hearth):
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.run,
                          text=command.title, help=command.help)
