"""The agent's file tools on real folders in tmp_path: round trips, limits, and escapes.

Every escape attempt in ESCAPE_ATTEMPTS runs against a fresh home with a secret file
and a sentinel folder outside it, and must fail (or, for the few literal names that
are allowed, stay inside) while leaving everything outside the home as it was: same
listing, contents, sizes, mtimes and link targets, and the secret never in a result.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.agent_files import AgentFiles, FileResult
from storage.homes import AgentHomes

SECRET = "TOP-SECRET-7f3a9c-never-leave-the-outside"
TEXT = "written by the agent\n"
LIMIT = 64 * 1024


@dataclass
class Env:
    root: Path  # tmp_path: holds the far secret
    agents: Path  # agents_root: holds the near secret and the sentinel folder
    home: Path  # agents_root/Ember
    secret: Path  # agents_root/secret, what `../secret` would reach
    far_secret: Path  # tmp_path/secret, what `../../secret` would reach
    sentinel: Path  # agents_root/sentinel/, a folder with one file
    files: AgentFiles


def make_env(tmp_path: Path) -> Env:
    agents = tmp_path / "agents"
    home = AgentHomes(agents).create("Ember", "You are by the river. It is morning.")
    (home / "notes.md").write_text("first note\n", encoding="utf-8")
    (home / "notes").mkdir()
    (home / "notes" / "trees.md").write_text("oak, ash\n", encoding="utf-8")
    secret = agents / "secret"
    secret.write_text(SECRET, encoding="utf-8")
    far_secret = tmp_path / "secret"
    far_secret.write_text(SECRET, encoding="utf-8")
    sentinel = agents / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text(SECRET, encoding="utf-8")
    return Env(tmp_path, agents, home, secret, far_secret, sentinel, AgentFiles(home))


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple[object, ...]]:
    """Everything under `root` (not `skip`): kind, size, mtime, content hash, link target."""
    seen: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != skip]
        info = os.lstat(here)
        seen[str(here.relative_to(root))] = ("dir", info.st_mtime_ns, sorted(os.listdir(here)))
        for name in [*dirnames, *filenames]:
            path = here / name
            info = os.lstat(path)
            key = str(path.relative_to(root))
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[key] = ("file", info.st_size, info.st_mtime_ns, info.st_nlink, digest)
            elif not path.is_dir():
                seen[key] = ("other", info.st_mode, info.st_mtime_ns)
    return seen


def call_within(seconds: float, call: Callable[[], FileResult]) -> FileResult:
    """Run `call` in a daemon thread: a blocked call fails the test instead of hanging it."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as error:  # reported below, in the test's thread
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call blocked"
    assert "error" not in box, f"AgentFiles raised for bad input: {box.get('error')!r}"
    result = box["result"]
    assert isinstance(result, FileResult)
    return result


# -- setups for the escape attempts ---------------------------------------------


def link_file_to_secret(env: Env) -> None:
    os.symlink(env.secret, env.home / "link.md")


def link_dir_outside(env: Env) -> None:
    os.symlink(env.sentinel, env.home / "outdir")


def link_dir_relative_up(env: Env) -> None:
    os.symlink("..", env.home / "up")


def link_notes_relative_up(env: Env) -> None:
    os.symlink("../..", env.home / "notes" / "up")


def link_to_link(env: Env) -> None:
    os.symlink(env.secret, env.home / "link.md")
    os.symlink("link.md", env.home / "link2.md")


def dangling_link(env: Env) -> None:
    os.symlink(env.agents / "created-outside.md", env.home / "dangle.md")


def dangling_dir_link(env: Env) -> None:
    os.symlink(env.agents / "made-outside", env.home / "newdir")


def hard_link_to_secret(env: Env) -> None:
    os.link(env.secret, env.home / "hard.md")


def fifo_in_home(env: Env) -> None:
    os.mkfifo(env.home / "pipe")


def fifo_link_outside(env: Env) -> None:
    os.mkfifo(env.agents / "outside-pipe")
    os.symlink(env.agents / "outside-pipe", env.home / "pipe-link")


def socket_in_home(env: Env) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        where = env.home / "sock"  # a socket's path has a short limit: use the shorter form
        server.bind(min(str(where), os.path.relpath(where), key=len))
    finally:
        server.close()


