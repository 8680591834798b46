"""Fixtures for the storage integration tests: a real SQLite world in tmp_path.

Nothing here is mocked. `storage` is an open Storage on `data_dir`, closed after
the test; `reopen` opens another, independent Storage on the same folder (its
own connection), which is how a test proves what really reached the file.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

# The project is not installed into the venv; make its packages importable
# no matter how pytest was started.
PROJECT_ROOT = Path(__file__).resolve().parents[3]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from storage import Storage  # noqa: E402


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def storage(data_dir: Path) -> AsyncIterator[Storage]:
    store = Storage(data_dir)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def reopen(data_dir: Path) -> Callable[..., Storage]:
    """A factory: `async with reopen() as other:` is a second connection to the world."""

    def make(**kwargs: object) -> Storage:
        return Storage(data_dir, **kwargs)  # type: ignore[arg-type]

    return make
