"""`hearth --map [PATH]`: the whole world drawn in the terminal, or written as a PNG
(one pixel per cell), through `observe/worldmap.py`; the world is only read.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from config import RuntimeEnv
from observe.worldmap import render_terminal_map, supports_color, write_png
from services.command_errors import EXIT_OK, EXIT_USAGE, CliError
from services.status_command import first_problem
from services.world_view import world_picture
from storage import Storage


async def draw_map(env: RuntimeEnv, target: str) -> int:
    """Draw the world at `target` (a .png path), or in the terminal when it is empty;
    a damaged world is refused first, as everywhere."""
    path = Path(target) if target else None
    if path is not None and path.suffix.lower() != ".png":
        suffix = path.suffix or "no suffix"
        raise CliError(f"--map writes PNG images: give a path ending in .png ({suffix} given)",
                       EXIT_USAGE)
    if not Storage.world_exists(env.data_dir):
        raise CliError(f"no world in {env.data_dir} yet; create one with "
                       f"`{env.command('--init')}`")
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        async with storage.db.one_moment():  # the check and the picture see one tick
            damage = await first_problem(storage, env)
            picture = None if damage else await world_picture(storage)
        if damage:
            raise CliError(damage)
    if picture is None:
        raise CliError(f"{env.data_dir}: the database holds no world yet (run "
                       f"`{env.command('--init')}`)")
    if path is not None:
        write_png(path, picture.codes, agents=picture.agents, landmarks=picture.landmarks)
        height, width = picture.codes.shape
        print(f"Wrote {path} ({width}x{height} pixels, one per cell; "
              f"{len(picture.agents)} agents and {len(picture.landmarks)} landmarks marked)")
        return EXIT_OK
    columns, rows = shutil.get_terminal_size((100, 40))
    color = supports_color(sys.stdout, os.environ)
    try:
        text = render_terminal_map(picture.codes, max_columns=columns, max_rows=max(rows - 1, 4),
                                   color=color, agents=picture.agents,
                                   landmarks=picture.landmarks)
    except ValueError as exc:
        raise CliError(f"cannot draw the map here: {exc}", EXIT_USAGE) from None
    print(text)
    return EXIT_OK
