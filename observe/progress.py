"""A progress bar for world creation on a terminal; silence everywhere else."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

ProgressCallback = Callable[[str, float], None]


@contextmanager
def creation_progress(stream: TextIO, enabled: bool) -> Iterator[ProgressCallback | None]:
    """Yield a callback (stage, fraction) drawing a bar on `stream`, or None if disabled."""
    if not enabled:
        yield None
        return
    console = Console(file=stream)
    bar = Progress(
        TextColumn("{task.description:<30}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    with bar:
        task = bar.add_task("creating the world", total=1.0)

        def report(stage: str, fraction: float) -> None:
            bar.update(task, description=stage, completed=max(0.0, min(1.0, fraction)))

        yield report
