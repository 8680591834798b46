"""HearthApp: the live observer. The world runs in the engine's thread; this app, on
the main thread, shows each tick as it lands and sends the person's commands back.

This module holds the layout, the panels and the keys that move about the world; two
mixins hold the rest of what the app does, each in a module of its own:

- `observe/tui/engine_link.py` (`EngineLink`): the engine thread's life as the app
  sees it: ticks arriving and the pace of the summaries, the run keys (and, when
  another process changes the world, saying that this observer only watches), an
  agent's perception fetched from the engine, and quitting;
- `observe/tui/looking_back.py` (`LookingBack`): stored ticks (`[`, `]`, `end`), an
  agent's earlier lines, and the stored turn behind a feed line (`p`).

The header says when a past tick is shown, where a fork came from (observe/lineage.py)
and, watching only, who changes the world.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static, TabbedContent, TabPane

from observe.api import ObserverAPI, cell_info
from observe.lineage import origin_words, past_words, trouble_words, world_lineage
from observe.snapshot import WorldSnapshot
from observe.timeline import Timeline
from observe.tui.commands import HearthCommands
from observe.tui.engine_link import SUMMARY_SECONDS, EngineLink
from observe.tui.help import HelpScreen
from observe.tui.legend import LegendPanel
from observe.tui.looking_back import LookingBack
from observe.tui.messages import AgentChosen, CellChosen, CentreOn
from observe.tui.safe_text import clean
from observe.tui.screenshots import save_svg, screenshot_name
from observe.tui.widgets.agents import AgentList
from observe.tui.widgets.cellinfo import CellPanel
from observe.tui.widgets.conversations import ConversationPanel
from observe.tui.widgets.detail import AgentDetail
from observe.tui.widgets.feed import EventFeed
from observe.tui.widgets.grid import GridView
from observe.tui.widgets.header import HearthHeader
from observe.tui.widgets.minimap import Minimap
from services.world_service import Clock

MIN_WIDTH, MIN_HEIGHT = 80, 24
"""The smallest terminal the layout works in."""

NARROW_BELOW = 120
"""Under this many columns the side panels are narrower, so the grid keeps room."""

SCREENSHOTS = "screenshots"
"""The folder, beside world.db, that the palette's Screenshot saves into."""


