"""The database schema, as ordered migrations keyed by `PRAGMA user_version`.

Each migration is a list of SQL statements that takes the schema from version
N-1 to N. Never edit a shipped migration: add a new one. LATEST_VERSION is what
this code reads and writes; a file with a higher version is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


_V1_WORLD = (
    """
    CREATE TABLE world_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        width INTEGER NOT NULL CHECK (width > 0),
        height INTEGER NOT NULL CHECK (height > 0),
        seed INTEGER NOT NULL,
        tick INTEGER NOT NULL DEFAULT 0 CHECK (tick >= 0),
        weather TEXT NOT NULL DEFAULT 'clear',
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE cells (
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        terrain TEXT NOT NULL,
        walls TEXT NOT NULL DEFAULT '',
        doors TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (x, y)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE agents (
        name TEXT PRIMARY KEY,
        model_id TEXT NOT NULL,
        personality TEXT NOT NULL,
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        is_sleeping INTEGER NOT NULL DEFAULT 0 CHECK (is_sleeping IN (0, 1)),
        journey TEXT,
        known_agents TEXT NOT NULL DEFAULT '[]',
        last_active_tick INTEGER NOT NULL DEFAULT 0,
        session_id TEXT
    )
    """,
    "CREATE INDEX idx_agents_pos ON agents (x, y)",
    """
    CREATE TABLE inventory_stacks (
        agent_name TEXT NOT NULL REFERENCES agents (name) ON DELETE CASCADE,
        resource TEXT NOT NULL,
        quantity INTEGER NOT NULL CHECK (quantity > 0),
        PRIMARY KEY (agent_name, resource)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE inventory_items (
        id TEXT PRIMARY KEY,
        agent_name TEXT NOT NULL REFERENCES agents (name) ON DELETE CASCADE,
        slot INTEGER NOT NULL,
        item_type TEXT NOT NULL,
        properties TEXT NOT NULL DEFAULT '[]'
    )
    """,
    "CREATE INDEX idx_inventory_items_agent ON inventory_items (agent_name, slot)",
    """
    CREATE TABLE objects (
        id TEXT PRIMARY KEY,
        object_type TEXT NOT NULL,
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        created_by TEXT,
        created_tick INTEGER NOT NULL,
        extras TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX idx_objects_pos ON objects (x, y)",
    """
    CREATE TABLE named_places (
        key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        named_by TEXT,
        tick INTEGER NOT NULL
    )
    """,
    "CREATE INDEX idx_named_places_pos ON named_places (x, y)",
    """
    CREATE TABLE structures (
        id TEXT PRIMARY KEY,
        name TEXT,
        created_by TEXT,
        created_tick INTEGER NOT NULL,
        is_private INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0, 1)),
        interior TEXT NOT NULL,
        min_x INTEGER NOT NULL,
        min_y INTEGER NOT NULL,
        max_x INTEGER NOT NULL,
        max_y INTEGER NOT NULL
    )
    """,
)

_V2_CONVERSATIONS = (
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        privacy TEXT NOT NULL CHECK (privacy IN ('public', 'private')),
        created_by TEXT NOT NULL,
        started_tick INTEGER NOT NULL,
        ended_tick INTEGER
    )
    """,
    """
    CREATE TABLE conversation_participants (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        agent_name TEXT NOT NULL,
        joined_tick INTEGER NOT NULL,
        left_tick INTEGER,
        PRIMARY KEY (conversation_id, agent_name)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX idx_participants_agent ON conversation_participants (agent_name, left_tick)",
    """
    CREATE TABLE conversation_turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        speaker TEXT NOT NULL,
        message TEXT NOT NULL,
        tick INTEGER NOT NULL
    )
    """,
    "CREATE INDEX idx_turns_conversation ON conversation_turns (conversation_id, id)",
    """
    CREATE TABLE invitations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        inviter TEXT NOT NULL,
        invitee TEXT NOT NULL,
        privacy TEXT NOT NULL CHECK (privacy IN ('public', 'private')),
        created_tick INTEGER NOT NULL,
        expires_at_tick INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'accepted', 'declined', 'expired')),
        conversation_id TEXT
    )
    """,
    "CREATE INDEX idx_invitations_invitee ON invitations (invitee, status)",
)

_V3_TERRAIN_AND_LANDMARKS = (
    # The generated base terrain as one compressed raster (see core/raster.py);
    # the cells table keeps only later changes on top of it.
    """
    CREATE TABLE terrain_raster (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        width INTEGER NOT NULL CHECK (width > 0),
        height INTEGER NOT NULL CHECK (height > 0),
        encoding TEXT NOT NULL,
        data BLOB NOT NULL
    )
    """,
    """
    CREATE TABLE landmarks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        x INTEGER NOT NULL,
        y INTEGER NOT NULL
    )
    """,
    "CREATE INDEX idx_landmarks_pos ON landmarks (x, y)",
)

_V4_WORLD_RULES = (
    # What each wall or door is made of (given back when it comes down).
    """
    CREATE TABLE edge_materials (
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        side TEXT NOT NULL CHECK (side IN ('e', 's')),
        part INTEGER NOT NULL,
        material TEXT NOT NULL,
        quantity INTEGER NOT NULL CHECK (quantity > 0),
        PRIMARY KEY (x, y, side, part)
    ) WITHOUT ROWID
    """,
    # Cells gathered from that have not fully grown back.
    """
    CREATE TABLE spent_cells (
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        units INTEGER NOT NULL CHECK (units > 0),
        since_tick INTEGER NOT NULL,
        PRIMARY KEY (x, y)
    ) WITHOUT ROWID
    """,
)

_V5_ENGINE = (
    # Every domain event, in the order committed: the truth the JSONL log mirrors.
    """
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        tick INTEGER NOT NULL,
        agent TEXT,
        kind TEXT NOT NULL,
        data TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_events_tick ON events (tick)",
    "CREATE INDEX idx_events_agent ON events (agent, tick)",
    # One row per committed agent turn: what it did, and its mind's own record.
    """
    CREATE TABLE turns (
        tick INTEGER NOT NULL,
        agent TEXT NOT NULL,
        mind TEXT NOT NULL,
        actions INTEGER NOT NULL,
        ended TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (tick, agent)
    ) WITHOUT ROWID
    """,
    # What each agent's mind remembers between turns, as of its last committed turn.
    """
    CREATE TABLE minds (
        agent TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        state TEXT NOT NULL,
        tick INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
    # The tick in progress: its turn order, so a resumed run finishes the same tick.
    """
    CREATE TABLE tick_progress (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        tick INTEGER NOT NULL,
        schedule TEXT NOT NULL,
        started_at TEXT NOT NULL
    )
    """,
    # How long each finished tick and each of its phases took.
    """
    CREATE TABLE tick_metrics (
        tick INTEGER PRIMARY KEY,
        finished_at TEXT NOT NULL,
        duration_ms REAL NOT NULL,
        turns INTEGER NOT NULL,
        actions INTEGER NOT NULL,
        phases TEXT NOT NULL
    )
    """,
)

_V6_LEANER_WRITES = (
    # Two indexes no query used, each paid for on every step of every agent: events by
    # (agent, tick) took random inserts whose cost grew with the table (1,500 events a
    # tick: 10.5 ms at first, 18.3 ms after 150 ticks; 7.3 ms flat without it), and
    # agents by (x, y) moved an entry on every step (about 2 ms a tick for 1,000).
    # Events by agent are found through idx_events_tick and a filter; agents are in memory.
    "DROP INDEX IF EXISTS idx_events_agent",
    "DROP INDEX IF EXISTS idx_agents_pos",
)

_V7_GARDENER = (
    # One row per Gardener cycle: what it saw, how it sorted it, and what it decided
    # (and who decided: 'rules' or a model id), kept whole so a cycle can be judged
    # afterwards; `note` says why an answer was not used, when it was not.
    """
    CREATE TABLE gardener_cycles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tick INTEGER NOT NULL,
        made_at TEXT NOT NULL,
        level TEXT NOT NULL CHECK (level IN ('HEALTHY', 'WATCH', 'WARNING', 'CRITICAL')),
        reasons TEXT NOT NULL,
        figures TEXT NOT NULL,
        decided_by TEXT NOT NULL,
        decision TEXT NOT NULL,
        rationale TEXT NOT NULL,
        note TEXT
    )
    """,
    # The Gardener's requests, queued for the engine, which judges each at the start of
    # its next tick and marks it applied or refused. No foreign key on `cycle`: the
    # Gardener runs in another process and anyone can write here, so the engine reads
    # whatever is queued and refuses a request whose cycle is not there itself.
    """
    CREATE TABLE gardener_requests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        cycle INTEGER NOT NULL,
        kind TEXT NOT NULL,
        params TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'applied', 'refused')),
        reason TEXT,
        made_at TEXT NOT NULL,
        done_tick INTEGER,
        x INTEGER,
        y INTEGER
    )
    """,
    # The engine asks for the pending ones every tick; the rest are history.
    "CREATE INDEX idx_gardener_requests_status ON gardener_requests (status, id)",
)

_V8_WORLD_IDENTITY = (
    # Which world this is: the files beside the database (undo logs, snapshots, the event
    # log) are checked against it, so a file another world left is never taken for this
    # one's. Made once, when the table is, for old worlds and new alike.
    """
    CREATE TABLE world_identity (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        world_id TEXT NOT NULL
    )
    """,
    "INSERT INTO world_identity (id, world_id) VALUES (1, lower(hex(randomblob(16))))",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "world, cells, agents, inventory, objects, places, structures", _V1_WORLD),
    Migration(2, "conversations, participants, turns and invitations", _V2_CONVERSATIONS),
    Migration(3, "terrain raster and landmarks", _V3_TERRAIN_AND_LANDMARKS),
    Migration(4, "wall materials and spent cells", _V4_WORLD_RULES),
    Migration(5, "events, turns, mind states, tick progress and metrics", _V5_ENGINE),
    Migration(6, "no per-step indexes on events by agent and agents by position",
              _V6_LEANER_WRITES),
    Migration(7, "gardener cycles and requests", _V7_GARDENER),
    Migration(8, "the world's identity", _V8_WORLD_IDENTITY),
)

LATEST_VERSION = MIGRATIONS[-1].version

HEARTH_TABLES = frozenset(
    {
        "world_state",
        "cells",
        "agents",
        "inventory_stacks",
        "inventory_items",
        "objects",
        "named_places",
        "structures",
        "conversations",
        "conversation_participants",
        "conversation_turns",
        "invitations",
        "terrain_raster",
        "landmarks",
        "edge_materials",
        "spent_cells",
        "events",
        "turns",
        "minds",
        "tick_progress",
        "tick_metrics",
        "gardener_cycles",
        "gardener_requests",
        "world_identity",
    }
)
