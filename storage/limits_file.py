"""The rate limits endpoints said, kept between runs in `data/limits.json`.

A `Capacity` learns an endpoint's limits from the `anthropic-ratelimit-*` headers of
its first answer; until then only `scheduling.model_requests_start` requests go. A run
that starts knowing them (what the last run's answers said, each bucket's level then,
refilled for the time since at its advertised rate) opens its window at once, so the
first tick of a resumed run waits no round trip for the headers. The file is a cache:
a missing, damaged, foreign or hostile one (a link, a FIFO, too long) is as none, and
nothing is lost with it; the headers of the first answer correct whatever it said.

    remembered = read_limits(data_dir)                  # {} when there is nothing usable
    capacities = Capacities(start=32, ceiling=1000, remembered=remembered)
    ...
    write_limits(data_dir, capacities.said())           # as the run closes
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from storage.errors import StorageError
from storage.side_files import read_bytes, write_whole

log = logging.getLogger("hearth.capacity")

LIMITS_FILE = "limits.json"
MOST_BYTES = 256 * 1024
"""A record of a few endpoints is a few hundred bytes; a larger file is not one."""
VERSION = 1


def read_limits(data_dir: Path) -> dict[str, Mapping[str, object]]:
    """What earlier runs' endpoints said, by `Capacities.key`; {} for nothing usable."""
    path = Path(data_dir) / LIMITS_FILE
    raw = read_bytes(path)
    if raw is None:
        return {}
    try:
        if len(raw) > MOST_BYTES:
            raise ValueError("too long")
        record = json.loads(raw.decode("utf-8"))
        if not isinstance(record, dict) or record.get("version") != VERSION:
            raise ValueError("not a record of this Hearth's")
        endpoints = record["endpoints"]
        if not isinstance(endpoints, dict):
            raise ValueError("no endpoints")
    except (ValueError, KeyError) as exc:
        log.info("%s is not used (%s); limits are learned from the first answers", path, exc)
        return {}
    return {str(k): v for k, v in endpoints.items() if isinstance(v, Mapping)}


def write_limits(data_dir: Path, said: Mapping[str, Mapping[str, object]]) -> None:
    """Keep what the endpoints said for the next run (written whole, then renamed in);
    a failure is logged, never raised: the next run learns the limits again."""
    if not said:
        return
    path = Path(data_dir) / LIMITS_FILE
    data = json.dumps({"version": VERSION, "endpoints": said}, indent=1).encode() + b"\n"
    try:
        write_whole(path, data)
    except (OSError, StorageError) as exc:
        log.warning("the endpoints' limits could not be kept in %s (%s)", path, exc)
