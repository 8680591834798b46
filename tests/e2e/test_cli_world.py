"""World generation through the command line: --init, --status and --map as a person uses them.

Every test drives `main.main` in-process against real folders in tmp_path and then
reads back what a person would look at: stdout, stderr, the database file, the
agents' home folders and the map image.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import main
from config import load_config
from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain
from core.types import agent_name
from generation.regions import label_regions
from observe.worldmap import LEGEND_WIDTH, legend_height
from services.world_view import world_picture
from storage import Storage

SEED = 5
WIDTH, HEIGHT = 120, 80
SIZE = f"{WIDTH}x{HEIGHT}"
CONFIGURED = ("Ember", "Sage", "River")
"""The agents of the shipped agents.yaml, in file order."""
HOME_FILES = ("journal.md", "notes.md", "discoveries.md", ".status")
WATER = TERRAIN_CODE[Terrain.WATER]
GRASS = TERRAIN_CODE[Terrain.GRASS]
ANSI_ESCAPE = "\x1b"


# --- driving the CLI -------------------------------------------------------------------


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    return tmp_path / "data", tmp_path / "agents"


def hearth(
    capsys: pytest.CaptureFixture[str], dirs: tuple[Path, Path], *args: str
) -> tuple[int, str, str]:
    """Run the CLI; an argparse exit (SystemExit) counts as its exit code."""
    data, agents = dirs
    try:
        code = main.main(["--data-dir", str(data), "--agents-dir", str(agents), *args])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def create(capsys, dirs, *args: str) -> str:
    """--init that must succeed; returns its stdout."""
    code, out, err = hearth(capsys, dirs, "--init", *args)
    assert code == 0, err
    return out


def status_json(capsys, dirs) -> dict:
    code, out, err = hearth(capsys, dirs, "--status", "--json")
    assert code == 0, err
    return json.loads(out)


def one_line(err: str) -> str:
    """The single line a user's mistake must produce on stderr."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), f"expected one stderr line, got:\n{err}"
    return lines[0]


def read_raster(data_dir: Path) -> tuple[bytes, np.ndarray]:
    """The stored terrain: the raw blob and the decoded (height, width) codes."""
    conn = sqlite3.connect(data_dir / "world.db")
    try:
        width, height, encoding, blob = conn.execute(
            "SELECT width, height, encoding, data FROM terrain_raster WHERE id = 1"
        ).fetchone()
    finally:
        conn.close()
    assert encoding == "zlib:u8"
    codes = np.frombuffer(zlib.decompress(blob), dtype=np.uint8).reshape(height, width)
    return blob, codes


def positions(status: dict) -> dict[str, tuple[int, int]]:
    return {a["name"]: (a["x"], a["y"]) for a in status["agents"]}


def manhattan(a: tuple[int, int], b: tuple[int, int]) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def nothing_written(dirs: tuple[Path, Path]) -> None:
    data, agents = dirs
    assert not (data / "world.db").exists(), "a refused command must not create a world"
    assert not agents.exists() or not any(agents.iterdir()), "nor any agent home"


# --- 1. a new world and its summary ------------------------------------------------------


def test_init_reports_where_things_went_and_what_to_run_next(capsys, dirs) -> None:
    out = create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    assert f"Created a {SIZE} world (seed {SEED})" in out
    assert str(dirs[0] / "world.db") in out, "stdout names the database file"
    assert str(dirs[1]) in out and "journal.md" in out, "stdout names the homes"
    again = f"hearth --data-dir {dirs[0]} --agents-dir {dirs[1]}"
    assert f"{again} --status" in out and f"{again} --map" in out, "what to run next"
    for name in CONFIGURED:
        assert name in out


