"""Issue 43: what an agent writes in its journal is shown by no view of the world.

Every Claude agent is told "Nobody else reads your journal" (adapters/claude_mind/
prompt.py), and the record keeps its words exactly (core/privacy.py). Here agents write
words found nowhere else into their journals and read them back, through the real
engine; then every view is searched for those words: the observer's feed, agent detail,
provenance and looking back (the real HearthApp through Pilot), `recall`, `hearth --run`
(plain and --json) and `hearth --status --json` (the real program, its Claude agents on
the strict stand-in). The words are on disk in the journal, where the agent put them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from adapters.openai_mind import OpenAIMind, OpenAIProfile
from core.privacy import shown_action
from engine import HearthEngine
from engine.runner import EngineRunner
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from observe.tui.provenance_screen import ProvenanceScreen
from observe.tui.widgets.detail import AgentDetail
from observe.tui.widgets.feed import EventFeed
from services.recall import _from_turn
from services.simulation import clock_of
from storage import Storage
from storage.history import HistoryReader
from tests.fake_openai import ScriptedApi, reply, tool_call
from tests.integration.ticks.test_tui_app import SIZE, _until
from tests.messages_standin import Plan, Request, StrictMessagesApi, simple_agent

SECRET = "lanternmoth quietwillow"
"""Words the agents write in their journals, and that nothing else says."""
PROJECT = Path(__file__).resolve().parents[3]


def _keeps_quiet(text: str, where: str) -> None:
    for word in SECRET.split():
        assert word not in text, f"{where} shows the journal's words: {text[:400]}"


def test_a_view_of_a_journal_call_says_how_much_not_what() -> None:
    args, text = shown_action("append_file", {"path": "./journal.md", "text": SECRET},
                              "appended 23 bytes to journal.md (now 23 bytes)")
    assert args == {"path": "journal.md", "words": "23 characters, the agent's own"}
    assert text == "appended 23 bytes to journal.md (now 23 bytes)"
    args, text = shown_action("read_file", {"path": "journal.md"},
                              f"read journal.md (23 bytes)\n{SECRET}")
    assert text == "read journal.md (23 bytes)"
    # Other files are the agent's notes for whoever reads them: shown as they are.
    assert shown_action("write_file", {"path": "notes.md", "text": SECRET}, "wrote")[0] == {
        "path": "notes.md", "text": SECRET}


def _local_model(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "user":  # a perception: write, read back, walk
        return reply("A quiet moment.", calls=[
            tool_call("append_file", path="journal.md", text=SECRET + "\n"),
            tool_call("read_file", path="journal.md"),
            tool_call("walk", direction="north")])
    return reply("Enough for now.")


async def test_no_observer_view_shows_what_an_agent_wrote_in_its_journal(
    small_world: Path, config, tmp_path: Path
) -> None:
    agents_dir = tmp_path / "agents"
    async with Storage(small_world, create=False, read_only=True) as storage:
        people = await storage.agents.get_all_agents()
    mind = OpenAIMind(ScriptedApi(otherwise=_local_model).client(),
                      {a.name: OpenAIProfile("local-test", a.personality) for a in people})

    async def make() -> HearthEngine:
        engine = await HearthEngine.open(
            Storage(small_world), config, mind=mind, agents_dir=agents_dir)
        return engine

    api = ObserverAPI(EngineRunner(make), history=HistoryReader(small_world / "world.db"))
    import asyncio
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api, clock_of(config))
        async with app.run_test(size=SIZE) as pilot:
            api.run(3)
            await _until(lambda: app.ticks_seen == 3)
            await pilot.pause()
            feed = app.query_one(EventFeed).shown
            wrote = [line for line in feed if line.kind == "append_file"]
            assert wrote and all(line.ok for line in wrote)  # they did write
            assert any("characters, the agent's own" in line.deed for line in wrote)
            for line in feed:
                _keeps_quiet(f"{line.text} {line.deed}", "the feed")
            _keeps_quiet(app.query_one(AgentDetail).text.plain, "agent detail")
            for _ in range(6):  # provenance of the newest lines, one turn after another
                await pilot.press("p")
                await pilot.pause()
                assert isinstance(app.screen, ProvenanceScreen)
                _keeps_quiet(app.screen.text.plain, "provenance")
                await pilot.press("left", "escape")
                await pilot.pause()
            await pilot.press("left_square_bracket", "left_square_bracket")  # looking back
            await pilot.pause()
            assert app.timeline.viewing is not None
            for line in app.query_one(EventFeed).shown:
                _keeps_quiet(f"{line.text} {line.deed}", "looking back")
            _keeps_quiet(app.query_one(AgentDetail).text.plain, "agent detail, looking back")
            await pilot.press("q")
    finally:
        api.stop(10)
        api.history.close()
    with HistoryReader(small_world / "world.db") as history:
        records = history._query("SELECT tick, record FROM turns", ())
    memories = [m.text for tick, record in records for m in _from_turn(tick, record)]
    assert memories and not any(word in m for m in memories for word in SECRET.split())
    # What the agents wrote is theirs, kept where they put it and in their turns' records.
    journals = list(agents_dir.glob("*/journal.md"))
    assert journals and all(SECRET in j.read_text() for j in journals)
    assert any(SECRET in record for _, record in records)


def _journaling(request: Request) -> Plan:
    if request.tools and request.fresh:
        return Plan(200, "I will write.", [("append_file", {"path": "journal.md",
                                                            "text": SECRET}),
                                           ("read_file", {"path": "journal.md"})])
    return simple_agent(request)


def _hearth(where: Path, *args: str, url: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), *args],
        capture_output=True, text=True, timeout=300, cwd=PROJECT, env=env)


def test_neither_a_run_nor_status_prints_a_journal(tmp_path: Path) -> None:
    standin = StrictMessagesApi(behaviour=_journaling)
    with standin.serve() as url:
        assert _hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40",
                       url=url).returncode == 0
        plain = _hearth(tmp_path, "--run", "2", "--mind", "claude", url=url)
        as_json = _hearth(tmp_path, "--run", "1", "--mind", "claude", "--json", url=url)
        status = _hearth(tmp_path, "--status", "--json", url=url)
    assert standin.refused == []
    for run in (plain, as_json, status):
        assert run.returncode == 0, run.stdout + run.stderr
        _keeps_quiet(run.stdout + run.stderr, "a command's output")
    assert "append_file" in plain.stdout and "read journal.md" in plain.stdout
    _keeps_quiet(_served_page(tmp_path), "the page `hearth --serve` serves")
    ticks = [json.loads(line) for line in as_json.stdout.splitlines() if line.startswith("{")]
    assert any(a["tool"] == "read_file" for t in ticks for r in t["turns"] for a in r["actions"])
    journals = list((tmp_path / "agents").glob("*/journal.md"))
    assert journals and all(SECRET in j.read_text() for j in journals)


def _served_page(where: Path) -> str:
    """What a browser's page of `hearth --serve` was sent to draw: the observer over
    this world, its feed (the newest ticks' lines) and the chosen turn's provenance."""
    import asyncio

    import aiohttp

    from tests.e2e.test_serve_cli import Page, _serving, _stopped

    server, url = _serving(where)
    try:
        async def look() -> str:
            async with aiohttp.ClientSession() as session:
                page = await Page(session, url).open()
                await page.until("paused")
                await page.keys("p")  # provenance of the newest line's turn
                await page.until("Perceived")
                await page.close()
                return page.screen

        return asyncio.run(look())
    finally:
        _stopped(server, where)
