"""`hearth --run N` with an agent on a local model (an OpenAI-compatible endpoint).

The CLI runs in a subprocess; agents.yaml gives Ember `mind: local` and a base_url
pointing at a small chat-completions server in this process, which walks north on
seeing the world and then ends the turn. No Anthropic key is set: the others live
offline.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


class _Chat(BaseHTTPRequestHandler):
    bodies: list[dict] = []
    paths: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).bodies.append(body)
        type(self).paths.append(self.path)
        message: dict = {"role": "assistant", "content": "Good."}
        finish = "stop"
        if body["messages"][-1]["role"] == "user":
            message = {"role": "assistant", "content": "North.", "tool_calls": [{
                "id": f"call_{len(self.bodies)}", "type": "function",
                "function": {"name": "walk", "arguments": json.dumps({"direction": "north"})},
            }]}
            finish = "tool_calls"
        answer = json.dumps({
            "id": f"chatcmpl-{len(self.bodies)}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Chat.bodies, _Chat.paths = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _config(where: Path, ember_lines: str) -> Path:
    folder = where / "config"
    folder.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        (folder / source.name).write_text(source.read_text())
    agents = folder / "agents.yaml"
    agents.write_text(agents.read_text().replace(
        "  - name: Ember\n    model_id: claude-sonnet-5-5\n",
        f"  - name: Ember\n    model_id: qwen3:8b\n{ember_lines}", 1))
    return folder


def _hearth(where: Path, config: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), "--config-dir", str(config), *args],
        capture_output=True, text=True, timeout=120, cwd=PROJECT, env={**base, **env},
    )


def test_an_agent_on_a_local_model_lives_beside_offline_ones(
    tmp_path: Path, endpoint: str
) -> None:
    config = _config(tmp_path, f"    mind: local\n    base_url: {endpoint}\n")
    made = _hearth(tmp_path, config, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    run = _hearth(tmp_path, config, "--run", "2")
    assert run.returncode == 0, run.stderr

    assert _Chat.bodies and set(_Chat.paths) == {"/v1/chat/completions"}
    assert {b["model"] for b in _Chat.bodies} == {"qwen3:8b"}
    first = _Chat.bodies[0]
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].startswith("You are Ember.")
    assert "walk" in {t["function"]["name"] for t in first["tools"]}
    db = sqlite3.connect(tmp_path / "data" / "world.db")
    try:
        minds = dict(db.execute("SELECT agent, mind FROM turns WHERE tick = 0"))
    finally:
        db.close()
    assert minds == {"Ember": "local", "Sage": "offline", "River": "offline"}
    assert (tmp_path / "data" / "traces" / "Ember.jsonl").exists()


def test_a_missing_endpoint_key_is_refused_before_anything_runs(
    tmp_path: Path, endpoint: str
) -> None:
    config = _config(tmp_path, f"    mind: local\n    base_url: {endpoint}\n"
                               "    api_key_env: HEARTH_TEST_LOCAL_KEY\n")
    run = _hearth(tmp_path, config, "--run", "1")
    assert run.returncode == 2
    assert "$HEARTH_TEST_LOCAL_KEY, which is not set" in run.stderr
    assert "Traceback" not in run.stderr and _Chat.bodies == []