def test_status_json_describes_the_new_world(capsys, dirs) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    status = status_json(capsys, dirs)
    assert (status["width"], status["height"], status["seed"]) == (WIDTH, HEIGHT, SEED)
    assert status["initialised"] is True and status["tick"] == 0

    shares = status["terrain_shares"]
    assert set(shares) == {t.value for t in TERRAIN_ORDER}
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.005)
    assert all(0.0 <= share <= 1.0 for share in shares.values())
    assert shares["grass"] > 0, "agents need grass to stand on"

    assert isinstance(status["time_of_day"], str) and status["time_of_day"].strip()
    assert re.search(r"\d\d:\d\d", status["time_of_day"]), status["time_of_day"]

    landmarks = status["landmarks"]
    assert isinstance(landmarks, list) and landmarks, "a 120x80 world has landmarks"
    assert status["counts"]["landmarks"] == len(landmarks)
    for mark in landmarks:
        assert set(mark) >= {"kind", "name", "x", "y"}
        assert mark["kind"] and mark["name"]
        assert 0 <= mark["x"] < WIDTH and 0 <= mark["y"] < HEIGHT, mark
    assert len({m["name"] for m in landmarks}) == len(landmarks), "landmark names are distinct"

    agents = status["agents"]
    assert sorted(a["name"] for a in agents) == sorted(CONFIGURED)
    for agent in agents:
        assert 0 <= agent["x"] < WIDTH and 0 <= agent["y"] < HEIGHT, agent
        assert agent["state"] == "awake"


def test_agents_stand_on_grass_apart_and_can_reach_each_other(capsys, dirs) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    where = positions(status_json(capsys, dirs))
    _, codes = read_raster(dirs[0])
    assert codes.shape == (HEIGHT, WIDTH)

    for name, (x, y) in where.items():
        assert codes[y, x] == GRASS, f"{name} starts on {TERRAIN_ORDER[codes[y, x]]}, not grass"

    max_spacing = load_config().settings.placement.max_spacing
    for (a, pa), (b, pb) in combinations(where.items(), 2):
        distance = manhattan(pa, pb)
        assert distance >= 1, f"{a} and {b} share a cell"
        # Groups of up to four keep every pair within max_spacing (generation.placement).
        assert distance <= max_spacing, f"{a} and {b} are {distance} apart"

    labels, _ = label_regions(codes != WATER)
    regions = {int(labels[y, x]) for x, y in where.values()}
    assert len(regions) == 1 and 0 not in regions, f"agents in regions {regions}"


@pytest.fixture
def made(capsys, dirs) -> tuple[dict, np.ndarray]:
    """A 120x80 world made through the CLI: its --status --json and its decoded raster.

    A plain fixture, so `main.main` (which calls asyncio.run) runs outside the test's loop.
    """
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    return status_json(capsys, dirs), read_raster(dirs[0])[1]


async def test_stored_picture_matches_the_raster_and_the_status(dirs, made) -> None:
    status, codes = made
    async with Storage(dirs[0], create=False, read_only=True) as storage:
        picture = await world_picture(storage)
    assert picture is not None
    assert np.array_equal(picture.codes, codes)
    assert {name: (p.x, p.y) for name, p in picture.agents} == positions(status)
    for name, p in picture.agents:
        assert picture.codes[p.y, p.x] == GRASS, f"{name} is not on grass"
    assert sorted(m.name for m in picture.landmarks) == sorted(
        m["name"] for m in status["landmarks"]
    )


# --- 2. homes ------------------------------------------------------------------------------


def test_every_agent_gets_a_home_with_its_position(capsys, dirs) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    status = status_json(capsys, dirs)
    homes = dirs[1]
    assert sorted(p.name for p in homes.iterdir()) == sorted(CONFIGURED)
    for agent in status["agents"]:
        home = homes / agent["name"]
        for filename in HOME_FILES:
            assert (home / filename).is_file(), f"{home / filename} is missing"
        for filename in ("journal.md", "notes.md", "discoveries.md"):
            assert (home / filename).read_text() == "", "a new home starts empty"
        text = (home / ".status").read_text()
        assert f"name: {agent['name']}" in text
        assert f"position: ({agent['x']}, {agent['y']})" in text
        assert f"time: {status['time_of_day']}" in text


