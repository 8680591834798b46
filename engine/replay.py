"""Wiring the replay mind (adapters/replay_mind.py) to a world: whose records it replays,
one mind per kind of mind recorded, and the narrator that gives back the recorded words.

    parts = await replay_parts(storage, data_dir, names)
    engine = await HearthEngine.open(..., minds=parts.minds, narrator=parts.narrator)
    engine.on_close.append(parts.close)

The records come from the world a fork was made from (its lineage.json), or, for a world
that is no fork, from its own past (a world put back to an earlier snapshot, say).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from adapters.memory_rebuild import MemoryLimits
from adapters.replay_mind import RecordedTurns, ReplayMind, ReplayNarrator
from storage import Storage
from storage.errors import StorageError
from storage.lineage import read_lineage

REPLAY = "replay"


def replay_source(data_dir: Path) -> Path:
    """The database whose records a replay in `data_dir` takes its decisions from."""
    lineage = read_lineage(data_dir)
    if lineage is None:
        return Path(data_dir) / "world.db"
    parent = Path(lineage.parent) / "world.db"
    if not parent.is_file():
        raise StorageError(f"{data_dir} was forked from {lineage.parent}, which holds no world "
                           "now; the replay needs its records (move it back, or edit "
                           f"{Path(data_dir) / 'lineage.json'})")
    return parent


@dataclass
class ReplayParts:
    minds: dict[str, ReplayMind]
    narrator: ReplayNarrator
    source: RecordedTurns

    async def close(self) -> None:
        self.source.close()


async def replay_parts(storage: Storage, data_dir: Path, names: Iterable[str],
                       source_db: Path | None = None,
                       limits: MemoryLimits | None = None) -> ReplayParts:
    """A replay mind for each of `names`, of the kind of mind the records name for it
    from the world's current tick on (its stored memory's kind if the records have none).
    `limits` (the compaction settings the source ran with): model minds' memories are
    rebuilt from each turn's record (a fork's walk); None: kept as found until the turn
    the source last stored them."""
    source = RecordedTurns(source_db or replay_source(data_dir))
    state = await storage.world.get_world_state()
    tick = state.tick if state is not None else 0
    rows = await storage.engine.get_minds()
    by_kind: dict[str, ReplayMind] = {}
    minds: dict[str, ReplayMind] = {}
    for name in names:
        row = rows.get(name)
        kind = source.kind_from(tick, name) or (row.kind if row is not None else REPLAY)
        mind = by_kind.get(kind)
        if mind is None:
            held = {n: r.state for n, r in rows.items() if r.kind == kind}
            mind = by_kind[kind] = ReplayMind(kind, source, held, str(source.db.parent),
                                              limits)
        minds[name] = mind
    return ReplayParts(minds, ReplayNarrator(source), source)