def swap_in_link_after_read(env: Env) -> None:
    assert env.files.read("notes/trees.md").content == "oak, ash\n"
    (env.home / "notes" / "trees.md").unlink()
    os.symlink(env.secret, env.home / "notes" / "trees.md")


def swap_folder_for_link_after_list(env: Env) -> None:
    assert env.files.list("notes").ok
    (env.home / "notes" / "trees.md").unlink()
    (env.home / "notes").rmdir()
    os.symlink(env.sentinel, env.home / "notes")


@dataclass(frozen=True)
class Attempt:
    name: str
    call: Callable[[AgentFiles, Env], FileResult]
    says: str = ""  # a phrase the refusal must contain
    setup: Callable[[Env], None] | None = None
    stays_inside: str | None = None  # allowed: this path inside the home holds TEXT


def A(name: str, call: Callable[[AgentFiles, Env], FileResult], says: str = "",
      setup: Callable[[Env], None] | None = None, stays_inside: str | None = None) -> Attempt:
    return Attempt(name, call, says, setup, stays_inside)


DOTDOT = "'..' is not allowed"
RELATIVE = "path must be relative to your home"
LINK = "is a symbolic link; links are not followed"
LOOKS = "which looks like"

ESCAPE_ATTEMPTS: list[Attempt] = [
    # plain traversal
    A("dotdot-secret-read", lambda f, e: f.read("../secret"), DOTDOT),
    A("dotdot-secret-write", lambda f, e: f.write("../secret", TEXT), DOTDOT),
    A("dotdot-new-file-write", lambda f, e: f.write("../planted.md", TEXT), DOTDOT),
    A("dotdot-secret-append", lambda f, e: f.append("../secret", TEXT), DOTDOT),
    A("dotdot-secret-edit", lambda f, e: f.edit("../secret", "TOP", "x"), DOTDOT),
    A("a-dotdot-dotdot-secret", lambda f, e: f.read("a/../../secret"), DOTDOT),
    A("notes-dotdot-dotdot-secret", lambda f, e: f.read("notes/../../secret"), DOTDOT),
    A("notes-dotdot-dotdot-write", lambda f, e: f.write("notes/../../secret", TEXT), DOTDOT),
    A("dot-slash-dotdot-secret", lambda f, e: f.read("./../secret"), DOTDOT),
    A("two-levels-up-far-secret", lambda f, e: f.read("../../secret"), DOTDOT),
    A("dotdot-alone-read", lambda f, e: f.read(".."), DOTDOT),
    A("dotdot-trailing-slash-write", lambda f, e: f.write("../", TEXT), DOTDOT),
    A("list-dotdot", lambda f, e: f.list(".."), DOTDOT),
    A("list-dotdot-sentinel", lambda f, e: f.list("../sentinel"), DOTDOT),
    A("dot-tricks-dot-dot-dotdot", lambda f, e: f.read("././../secret"), DOTDOT),
    A("three-dots-name", lambda f, e: f.read(".../secret"), "only of dots"),
    A("four-dots-name", lambda f, e: f.write("..../secret", TEXT), "only of dots"),
    A("dot-dot-slash-slash", lambda f, e: f.read("..//secret"), DOTDOT),
    A("dotdot-with-combining-mark", lambda f, e: f.read("..\u0301/secret"), "only of dots"),
    # absolute paths
    A("etc-passwd", lambda f, e: f.read("/etc/passwd"), RELATIVE),
    A("absolute-secret-read", lambda f, e: f.read(str(e.secret)), RELATIVE),
    A("absolute-secret-write", lambda f, e: f.write(str(e.secret), TEXT), RELATIVE),
    A("absolute-new-file-write", lambda f, e: f.write(str(e.agents / "new.md"), TEXT),
      RELATIVE),
    A("absolute-sentinel-list", lambda f, e: f.list(str(e.sentinel)), RELATIVE),
    A("double-slash-root", lambda f, e: f.read("//etc/passwd"), RELATIVE),
    A("proc-self-root", lambda f, e: f.read("/proc/self/root/etc/passwd"), RELATIVE),
    A("file-url", lambda f, e: f.read(f"file://{e.secret}"), "empty name"),
    A("tilde-secret", lambda f, e: f.read("~/secret"), RELATIVE),
    A("tilde-user-secret", lambda f, e: f.write("~root/secret", TEXT), RELATIVE),
    # NUL, backslashes, control characters, empty paths
    A("nul-in-middle", lambda f, e: f.read("notes.md\x00../secret"), "NUL"),
    A("trailing-nul", lambda f, e: f.write("../secret\x00", TEXT), "NUL"),
    A("nul-write", lambda f, e: f.write("notes\x00.md", TEXT), "NUL"),
    A("backslash-traversal", lambda f, e: f.read("..\\secret"), "backslashes"),
    A("backslash-write", lambda f, e: f.write("..\\..\\secret", TEXT), "backslashes"),
    A("newline-in-name", lambda f, e: f.write("notes\n.md", TEXT), "control character"),
    A("newline-then-dotdot", lambda f, e: f.read("x\n/../../secret"), "control character"),
    A("carriage-return", lambda f, e: f.write("a\rb.md", TEXT), "control character"),
    A("escape-char", lambda f, e: f.write("\x1b[2Jnotes.md", TEXT), "control character"),
    A("tab-in-name", lambda f, e: f.write("a\tb.md", TEXT), "control character"),
    A("delete-char", lambda f, e: f.write("a\x7f.md", TEXT), "control character"),
    A("right-to-left-override", lambda f, e: f.write("evil\u202edm.txt", TEXT), "invisible"),
    A("zero-width-space-dots", lambda f, e: f.read(".\u200b./secret"), "invisible"),
    A("lone-surrogate", lambda f, e: f.write("a\udcff.md", TEXT), "invisible"),
    A("no-break-space", lambda f, e: f.write("a\u00a0b.md", TEXT), "ordinary space"),
    A("line-separator", lambda f, e: f.write("a\u2028b.md", TEXT), "ordinary space"),
    A("empty-path", lambda f, e: f.read(""), "path is empty"),
    A("empty-path-write", lambda f, e: f.write("", TEXT), "path is empty"),
    A("whitespace-only", lambda f, e: f.write("   ", TEXT), "path is empty"),
    A("space-dotdot", lambda f, e: f.read(" ../secret"), "begin or end with a space"),
    A("dotdot-space", lambda f, e: f.read(".. /secret"), "begin or end with a space"),
    # not text at all
    A("path-none", lambda f, e: f.read(None), "path must be text"),
    A("path-bytes", lambda f, e: f.read(b"../secret"), "path must be text"),
    A("path-list", lambda f, e: f.write(["..", "secret"], TEXT), "path must be text"),
    A("text-not-text", lambda f, e: f.write("../secret", 42), DOTDOT),
    # unicode look-alikes, normalisation
    A("division-slash", lambda f, e: f.read("..\u2215secret"), LOOKS),
    A("fullwidth-solidus", lambda f, e: f.write("..\uff0fsecret", TEXT), LOOKS),
    A("fraction-slash", lambda f, e: f.read("..\u2044secret"), LOOKS),
    A("one-dot-leader", lambda f, e: f.read("\u2024\u2024/secret"), LOOKS),
    A("fullwidth-full-stop", lambda f, e: f.write("\uff0e\uff0e/secret", TEXT), LOOKS),
    A("small-full-stop", lambda f, e: f.read("\ufe52\ufe52/secret"), LOOKS),
    A("two-dot-leader", lambda f, e: f.read("\u2025/secret"), LOOKS),
    A("fullwidth-everything", lambda f, e: f.read("\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fs"),
      LOOKS),
    A("fullwidth-reverse-solidus", lambda f, e: f.read("..\uff3csecret"), LOOKS),
    A("set-minus-backslash", lambda f, e: f.read("..\u2216secret"), LOOKS),
    A("combining-solidus", lambda f, e: f.write("a\u0338b.md", TEXT), LOOKS),
    A("account-of-sign", lambda f, e: f.write("\u2100.md", TEXT), LOOKS),
    A("non-nfc-name", lambda f, e: f.write("cafe\u0301.md", TEXT), "NFC"),
    A("non-nfc-hangul", lambda f, e: f.write("\u1100\u1161.md", TEXT), "NFC"),
    # long and deep
    A("very-long-name", lambda f, e: f.write("a" * 10_000, TEXT), "the limit is 100"),
    A("long-name-read", lambda f, e: f.read("../" * 3_000 + "secret"), DOTDOT),
    A("long-utf8-name", lambda f, e: f.write("\u00e9" * 100 + "xx", TEXT), "the limit is 100"),
    A("very-deep-path", lambda f, e: f.write("a/" * 60 + "x.md", TEXT), "the limit is 4"),
    A("deep-path-just-over", lambda f, e: f.write("a/b/c/d/e.md", TEXT), "5 levels deep"),
    # Hearth's own names
    A("reserved-temp-name", lambda f, e: f.write(".hearth-tmp-0000", TEXT), "reserved"),
    A("status-partial", lambda f, e: f.write(".status.partial", TEXT), "written by Hearth"),
    # symbolic links in the home
    A("symlink-file-read", lambda f, e: f.read("link.md"), LINK, link_file_to_secret),
    A("symlink-file-write", lambda f, e: f.write("link.md", TEXT), LINK, link_file_to_secret),
    A("symlink-file-append", lambda f, e: f.append("link.md", TEXT), LINK,
      link_file_to_secret),
    A("symlink-file-edit", lambda f, e: f.edit("link.md", "TOP", "x"), LINK,
      link_file_to_secret),
    A("symlink-file-list", lambda f, e: f.list("link.md"), LINK, link_file_to_secret),
    A("symlink-dir-read", lambda f, e: f.read("outdir/keep.txt"), LINK, link_dir_outside),
    A("symlink-dir-write-new", lambda f, e: f.write("outdir/new.md", TEXT), LINK,
      link_dir_outside),
    A("symlink-dir-overwrite", lambda f, e: f.write("outdir/keep.txt", TEXT), LINK,
      link_dir_outside),
    A("symlink-dir-append", lambda f, e: f.append("outdir/keep.txt", TEXT), LINK,
      link_dir_outside),
    A("symlink-dir-edit", lambda f, e: f.edit("outdir/keep.txt", "TOP", "x"), LINK,
      link_dir_outside),
    A("symlink-dir-list", lambda f, e: f.list("outdir"), LINK, link_dir_outside),
    A("symlink-dir-list-slash", lambda f, e: f.list("outdir/"), LINK, link_dir_outside),
    A("relative-up-link-read", lambda f, e: f.read("up/secret"), LINK, link_dir_relative_up),
    A("relative-up-link-write", lambda f, e: f.write("up/planted.md", TEXT), LINK,
      link_dir_relative_up),
    A("nested-up-link-read", lambda f, e: f.read("notes/up/secret"), LINK,
      link_notes_relative_up),
    A("symlink-to-symlink-read", lambda f, e: f.read("link2.md"), LINK, link_to_link),
    A("symlink-to-symlink-write", lambda f, e: f.write("link2.md", TEXT), LINK, link_to_link),
    A("dangling-link-write", lambda f, e: f.write("dangle.md", TEXT), LINK, dangling_link),
    A("dangling-link-append", lambda f, e: f.append("dangle.md", TEXT), LINK,
      dangling_link),
    A("dangling-dir-link-write", lambda f, e: f.write("newdir/x.md", TEXT), LINK,
      dangling_dir_link),
    A("swapped-in-link-after-read", lambda f, e: f.read("notes/trees.md"), LINK,
      swap_in_link_after_read),
    A("swapped-in-link-then-edit", lambda f, e: f.edit("notes/trees.md", "TOP", "x"), LINK,
      swap_in_link_after_read),
    A("swapped-folder-after-list", lambda f, e: f.read("notes/keep.txt"), LINK,
      swap_folder_for_link_after_list),
    A("swapped-folder-then-write", lambda f, e: f.write("notes/new.md", TEXT), LINK,
      swap_folder_for_link_after_list),
    # hard links, special files, folders
    A("hard-link-read", lambda f, e: f.read("hard.md"), "hard links", hard_link_to_secret),
    A("hard-link-append", lambda f, e: f.append("hard.md", TEXT), "hard links",
      hard_link_to_secret),
    A("hard-link-edit", lambda f, e: f.edit("hard.md", "TOP", "x"), "hard links",
      hard_link_to_secret),
    A("fifo-read", lambda f, e: f.read("pipe"), "only regular files", fifo_in_home),
    A("fifo-write", lambda f, e: f.write("pipe", TEXT), "only regular files", fifo_in_home),
    A("fifo-append", lambda f, e: f.append("pipe", TEXT), "only regular files", fifo_in_home),
    A("fifo-edit", lambda f, e: f.edit("pipe", "a", "b"), "only regular files", fifo_in_home),
    A("socket-read", lambda f, e: f.read("sock"), "only regular files", socket_in_home),
    A("socket-append", lambda f, e: f.append("sock", TEXT), "only regular files",
      socket_in_home),
    A("link-to-outside-fifo", lambda f, e: f.read("pipe-link"), LINK, fifo_link_outside),
    A("directory-read", lambda f, e: f.read("notes"), "is a folder"),
    A("home-itself-read", lambda f, e: f.read("."), "your home itself"),
    A("directory-write", lambda f, e: f.write("notes", TEXT), "is a folder"),
    A("file-as-folder", lambda f, e: f.write("notes.md/x.md", TEXT), "not a folder"),
    # literal names that are allowed, because they stay inside
    A("url-encoded-dotdot-read", lambda f, e: f.read("%2e%2e/secret"), "no such folder"),
    A("url-encoded-dotdot-write", lambda f, e: f.write("%2e%2e/secret", TEXT),
      stays_inside="%2e%2e/secret"),
    A("url-encoded-slash-write", lambda f, e: f.write("..%2fsecret", TEXT),
      stays_inside="..%2fsecret"),
    A("dollar-home-write", lambda f, e: f.write("$HOME/secret", TEXT),
      stays_inside="$HOME/secret"),
    A("dollar-home-read", lambda f, e: f.read("$HOME/secret"), "no such folder"),
    A("dot-prefixed-write", lambda f, e: f.write("./././secret", TEXT), stays_inside="secret"),
    A("dotdot-inside-name-write", lambda f, e: f.write("a..b/..secret", TEXT),
      stays_inside="a..b/..secret"),
]