def test_force_backs_up_the_world_and_moves_old_homes_aside(capsys, dirs) -> None:
    data, homes = dirs
    create(capsys, dirs, "--seed", "1", "--size", SIZE)
    old = positions(status_json(capsys, dirs))
    journal = homes / "Ember" / "journal.md"
    journal.write_text("Day one. I found a bent branch by the water.\n")
    (homes / "Sage" / "notes.md").write_text("The lake is cold.\n")

    out = create(capsys, dirs, "--seed", "2", "--size", SIZE, "--force")
    assert "previous world was saved to" in out

    backups = data / "backups"
    [folder] = list(backups.glob("world.replaced.*"))  # the whole old world, as one
    assert str(folder) in out
    saved = [folder / "world.db"]
    conn = sqlite3.connect(saved[0])
    try:
        assert conn.execute("SELECT seed FROM world_state").fetchone() == (1,)
        stored = dict(conn.execute("SELECT name, x || ',' || y FROM agents").fetchall())
    finally:
        conn.close()
    assert stored == {name: f"{x},{y}" for name, (x, y) in old.items()}

    moved = folder / "agents"
    assert sorted(p.name for p in moved.iterdir()) == sorted(CONFIGURED)
    assert (moved / "Ember" / "journal.md").read_text() == (
        "Day one. I found a bent branch by the water.\n"
    ), "what an agent wrote is kept"
    assert (moved / "Sage" / "notes.md").read_text() == "The lake is cold.\n"
    old_x, old_y = old["Ember"]
    assert f"position: ({old_x}, {old_y})" in (moved / "Ember" / ".status").read_text()

    # The new world starts with fresh homes at the usual place.
    assert status_json(capsys, dirs)["seed"] == 2
    new = positions(status_json(capsys, dirs))
    assert journal.read_text() == ""
    new_x, new_y = new["Ember"]
    assert f"position: ({new_x}, {new_y})" in (homes / "Ember" / ".status").read_text()


def test_force_moves_every_home_of_the_old_world_with_it(capsys, dirs) -> None:
    """Homes belong to their world: all of the old world's go with it, so a later world
    with the same names never finds an old agent's journal in a new agent's home."""
    _, homes = dirs
    create(capsys, dirs, "--seed", "3", "--size", SIZE, "--agents", "4")
    extra = sorted({p.name for p in homes.iterdir()} - set(CONFIGURED))
    assert len(extra) == 1
    for name in ("Sage", extra[0]):
        (homes / name / "journal.md").write_text(f"{name} was here.\n")

    create(capsys, dirs, "--seed", "4", "--size", SIZE, "--agents", "1", "--force")
    moved = list((dirs[0] / "backups").glob("world.replaced.*/agents"))
    assert len(moved) == 1
    assert sorted(p.name for p in moved[0].iterdir()) == sorted([*CONFIGURED, *extra])
    for name in ("Sage", extra[0]):
        assert (moved[0] / name / "journal.md").read_text() == f"{name} was here.\n"
        assert not (homes / name).exists()
    assert sorted(p.name for p in homes.iterdir()) == ["Ember"]  # the new world's, fresh
    assert (homes / "Ember" / "journal.md").read_text() == ""
    assert [a["name"] for a in status_json(capsys, dirs)["agents"]] == ["Ember"]


# --- 3. the seed decides the world --------------------------------------------------------


