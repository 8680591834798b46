"""Issue 42: `hearth --run N --economy`, the real program against the strict stand-in.

Every Claude agent's request of a step goes into one Message Batch, which the stand-in
serves as https://platform.claude.com/docs/en/build-with-claude/batch-processing
documents (tests/standin/batches.py); the records, budgets and `--status` stay what a
live run keeps, and what `--status` says was spent is the stand-in's bill at the
published prices, a batch's at half of them ("50% of standard API prices").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_claude_lifecycle_cli import _config, _hearth, _tick, _usd, _world
from tests.messages_standin import StrictMessagesApi

BATCH_SHARE = 0.5
"""The batch-processing page's pricing: every token at half the standard price."""


def test_an_economy_run_batches_each_step_and_status_prices_it_at_half(tmp_path: Path) -> None:
    standin = StrictMessagesApi()
    _config(tmp_path, {"batch_poll_seconds: 30": "batch_poll_seconds: 0.1"})
    _world(tmp_path)
    with standin.serve() as url:
        run = _hearth(tmp_path, "--run", "6", "--economy", "--mind", "claude",
                      ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert standin.refused == []
    assert "Traceback" not in run.stderr and _tick(tmp_path) == 6
    assert "(waiting on 1 Message Batch(es) of 3 request(s)" in run.stdout
    assert not (tmp_path / "data" / "batch.json").exists()  # no batch pending any more
    # Every agent request went in a batch; no retelling was asked for (it would wait for
    # a batch of its own): the templates told instead.
    assert standin.served and all(s.batch and s.body.get("tools") for s in standin.served)
    batches = list(standin.batches.made.values())
    # A step's first requests travel together: the three agents' turns of a tick in one
    # batch, their follow-ups (after an examine, say) in another at most.
    assert len(batches) <= 2 * 6 and max(len(b.items) for b in batches) == 3
    spend = json.loads(_hearth(tmp_path, "--status", "--json").stdout)["spend"]
    bill = sum(_usd(s.model, dict(s.usage)) * (BATCH_SHARE if s.batch else 1.0)
               for s in standin.served)
    assert sum(a["requests"] for a in spend) == len(standin.served)
    assert sum(a["usd"] for a in spend) == pytest.approx(bill, rel=0.01)


def test_economy_goes_with_run_only(tmp_path: Path) -> None:
    wrong = _hearth(tmp_path, "--status", "--economy")
    assert wrong.returncode == 2
    said = wrong.stderr.strip().splitlines()
    assert said == ["hearth: --economy goes with --run (see hearth --help)"]
