"""`hearth --status` and `hearth --check`: the two commands that only read a world and
report on it, and the words they use (`format_status`). `first_problem` is here too:
every command that opens a world (the map, a run, the observer) refuses a damaged one
in the same line.
"""

from __future__ import annotations

import json
from dataclasses import replace

from config import HearthConfig, RuntimeEnv
from core.text import clean_text
from services.command_errors import EXIT_OK, EXIT_RUNTIME, CliError
from services.status import AgentSummary, WorldStatus, leftover_notes, limit_notes, world_status
from storage import Storage
from storage.world_check import check_world


def format_status(status: WorldStatus) -> str:
    """`--status` for a person: the world, its agents and their minds, tick times, an
    interrupted tick, the spend, the Gardener's latest requests and files left over in
    the data folder, a line each."""
    if not status.initialised:
        return f"{status.db_path}: the database exists but holds no world yet (run hearth --init)"
    lines = [
        f"Hearth world  {status.db_path}",
        f"  size {status.width}x{status.height}   seed {status.seed}   tick {status.tick}"
        f"   {status.time_of_day}   weather {status.weather}",
        f"  schema v{status.schema_version}   {status.db_bytes / 1024:.0f} KiB   "
        + "   ".join(f"{k.replace('_', ' ')} {v}" for k, v in status.counts.items()),
        "  terrain: "
        + "  ".join(f"{kind} {share:.1%}" for kind, share in status.terrain_shares.items()),
        f"  landmarks ({len(status.landmarks)}):",
    ]
    for m in status.landmarks:
        lines.append(f"    {m.name:<24} ({m.x}, {m.y})  {m.kind}")
    lines.append(f"  agents ({len(status.agents)}):")
    for a in status.agents:
        lines.append(f"    {a.name:<12} {f'({a.x}, {a.y})':<12} {a.state:<10} {_mind_words(a)}")
    times = status.tick_times
    if times is not None:
        lines.append(f"  tick time over the last {times.ticks} tick(s) (to tick "
                     f"{times.last_tick}): mean {times.mean_ms:.1f} ms, max {times.max_ms:.1f} ms")
        lines.append("    " + "   ".join(f"{name} {ms:.2f}" for name, ms in
                                         times.phases_ms.items()) + "  (ms per phase)")
    if status.unfinished_tick is not None:
        if status.unfinished_turns:
            lines.append(f"  tick {status.unfinished_tick} was interrupted after "
                         f"{status.unfinished_turns} turn(s); the next run finishes it")
        else:
            lines.append(f"  tick {status.unfinished_tick} was begun and none of its turns "
                         "has run yet; the next run goes on with it")
    if status.spend:
        lines.append(f"  language-model spend so far: ${status.spend_usd:.4f}")
        for a in status.spend:
            unpriced = (f"  ({a.unpriced_requests} through a model with no price)"
                        if a.unpriced_requests else "")
            lines.append(
                f"    {a.name:<12} ${a.usd:.4f}  {a.requests} requests  tokens: "
                f"{a.input_tokens:,} in, {a.output_tokens:,} out, {a.cache_write_tokens:,} "
                f"cache write, {a.cache_read_tokens:,} cache read{unpriced}")
    if status.gardener:
        lines.append("  the Gardener's latest requests (newest first):")
        for g in status.gardener:
            when = f"tick {g.tick}" if g.tick is not None else "waiting"
            lines.append(f"    cycle {g.cycle} ({g.level or '?'}) {g.kind:<15} {g.status:<8} "
                         f"{when:<10} {_cut(_request_words(g.said), 100)}")
    if status.limits:
        lines.append("  rate limits, as the API last said them (data/limits.json):")
        lines += [f"    {note.line()}" for note in status.limits]
    lines += [f"  left over: {note.line()}" for note in status.leftovers]
    return "\n".join(lines)


def _mind_words(agent: AgentSummary) -> str:
    """Which mind took the agent's last turn: a model id names a model only when one
    spoke for it (an offline run never asked one)."""
    if agent.seat is not None:
        return f"seat over MCP ({agent.seat})"
    if agent.mind is None:
        return f"no turn yet (configured: {agent.model_id})"
    if agent.mind == "offline":
        return "offline mind"
    if agent.mind == "claude":
        return f"Claude, {agent.model_id}"
    return f"{agent.mind} model, {agent.model_id}"


def _request_words(said: str) -> str:
    """A Gardener request's parameters (stored as JSON) as `key value` pairs; a reason
    (plain words) as it is."""
    try:
        params = json.loads(said)
    except ValueError:
        return clean_text(said)
    if not isinstance(params, dict):
        return clean_text(said)
    return clean_text(", ".join(f"{k} {v if isinstance(v, str) else json.dumps(v)}"
                                for k, v in params.items()))


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at a word with an ellipsis."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    return (head[:space] if space > width // 2 else head).rstrip(" ,;") + "…"


async def show_status(env: RuntimeEnv, config: HearthConfig, as_json: bool) -> int:
    """`--status [--json]`, read-only: exit 1 when there is no world, or a damaged one
    (with --json, said as an `error` object, so a machine reading it needs no stderr)."""
    if not Storage.world_exists(env.data_dir):
        message = (
            f"No world in {env.data_dir} yet. Create one with `{env.command('--init')}` "
            f"(or just `{env.command()}`)."
        )
        if as_json:
            print(json.dumps({"error": "no_world", "message": message}))
        else:
            print(message)
        return EXIT_RUNTIME
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        async with storage.db.one_moment():  # the check and the counts see one tick
            damage = await first_problem(storage, env)
            status = None if damage else await world_status(
                storage, config.settings.time, config.settings.claude.price_table())
        if status is None:
            if as_json:
                print(json.dumps({"error": "damaged", "message": damage}))
                return EXIT_RUNTIME
            raise CliError(str(damage))
    status = replace(status, leftovers=leftover_notes(env.data_dir, env.command()),
                     limits=limit_notes(env.data_dir))
    print(json.dumps(status.to_dict(), indent=2) if as_json else format_status(status))
    return EXIT_OK if status.initialised else EXIT_RUNTIME


async def first_problem(storage: Storage, env: RuntimeEnv | None = None) -> str | None:
    """The world's first damaged row in one line, or None when every row is sound."""
    problems = await check_world(storage.db)
    if not problems:
        return None
    more = f"; {len(problems) - 1} more" if len(problems) > 1 else ""
    check = env.command("--check") if env is not None else "hearth --check"
    return f"{storage.db_path} is damaged: {problems[0]} ({check} lists them all{more})"


async def check_world_rows(env: RuntimeEnv) -> int:
    """`--check`: every problem of the world's rows, one a line, then what the data folder
    holds that the world does not need (not damage: the exit code is the rows'); nothing
    is changed."""
    if not Storage.world_exists(env.data_dir):
        raise CliError(f"no world in {env.data_dir} yet; create one with "
                       f"`{env.command('--init')}`")
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        problems = await check_world(storage.db)
    for line in problems:
        print(line)
    for note in leftover_notes(env.data_dir, env.command()):  # not damage: no exit 1
        print(f"left over: {note.line()}")
    print(f"{storage.db_path}: {len(problems)} problem(s)" if problems
          else f"{storage.db_path}: no problems found")
    return EXIT_RUNTIME if problems else EXIT_OK