def test_same_seed_and_size_give_the_same_world(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    first = (tmp_path / "one" / "data", tmp_path / "one" / "agents")
    second = (tmp_path / "two" / "data", tmp_path / "two" / "agents")
    other = (tmp_path / "three" / "data", tmp_path / "three" / "agents")
    create(capsys, first, "--seed", str(SEED), "--size", SIZE)
    create(capsys, second, "--seed", str(SEED), "--size", SIZE)
    create(capsys, other, "--seed", str(SEED + 1), "--size", SIZE)

    blob_one, codes_one = read_raster(first[0])
    blob_two, _ = read_raster(second[0])
    assert blob_one == blob_two
    status_one, status_two = status_json(capsys, first), status_json(capsys, second)
    assert positions(status_one) == positions(status_two)
    assert status_one["landmarks"] == status_two["landmarks"]

    _, codes_other = read_raster(other[0])
    assert codes_other.shape == codes_one.shape
    assert not np.array_equal(codes_other, codes_one), "another seed gives other terrain"


# --- 4. how many agents ----------------------------------------------------------------------


def test_more_agents_than_configured_get_generated_names(capsys, dirs) -> None:
    out = create(capsys, dirs, "--seed", str(SEED), "--size", SIZE, "--agents", "5")
    names = [a["name"] for a in status_json(capsys, dirs)["agents"]]
    assert len(names) == 5 and set(CONFIGURED) <= set(names)
    generated = [n for n in names if n not in CONFIGURED]
    assert len(generated) == 2
    taken = {n.casefold() for n in CONFIGURED}
    for name in generated:
        assert agent_name(name) == name, "a generated name is a valid agent name"
        assert name.casefold() not in taken
    assert len({n.casefold() for n in generated}) == 2, "generated names differ"
    generated_line = next(line for line in out.splitlines() if "generated" in line)
    for name in generated:
        assert name in generated_line, f"stdout does not call {name} generated"
    assert sorted(p.name for p in dirs[1].iterdir()) == sorted(names), "each gets a home"


def test_one_agent_is_the_first_configured(capsys, dirs) -> None:
    out = create(capsys, dirs, "--seed", str(SEED), "--size", SIZE, "--agents", "1")
    status = status_json(capsys, dirs)
    assert [a["name"] for a in status["agents"]] == [CONFIGURED[0]]
    assert [p.name for p in dirs[1].iterdir()] == [CONFIGURED[0]]
    assert "generated" not in out
    for name in CONFIGURED[1:]:
        assert name not in out


# --- 5. mistakes are refused in one line and write nothing ----------------------------------

BAD_INPUT = [
    (["--init", "--size", "0x0"], ["--size", "0x0", "at least 10"]),
    (["--init", "--size", "-5x10"], ["--size", "-5x10"]),
    (["--init", "--size", "abcx10"], ["--size", "'abcx10'", "WIDTHxHEIGHT"]),
    (["--init", "--size", "10"], ["--size", "'10'", "WIDTHxHEIGHT"]),
    (["--init", "--size", "5x5"], ["--size", "5x5", "too small"]),
    (["--init", "--size", "1000000x1000000"], ["1000000x1000000", "memory", "GiB"]),
    (["--init", "--agents", "0"], ["--agents", "at least 1", "0"]),
    (["--init", "--agents", "-1"], ["--agents", "at least 1", "-1"]),
    (["--init", "--agents", "two"], ["--agents", "whole number", "'two'"]),
    (["--init", "--agents", "500", "--size", "12x12"], ["500 agents", "lower the count"]),
    (["--init", "--seed", "-1"], ["--seed", "at least 0", "-1"]),
    (["--init", "--seed", "x"], ["--seed", "whole number", "'x'"]),
    (["--size", "100x100"], ["--size", "--init"]),
    (["--agents", "3"], ["--agents", "--init"]),
]


@pytest.mark.parametrize(("args", "expected"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    capsys, dirs, args: list[str], expected: list[str]
) -> None:
    code, out, err = hearth(capsys, dirs, *args)
    assert code == 2, (out, err)
    last = err.splitlines()[-1] if err else ""
    for part in expected:
        assert part in last, f"{part!r} not in {last!r}"
    nothing_written(dirs)
    one_line(err)


def test_placement_refusal_does_not_repeat_itself(capsys, dirs) -> None:
    code, _, err = hearth(capsys, dirs, "--init", "--agents", "500", "--size", "12x12")
    assert code == 2
    line = one_line(err)
    assert line.count("cannot place") == 1, line
    nothing_written(dirs)


def test_existing_world_is_kept_without_force(capsys, dirs) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    before = status_json(capsys, dirs)
    homes_before = {p: p.read_bytes() for p in dirs[1].rglob("*") if p.is_file()}

    code, out, err = hearth(capsys, dirs, "--init", "--seed", "9", "--size", "64x64")
    assert code == 2, out
    line = one_line(err)
    assert "already exists" in line and "--force" in line

    after = status_json(capsys, dirs)
    assert after["seed"] == SEED and (after["width"], after["height"]) == (WIDTH, HEIGHT)
    assert positions(after) == positions(before)
    assert {p: p.read_bytes() for p in dirs[1].rglob("*") if p.is_file()} == homes_before
    assert not (dirs[0] / "backups").exists(), "nothing was replaced, so nothing backed up"


# --- 6. maps ---------------------------------------------------------------------------------


def test_terminal_map_fits_the_terminal_and_has_a_legend(capsys, dirs, monkeypatch) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setenv("LINES", "30")
    code, out, err = hearth(capsys, dirs, "--map")
    assert code == 0, err
    assert ANSI_ESCAPE not in out, "no colour codes when stdout is not a terminal"
    lines = out.rstrip("\n").split("\n")
    assert all(len(line) <= 60 for line in lines), max(lines, key=len)
    assert len(lines) <= 30
    legend = "\n".join(lines)
    for word in [t.value for t in TERRAIN_ORDER] + ["agent", "landmark"]:
        assert word in legend, f"legend lacks {word}"
    body = [line for line in lines if "water" not in line and "landmark" not in line]
    assert len(body) >= 10, "most of the screen is the map itself"
    assert any("@" in line for line in body), "agents are marked on the map"
    assert any("." in line for line in body), "grass is drawn"


def test_terminal_map_follows_a_narrower_terminal(capsys, dirs, monkeypatch) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setenv("LINES", "20")
    code, out, err = hearth(capsys, dirs, "--map")
    assert code == 0, err
    lines = out.rstrip("\n").split("\n")
    assert all(len(line) <= 30 for line in lines), max(lines, key=len)
    assert len(lines) <= 20
    assert ANSI_ESCAPE not in out


def test_map_png_has_one_pixel_per_cell_and_the_legend_beside_it(
        capsys, dirs, tmp_path: Path) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    target = tmp_path / "out.png"
    code, out, err = hearth(capsys, dirs, "--map", str(target))
    assert code == 0, err
    assert str(target) in out
    with Image.open(target) as image:
        assert image.format == "PNG"
        # The map, one pixel a cell, at the top left; the one legend to its right.
        assert image.size == (WIDTH + LEGEND_WIDTH, max(HEIGHT, legend_height()))
        assert image.mode == "RGB"
        assert len(image.getcolors(maxcolors=4096) or []) >= 3, "more than one flat colour"


def test_map_to_a_non_png_path_is_refused(capsys, dirs, tmp_path: Path) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    target = tmp_path / "out.txt"
    code, _, err = hearth(capsys, dirs, "--map", str(target))
    assert code == 2
    assert ".png" in one_line(err)
    assert not target.exists()


def test_map_without_a_world_is_one_line(capsys, dirs) -> None:
    code, out, err = hearth(capsys, dirs, "--map")
    assert code == 1
    line = one_line(err)
    assert "no world" in line and "--init" in line
    assert out == ""
    assert not dirs[0].exists(), "--map must not create anything"


def test_map_into_a_missing_folder_is_one_line(capsys, dirs, tmp_path, monkeypatch) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    monkeypatch.chdir(tmp_path)
    code, out, err = hearth(capsys, dirs, "--map", "missing_dir/x.png")
    assert code == 1, out
    line = one_line(err)
    assert "missing_dir" in line
    assert not (tmp_path / "missing_dir").exists()


# --- 7. the text summary ------------------------------------------------------------------------


def test_status_text_shows_time_terrain_and_landmarks(capsys, dirs) -> None:
    create(capsys, dirs, "--seed", str(SEED), "--size", SIZE)
    status = status_json(capsys, dirs)
    code, out, err = hearth(capsys, dirs, "--status")
    assert code == 0, err
    assert status["time_of_day"] in out
    terrain_line = next(line for line in out.splitlines() if line.strip().startswith("terrain"))
    for kind in TERRAIN_ORDER:
        assert re.search(rf"\b{kind.value} \d+(\.\d+)?%", terrain_line), kind
    assert f"landmarks ({len(status['landmarks'])}):" in out
    for mark in status["landmarks"]:
        assert f"({mark['x']}, {mark['y']})" in out and mark["name"] in out
    for name in CONFIGURED:
        assert name in out


# --- 8. no progress bar off a terminal ----------------------------------------------------------


def test_init_prints_nothing_on_stderr_when_it_is_not_a_terminal(capsys, dirs) -> None:
    code, out, err = hearth(capsys, dirs, "--init", "--seed", str(SEED), "--size", "64x64")
    assert code == 0
    assert err == "", f"stderr is not a terminal, yet got {err!r}"
    assert "Created a 64x64 world" in out