def test_there_are_at_least_thirty_distinct_escape_attempts() -> None:
    names = [attempt.name for attempt in ESCAPE_ATTEMPTS]
    assert len(names) == len(set(names)), "every attempt has its own name"
    assert len(ESCAPE_ATTEMPTS) >= 30
    refused = [a for a in ESCAPE_ATTEMPTS if a.stays_inside is None]
    assert all(a.says for a in refused), "every refusal names what it must say"


@pytest.mark.parametrize("attempt", ESCAPE_ATTEMPTS, ids=lambda a: a.name)
def test_escape_attempt_fails_and_touches_nothing_outside(attempt: Attempt, env: Env) -> None:
    if attempt.setup is not None:
        attempt.setup(env)
    outside = snapshot(env.root, skip=env.home)
    home = snapshot(env.home)
    assert len(outside) >= 6, "the secrets and the sentinel are in the snapshot"

    result = call_within(5.0, lambda: attempt.call(env.files, env))

    assert SECRET not in result.message
    assert SECRET not in (result.content or "")
    assert "root:" not in (result.content or ""), "nothing of /etc/passwd"
    assert str(env.root) not in result.message, "no host paths in messages"
    assert snapshot(env.root, skip=env.home) == outside, "nothing outside the home changed"
    if attempt.stays_inside is None:
        assert not result.ok, result.message
        assert result.content is None
        assert attempt.says in result.message, result.message
        assert snapshot(env.home) == home, "a refusal leaves the home as it was too"
    else:
        assert result.ok, result.message
        target = env.home.joinpath(*attempt.stays_inside.split("/"))
        assert target.read_text(encoding="utf-8") == TEXT
        for folder in [target, *target.parents]:
            if folder == env.home:
                break
            assert not folder.is_symlink()
        else:
            pytest.fail(f"{target} is not inside the home")
        assert target.resolve().parent.is_relative_to(env.home.resolve())