class HearthApp(EngineLink, LookingBack, App[int]):
    TITLE = "Hearth"
    COMMANDS = App.COMMANDS | {HearthCommands}
    CSS = """
    #body { height: 1fr; }
    #main { width: 1fr; height: 1fr; }
    #grid { width: 1fr; height: 1fr; }
    #side { width: 50; height: 1fr; }
    Screen.narrow #side { width: 40; }
    #map { height: 1fr; }
    #minimap { height: 13; border: round $primary-darken-2; }
    #side-tabs { height: 1fr; }
    #feed { height: 11; }
    #too-small { display: none; width: 1fr; height: 1fr; content-align: center middle; }
    Screen.too-small #too-small { display: block; }
    Screen.too-small #body { display: none; }
    """
    BINDINGS = [
        # Help and Quit first: the footer lists keys in this order (after the focused
        # panel's own) and cuts what does not fit at its end, even at 80 columns.
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("space", "toggle_run", "Run/Pause"),
        Binding("t,full_stop", "step", "Step"),
        Binding("plus", "run_ten", "Run 10"),
        Binding("greater_than_sign", "faster", "Faster", show=False),
        Binding("less_than_sign", "slower", "Slower", show=False),
        Binding("m", "full_speed", "Full speed", show=False),
        Binding("f", "follow_selected", "Follow"),
        Binding("g", "go_selected", "Go to agent", show=False),
        Binding("e", "filter_feed", "Filter events"),
        Binding("p", "provenance", "Provenance"),
        Binding("a", "toggle_ascii", "ASCII"),
        Binding("left_square_bracket", "back", "Back a tick"),
        Binding("right_square_bracket", "forward", "Forward a tick"),
        Binding("left_curly_bracket", "back_ten", "Back 10", show=False),
        Binding("right_curly_bracket", "forward_ten", "Forward 10", show=False),
        Binding("end", "live", "Live"),
        Binding("F", "force_turn", "Force turn", show=False),
        Binding("i", "toggle_legend", "Legend"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, api: ObserverAPI, clock: Clock | None = None) -> None:
        super().__init__()
        self.api = api
        self.clock = clock
        """The world's clock, to tell the time of a past tick."""
        self.live: WorldSnapshot = api.snapshot
        """The newest snapshot from the engine."""
        self.current: WorldSnapshot = self.live
        """What the grid shows: the live snapshot, or a past tick's."""
        first = api.history.first_tick() if api.history is not None else None
        self.lineage = world_lineage(api.history)
        """The worlds this one was forked from (none for a world that is no fork)."""
        self.timeline = Timeline(first, self.live.tick)
        self.feed_filter: str | None = None
        self._start_engine_link()
        self._start_looking_back()

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        # What changes every tick (header, grid, feed) shares one column, and what
        # changes twice a second (minimap, agent list) the other: Textual repaints the
        # bounding box of a frame's changes, so a tick repaints its column only.
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield HearthHeader(id="header")
                with Horizontal(id="map"):
                    yield GridView(id="grid")
                    yield LegendPanel(id="legend")
                yield EventFeed(id="feed")
            with Vertical(id="side"):
                yield Minimap(id="minimap")
                with TabbedContent(id="side-tabs"):
                    with TabPane("Agents", id="tab-agents"):
                        yield AgentList(id="agents")
                    with TabPane("Cell", id="tab-cell"):
                        yield CellPanel(id="cell")
                    with TabPane("Agent", id="tab-agent"):
                        yield AgentDetail(id="detail")
                    with TabPane("Talk", id="tab-talk"):
                        yield ConversationPanel(id="talk")
        yield Static(id="too-small")
        yield Footer()

    def on_mount(self) -> None:
        self.api.listen(self._from_engine)
        self._draw(self.live)
        self.query_one(EventFeed).add(self.api.feed())
        grid = self.query_one(GridView)
        grid.focus()
        if self.live.agents:  # start where someone is, not in a corner of the map
            first = self.live.agents[0]
            grid.centre_on(first.position.x, first.position.y)
        self._check_size(self.size.width, self.size.height)
        if (trouble := trouble_words(self.lineage)) is not None:
            self.say(trouble, warning=True)
        self._beat_timer = self.set_interval(SUMMARY_SECONDS, self._beat)

    # ------------------------------------------------------------------ drawing

    def _draw(self, snapshot: WorldSnapshot) -> None:
        """Show a snapshot in every panel now (the person asked for it: a past tick,
        back to live); ticks as they come go through `on_world_advanced`."""
        self.current = snapshot
        self.query_one(GridView).show(snapshot)
        self._draw_summaries()
        self._refresh_header()

    def _draw_summaries(self) -> None:
        self._summaries_due = False
        snapshot = self.current
        minimap = self.query_one(Minimap)
        minimap.show(snapshot)
        minimap.set_viewport(*self.query_one(GridView).visible_cells())
        self.query_one(AgentList).show(snapshot)
        self._refresh_tabs()

    def _refresh_tabs(self) -> None:
        """Bring the shown tabs up to date. A hidden tab waits until it is shown: a
        panel whose text grows or shrinks costs the whole screen a layout pass."""
        side = self.query_one("#side-tabs", TabbedContent).active
        if side == "tab-cell":
            self._show_cell(*self.query_one(GridView).cursor)
        elif side == "tab-agent":
            self._show_detail(perception=None, fetch=False)
        elif side == "tab-talk":
            self.query_one(ConversationPanel).show(self.current.conversations)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_tabs()

    def _refresh_header(self) -> None:
        viewing = self.timeline.viewing
        label = None if viewing is None else self.timeline.label(self.live.tick)
        lived = None if viewing is None else past_words(self.lineage, viewing)
        self.query_one(HearthHeader).show(self.current if label else self.live,
                                          self.api.run_state(), label,
                                          origin_words(self.lineage), lived)

    # ------------------------------------------------------------------ panels

    def on_cell_chosen(self, message: CellChosen) -> None:
        if self.query_one("#side-tabs", TabbedContent).active == "tab-cell":
            self._show_cell(message.x, message.y)

    def on_grid_view_viewport_changed(self, message: GridView.ViewportChanged) -> None:
        self.query_one(Minimap).set_viewport(message.x0, message.y0, message.x1, message.y1)

    def _show_cell(self, x: int, y: int) -> None:
        self.query_one(CellPanel).show(cell_info(self.current, x, y),
                                       past=not self.timeline.is_live)

    def on_agent_chosen(self, message: AgentChosen) -> None:
        self.select_agent(message.name)
        self.query_one("#side-tabs", TabbedContent).active = "tab-agent"

    def on_centre_on(self, message: CentreOn) -> None:
        self.go_to(message.x, message.y)

    def select_agent(self, name: str) -> None:
        self.query_one(AgentList).select(name)
        self.query_one(GridView).set_highlight(name)
        self._show_detail(perception=None, fetch=True)

    @property
    def selected(self) -> str | None:
        return self.query_one(AgentList).selected

    def _show_detail(self, perception: str | None, fetch: bool) -> None:
        name = self.selected
        detail = self.query_one(AgentDetail)
        view = self.current.agent(name) if name else None
        lines = self._recent_lines(name, fetch) if name else []
        spend = self.live.spend_by_agent.get(name, 0.0) if name else 0.0
        if perception is None and not fetch:
            perception = detail.perception_text if view is not None else None
        detail.show(view, lines, spend, perception)
        if fetch and name is not None and self.api.runner.is_running:
            future = self.api.perception(name)
            future.add_done_callback(lambda f, who=name: self._perception_ready(who, f))

    # ------------------------------------------------------------------ size

    def on_resize(self, event) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.screen.set_class(small, "too-small")
        self.screen.set_class(width < NARROW_BELOW, "narrow")
        if small:
            self.query_one("#too-small", Static).update(Text(
                f"The terminal is {width}x{height}; Hearth needs at least "
                f"{MIN_WIDTH}x{MIN_HEIGHT}.\nMake the window bigger (q quits).",
                justify="center"))

    # ------------------------------------------------------------------ commands

    def action_follow_selected(self) -> None:
        grid = self.query_one(GridView)
        name = self.selected
        if grid.following is not None or name is None:
            grid.follow(None)
            self.say("Not following anyone.")
        else:
            self.follow(name)

    def follow(self, name: str) -> None:
        self.select_agent(name)
        self.query_one(GridView).follow(name)
        self.say(f"Following {name}.")

    def action_go_selected(self) -> None:
        if self.selected is not None:
            self.go_to_agent(self.selected)

    def go_to_agent(self, name: str) -> None:
        view = self.current.agent(name)
        if view is not None:
            self.select_agent(name)
            self.go_to(view.position.x, view.position.y)

    def go_to(self, x: int, y: int) -> None:
        grid = self.query_one(GridView)
        grid.follow(None)
        grid.centre_on(x, y)
        self.query_one(Minimap).set_viewport(*grid.visible_cells())

    def action_filter_feed(self) -> None:
        self.feed_filter = None if self.feed_filter is not None else self.selected
        self.query_one(EventFeed).set_filter(self.feed_filter)
        who = self.feed_filter or "everyone"
        self.say(f"Events: {who}.")

    def action_toggle_ascii(self) -> None:
        grid = self.query_one(GridView)
        grid.set_ascii(not grid.ascii_mode)
        self.query_one(LegendPanel).show_for(grid.glyphs)

    def action_toggle_legend(self) -> None:
        """Show or hide, beside the grid, what every symbol on it means."""
        legend = self.query_one(LegendPanel)
        legend.show_for(self.query_one(GridView).glyphs)
        legend.set_class(not legend.shown, "-shown")

    def _binding_groups(self) -> Iterable[tuple[str, Iterable[Binding]]]:
        return [("World and time", self.BINDINGS), ("Grid", GridView.BINDINGS),
                ("Agents list", AgentList.BINDINGS), ("Events feed", EventFeed.BINDINGS)]

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self._binding_groups(), self.query_one(GridView).glyphs))

    def say(self, words: str, *, warning: bool = False) -> None:
        """A short notice. Agent names can be anything, so never markup."""
        self.notify(clean(words), markup=False, severity="warning" if warning else "information",
                    timeout=3 if warning else 2)

    # ------------------------------------------------------------------ screenshots

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The palette's Screenshot: an SVG in the data folder's screenshots/ (made if
        missing; Textual's default, a downloads folder, need not exist), and a notice
        that says where it went, or where it could not go and why."""
        folder = Path(path) if path else self.screenshots_folder()
        name = filename or screenshot_name(self.title, time_format)
        try:
            saved = save_svg(self.export_screenshot(), folder, name)
        except OSError as exc:
            self.say(f"Could not save a screenshot in {folder}: {exc.strerror or exc}",
                     warning=True)
            return None
        self.say(f"Screenshot saved: {saved}")
        return str(saved)

    def screenshots_folder(self) -> Path:
        """screenshots/ beside the world's database (the working folder's without one)."""
        history = self.api.history
        base = history.path.parent if history is not None else Path.cwd()
        return base / SCREENSHOTS
