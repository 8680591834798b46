"""The recall tool through the real engine: an agent finds its own past, and only its own."""

from __future__ import annotations

from services.mind import TurnStart


def _script(start: TurnStart) -> list[tuple[str, dict]]:
    if start.tick == 0:
        return [("write_sign", {"text": f"{start.agent} rested by the old oak here."})]
    if start.tick == 1:
        return [("walk", {"direction": "north"})]
    return [("recall", {"query": "the old oak"}), ("recall", {"query": "x", "limit": 99}),
            ("recall", {"query": "zebra violin"})]


async def test_an_agent_recalls_what_it_did_and_not_what_others_did(make_engine, scripted):
    mind = scripted(_script)
    async with make_engine(mind) as engine:
        for _ in range(3):
            ctx = await engine.tick_once()
    results = ctx.turn_results
    assert results
    for name, result in results.items():
        found, bad, nothing = (a.narration for a in result.actions)
        assert found.startswith("You remember (best match first):")
        assert f"{name} rested by the old oak here." in found
        others = [n for n in results if n != name]
        assert not any(f"{other} rested" in found for other in others)
        assert "[day 1, 08:00 (morning)]" in found  # when it happened, in the world's time
        assert "limit must be a whole number from 1 to 10" in bad
        assert nothing == "Nothing comes back to you about that."
    assert [a.success for a in next(iter(results.values())).actions] == [True, False, True]