# -- races: a link swapped in between a check and the use ------------------------


def test_a_link_swapped_in_just_before_the_rename_is_replaced_not_followed(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace
    outside = snapshot(env.root, skip=env.home)

    def swap_then_replace(src: str, dst: str, **kwargs: int) -> None:
        (env.home / "notes.md").unlink()
        os.symlink(env.secret, env.home / "notes.md")
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", swap_then_replace)
    result = env.files.write("notes.md", TEXT)
    monkeypatch.undo()

    assert result.ok, result.message
    assert snapshot(env.root, skip=env.home) == outside
    assert env.secret.read_text(encoding="utf-8") == SECRET
    assert not (env.home / "notes.md").is_symlink()
    assert (env.home / "notes.md").read_text(encoding="utf-8") == TEXT


def test_a_folder_swapped_for_a_link_mid_walk_is_refused(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open
    outside = snapshot(env.root, skip=env.home)

    def swap_then_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if path == "notes" and (env.home / "notes").is_dir() and not (
                env.home / "notes").is_symlink():
            (env.home / "notes" / "trees.md").unlink()
            (env.home / "notes").rmdir()
            os.symlink(env.sentinel, env.home / "notes")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swap_then_open)
    read = env.files.read("notes/keep.txt")
    written = env.files.write("notes/keep.txt", TEXT)
    monkeypatch.undo()

    for result in (read, written):
        assert not result.ok
        assert "notes is a symbolic link; links are not followed" in result.message
        assert SECRET not in result.message
    assert snapshot(env.root, skip=env.home) == outside


def test_write_replaces_a_hard_link_instead_of_writing_through_it(env: Env) -> None:
    os.link(env.secret, env.home / "hard.md")
    outside_content = env.secret.read_bytes()

    result = env.files.write("hard.md", TEXT)

    assert result.ok, result.message
    assert env.secret.read_bytes() == outside_content
    assert os.stat(env.secret).st_nlink == 1, "the link was broken, not written through"
    assert (env.home / "hard.md").read_text(encoding="utf-8") == TEXT
    assert not os.path.samefile(env.secret, env.home / "hard.md")


def test_fifo_read_returns_at_once(env: Env) -> None:
    os.mkfifo(env.home / "pipe")
    result = call_within(2.0, lambda: env.files.read("pipe"))
    assert not result.ok
    assert result.message == "pipe is a FIFO (named pipe); only regular files can be read"


@pytest.mark.needs_root("makes a device node")
def test_a_device_file_is_refused_without_being_opened_for_its_content(env: Env) -> None:
    os.mknod(env.home / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    for result in (env.files.read("null"), env.files.append("null", TEXT),
                   env.files.write("null", TEXT)):
        assert not result.ok
        assert "null is a device; only regular files can be" in result.message


# -- ordinary use ------------------------------------------------------------------


def test_write_then_read_round_trips(env: Env) -> None:
    text = "Found a bent branch by the water. \u2014 caf\u00e9 \U0001f333\n"
    result = env.files.write("notes.md", text)
    assert result == FileResult(True, f"wrote {len(text.encode())} bytes to notes.md")
    assert (env.home / "notes.md").read_text(encoding="utf-8") == text
    read = env.files.read("notes.md")
    assert read.ok and read.content == text
    assert read.message == f"read notes.md ({len(text.encode())} bytes)"


def test_write_makes_missing_folders_up_to_the_depth_limit(env: Env) -> None:
    result = env.files.write("a/b/c/d.md", TEXT)
    assert result.ok, result.message
    assert (env.home / "a" / "b" / "c" / "d.md").read_text(encoding="utf-8") == TEXT
    assert env.files.read("./a/b/c/d.md").content == TEXT
    too_deep = env.files.write("a/b/c/d/e.md", TEXT)
    assert too_deep == FileResult(False, "path is 5 levels deep; the limit is 4")
    assert not (env.home / "a" / "b" / "c" / "d").exists()


def test_write_leaves_no_temporary_files(env: Env) -> None:
    for index in range(5):
        assert env.files.write("notes.md", f"version {index}").ok
    assert not [p for p in env.home.rglob("*") if p.name.startswith(".hearth-tmp-")]
    assert (env.home / "notes.md").read_text(encoding="utf-8") == "version 4"


def test_append_adds_to_the_end_and_creates_a_missing_file(env: Env) -> None:
    result = env.files.append("notes.md", "second note\n")
    assert result.ok
    assert result.message == "appended 12 bytes to notes.md (now 23 bytes)"
    assert env.files.read("notes.md").content == "first note\nsecond note\n"
    created = env.files.append("ideas/later.md", "one\n")
    assert created.ok and created.message == "appended 4 bytes to ideas/later.md (now 4 bytes)"
    assert (env.home / "ideas" / "later.md").read_text(encoding="utf-8") == "one\n"


def test_journal_is_the_agents_own_to_write_and_read(env: Env) -> None:
    assert env.files.append("journal.md", "Day one.\n").ok
    assert env.files.append("journal.md", "Day two.\n").ok
    assert env.files.read("journal.md").content == "Day one.\nDay two.\n"


def test_list_shows_files_with_sizes_and_folders_with_a_slash(env: Env) -> None:
    result = env.files.list()
    status_size = (env.home / ".status").stat().st_size
    assert result == FileResult(True, "your home holds 5 entries", "\n".join([
        f".status  ({status_size} bytes)",
        "discoveries.md  (0 bytes)",
        "journal.md  (0 bytes)",
        "notes/",
        "notes.md  (11 bytes)",
    ]))
    assert env.files.list(".") == result
    inner = env.files.list("notes/")
    assert inner == FileResult(True, "notes holds 1 entry", "trees.md  (9 bytes)")
    (env.home / "empty").mkdir()
    assert env.files.list("empty") == FileResult(True, "empty is empty", "")


def test_list_marks_links_and_special_files_without_following(env: Env) -> None:
    link_file_to_secret(env)
    fifo_in_home(env)
    content = env.files.list().content or ""
    assert "link.md  (a symbolic link; not followed)" in content
    assert "pipe  (a FIFO (named pipe); cannot be read)" in content
    assert SECRET not in content and str(env.secret) not in content


def test_list_of_a_file_or_a_missing_folder_fails_clearly(env: Env) -> None:
    assert env.files.list("notes.md") == FileResult(
        False, "notes.md is not a folder (it is a regular file)")
    assert env.files.list("nowhere") == FileResult(False, "no such folder: nowhere",
                                                   missing=True)


def test_edit_replaces_exactly_one_occurrence(env: Env) -> None:
    env.files.write("notes.md", "The oak is tall.\nThe ash is young.\n")
    result = env.files.edit("notes.md", "ash is young", "ash is taller now")
    assert result.ok, result.message
    assert result.message.startswith("replaced 1 occurrence in notes.md")
    assert env.files.read("notes.md").content == "The oak is tall.\nThe ash is taller now.\n"


def test_edit_fails_clearly_on_no_match_and_on_several(env: Env) -> None:
    env.files.write("notes.md", "The oak. The oak. aaa")
    before = (env.home / "notes.md").read_bytes()
    missing = env.files.edit("notes.md", "The elm", "x")
    assert not missing.ok and "was not found in notes.md" in missing.message
    twice = env.files.edit("notes.md", "The oak", "x")
    assert not twice.ok and "appears 2 times in notes.md" in twice.message
    overlapping = env.files.edit("notes.md", "aa", "b")
    assert not overlapping.ok and "appears 2 times" in overlapping.message
    empty = env.files.edit("notes.md", "", "x")
    assert not empty.ok and "the text to replace is empty" in empty.message
    assert (env.home / "notes.md").read_bytes() == before


def test_missing_files_are_named_in_the_message(env: Env) -> None:
    assert env.files.read("notes/x.md") == FileResult(False, "no such file: notes/x.md",
                                                      missing=True)
    assert env.files.edit("notes/x.md", "a", "b") == FileResult(
        False, "no such file: notes/x.md", missing=True)
    assert env.files.read("nowhere/x.md") == FileResult(False, "no such folder: nowhere",
                                                        missing=True)
    assert not env.files.list("notes.md").missing  # there, but no folder


def test_the_messages_say_what_is_wrong(env: Env) -> None:
    assert env.files.read("/etc/passwd").message.startswith(
        "path must be relative to your home")
    assert env.files.read("../secret").message == (
        "'..' is not allowed: a path cannot leave your home")
    assert env.files.read("..\u2215x").message == (
        "path contains U+2215 DIVISION SLASH, which looks like '/'; only the ASCII '/' "
        "separates folders and names may use only the ASCII '.'")
    assert env.files.read("a\nb").message == (
        "path contains a control character (U+000A LINE FEED); "
        "names must be printable")


def test_unicode_names_in_nfc_are_welcome(env: Env) -> None:
    assert env.files.write("caf\u00e9/\u6728.md", TEXT).ok
    assert (env.home / "caf\u00e9" / "\u6728.md").read_text(encoding="utf-8") == TEXT
    assert not env.files.write("cafe\u0301.md", TEXT).ok


# -- limits --------------------------------------------------------------------------


def test_write_over_the_size_limit_is_refused_and_changes_nothing(env: Env) -> None:
    result = env.files.write("notes.md", "x" * 70_000)
    assert result == FileResult(False, "file would be 70000 bytes; the limit is 65536")
    assert (env.home / "notes.md").read_text(encoding="utf-8") == "first note\n"
    assert env.files.write("big.md", "x" * LIMIT).ok, "exactly the limit is allowed"
    multibyte = env.files.write("wide.md", "\u00e9" * 40_000)
    assert multibyte == FileResult(False, "file would be 80000 bytes; the limit is 65536")


def test_append_and_edit_may_not_pass_the_size_limit(env: Env) -> None:
    assert env.files.write("big.md", "x" * (LIMIT - 5)).ok
    over = env.files.append("big.md", "123456")
    assert over == FileResult(False, "file would be 65537 bytes; the limit is 65536")
    assert env.files.append("big.md", "12345").ok
    env.files.write("big.md", "x" * (LIMIT - 10) + "MARK")
    grown = env.files.edit("big.md", "MARK", "M" * 20)
    assert grown == FileResult(False, "file would be 65546 bytes; the limit is 65536")
    assert (env.home / "big.md").read_text(encoding="utf-8").endswith("MARK")


def test_reading_a_file_over_the_limit_is_refused(env: Env) -> None:
    (env.home / "huge.md").write_bytes(b"x" * (LIMIT + 1))
    assert env.files.read("huge.md") == FileResult(
        False, "huge.md is 65537 bytes; the limit for reading is 65536")


def test_small_limits_can_be_chosen(tmp_path: Path) -> None:
    home = AgentHomes(tmp_path / "agents").create("Sage", "s")
    files = AgentFiles(home, max_file_bytes=10, max_name_length=5, max_depth=2)
    assert files.write("a.md", "0123456789").ok
    assert files.write("a.md", "0123456789x").message == (
        "file would be 11 bytes; the limit is 10")
    assert files.write("abcdef", "x").message == (
        "name 'abcdef...' is 6 characters long; the limit is 5")
    assert files.write("a/b/c", "x").message == "path is 3 levels deep; the limit is 2"
    assert files.read("notes.md").message.endswith("the limit is 5")


def test_the_number_of_files_and_folders_is_capped(tmp_path: Path) -> None:
    home = AgentHomes(tmp_path / "agents").create("Sage", "s")  # 4 entries
    files = AgentFiles(home, max_files=6)
    assert files.write("one.md", "1").ok
    refused = files.write("deep/two.md", "2")
    assert not refused.ok
    assert "holds 5 files and folders" in refused.message
    assert "limit of 6" in refused.message
    assert not (home / "deep").exists(), "no folder was made for a refused file"
    assert files.write("two.md", "2").ok
    assert not files.write("three.md", "3").ok
    assert files.write("one.md", "rewritten").ok, "changing a file is always fine"
    assert files.append("notes.md", "more").ok


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_files must be a positive whole number"):
        AgentFiles(Path("."), max_files=0)


# -- Hearth's files and bad arguments -----------------------------------------------


def test_status_is_read_only_to_the_agent(env: Env) -> None:
    status = env.home / ".status"
    before = status.read_bytes()
    assert env.files.read(".status") == FileResult(
        True, f"read .status ({len(before)} bytes)", before.decode())
    for result in (env.files.write(".status", "x"), env.files.append(".status", "x"),
                   env.files.edit(".status", "river", "sea"),
                   env.files.write("./.status", "x")):
        assert not result.ok
        assert result.message.startswith(".status is written by Hearth and cannot be")
    assert status.read_bytes() == before
    assert env.files.write("notes/.status", "mine").ok, "only the home's own is Hearth's"


def test_bad_arguments_fail_instead_of_raising(env: Env) -> None:
    calls: list[Callable[[], FileResult]] = [
        lambda: env.files.read(3),
        lambda: env.files.write("notes.md", None),
        lambda: env.files.write("notes.md", b"bytes"),
        lambda: env.files.append("notes.md", 1.5),
        lambda: env.files.edit("notes.md", None, "x"),
        lambda: env.files.edit("notes.md", "first", 7),
        lambda: env.files.list(None),
        lambda: env.files.write("notes.md", "\udcff"),
    ]
    for call in calls:
        result = call_within(5.0, call)
        assert not result.ok and result.message
    assert (env.home / "notes.md").read_text(encoding="utf-8") == "first note\n"


def test_a_missing_home_fails_clearly(tmp_path: Path) -> None:
    files = AgentFiles(tmp_path / "nobody")
    assert files.read("notes.md") == FileResult(False, "your home folder is missing")
    assert files.write("notes.md", "x") == FileResult(False, "your home folder is missing")
    assert not (tmp_path / "nobody").exists()


def test_non_utf8_file_is_refused_not_garbled(env: Env) -> None:
    (env.home / "odd.md").write_bytes(b"\xff\xfe")
    assert env.files.read("odd.md") == FileResult(False, "odd.md is not UTF-8 text")
