"""A real file system that fails on demand: FUSE, spoken in Python over /dev/fuse.

Why this exists: a full disk is easy to make for real (a small tmpfs), but an I/O
error is not. Device-mapper is missing in this kernel, and a loop device shrunk
under a mounted ext4 oopsed the kernel and left its unmount stuck for good. FUSE
is the safe way: the kernel sends every file operation of the mounted folder to
this module, which does it on a backing folder, or answers with the errno a test
asks for (EIO for a failing disk, EROFS for one gone read-only). The program under
test is a real process making real system calls; what it meets is what a failing
disk gives it. No libfuse is needed (none is installed here): the protocol is the
kernel's own (linux/fuse.h, protocol 7.31), and mounting is one mount(2) call, which
only root may make: a test using this module is marked needs_root.

Only what Hearth and SQLite use is served: lookups, attributes, files and folders,
renames, links, fsync, statfs. Locks (fcntl, flock) stay in the kernel, which is
what FUSE does when the file system does not ask for them. Data is written through
(no write-back cache), so a refused write never lands, and nothing is cached past
a call (attributes and names expire at once), so the backing folder is the truth.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import multiprocessing
import os
import select
import stat
import struct
import subprocess
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest

MAJOR, MINOR = 7, 31
MAX_WRITE = 128 * 1024
HEADER = struct.Struct("<IIQQIIIHH")  # fuse_in_header: 40 bytes
OUT_HEADER = struct.Struct("<IiQ")  # fuse_out_header: 16 bytes
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")  # fuse_attr: 88 bytes

OPS = {1: "lookup", 2: "forget", 3: "getattr", 4: "setattr", 5: "readlink",
       6: "symlink", 8: "mknod", 9: "mkdir", 10: "unlink", 11: "rmdir", 12: "rename",
       13: "link", 14: "open", 15: "read", 16: "write", 17: "statfs", 18: "release",
       20: "fsync", 25: "flush", 26: "init", 27: "opendir", 28: "readdir",
       29: "releasedir", 30: "fsyncdir", 34: "access", 35: "create", 36: "interrupt",
       38: "destroy", 42: "batch_forget", 45: "rename2"}
NO_REPLY = frozenset({"forget", "batch_forget", "interrupt"})
CHANGES = frozenset({"setattr", "symlink", "mknod", "mkdir", "unlink", "rmdir", "rename",
                     "rename2", "link", "write", "fsync", "fsyncdir", "create"})
"""Every operation that changes what is on the disk: a read-only or failing disk
refuses them all (reads go on unless a test fails them too)."""


class FaultyDisk:
    """The mounted folder `mount`, kept in `backing`; `fail()` and `heal()` at will."""

    def __init__(self, backing: Path, mount: Path) -> None:
        self.backing, self.mount = backing, mount
        self.failing: dict[str, int] = {}
        self._refused: list[tuple[str, str]] = []  # (operation, path) answered with a fault
        self._broken: list[str] = []  # requests this server itself failed on (a bug here)
        self._control: Connection | None = None  # to the server's process (the test's end)
        self._server = 0
        self._paths: dict[int, str] = {1: ""}
        self._nodes: dict[str, int] = {"": 1}
        self._next_node = 2
        self._files: dict[int, int] = {}
        self._dirs: dict[int, list[tuple[str, int, int]]] = {}
        self._next_handle = 1
        self._fd = -1

    # --- what a test asks --------------------------------------------------------------

    def fail(self, code: int = errno.EIO, ops: frozenset[str] = CHANGES) -> None:
        """From now on, answer each of `ops` with `code` (EIO: the disk fails)."""
        self._ask(("fail", dict.fromkeys(ops, code)))

    def heal(self) -> None:
        self._ask(("fail", {}))

    @property
    def refused(self) -> list[tuple[str, str]]:
        """Each (operation, path) answered with a fault so far."""
        return self._ask(("report",))[0]

    @property
    def broken(self) -> list[str]:
        return self._ask(("report",))[1]

    def _ask(self, command: tuple) -> Any:
        """Tell the server's process, and wait until it has done so (a fault asked for
        is in force before the test goes on)."""
        if self._control is None:
            return None if command[0] == "fail" else ([], [])
        self._control.send(command)
        return self._control.recv()

    # --- mounting ----------------------------------------------------------------------

    def start(self) -> None:
        self.backing.mkdir(parents=True, exist_ok=True)
        self.mount.mkdir(parents=True, exist_ok=True)
        try:
            self._fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        except OSError as error:
            pytest.fail(f"opening /dev/fuse failed ({error.strerror}); these tests need "
                        "root and /dev/fuse, and as root they are never skipped",
                        pytrace=False)
        libc = ctypes.CDLL(None, use_errno=True)
        options = f"fd={self._fd},rootmode=40000,user_id=0,group_id=0,allow_other"
        if libc.mount(b"hearth-faulty", str(self.mount).encode(), b"fuse", 0,
                      options.encode()) != 0:
            code = ctypes.get_errno()
            os.close(self._fd)
            pytest.fail(f"mounting a FUSE file system at {self.mount} failed "
                        f"({os.strerror(code)}); these tests need root and /dev/fuse, "
                        "and as root they are never skipped", pytrace=False)
        # The server answers in a process of its own. In a thread of the test's process
        # it could wait on that process's memory map (growing its heap) while the test's
        # thread waited on it inside a page fault on the mount: both stopped, for good
        # (seen once, a suite hung for half an hour).
        self._control, theirs = multiprocessing.Pipe()
        self._server = os.fork()
        if self._server == 0:  # the server's process: serves until unmounted, then ends
            code = 0
            try:
                self._control.close()
                self._control = None
                self._serve(theirs)
            except BaseException:  # noqa: BLE001 - never back into the test's code
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        os.close(self._fd)  # the server's process holds it

    def stop(self) -> None:
        """Unmount; if something still holds it, abort the connection first, so nothing
        can be left waiting on a server that is gone."""
        self.heal()
        broken = self.broken
        done = subprocess.run(["umount", str(self.mount)], capture_output=True, text=True)
        if done.returncode != 0:
            minor = os.stat(self.mount).st_dev & 0xFF
            with contextlib.suppress(OSError):
                Path(f"/sys/fs/fuse/connections/{minor}/abort").write_text("1")
            subprocess.run(["umount", "-l", str(self.mount)], capture_output=True)
        if self._control is not None:
            self._control.close()  # the server's process ends when it sees this
            self._control = None
        if self._server:
            os.waitpid(self._server, 0)
            self._server = 0
        if broken:
            pytest.fail(f"the test's FUSE server failed to answer: {broken[:3]}",
                        pytrace=False)

    # --- the loop ----------------------------------------------------------------------

    def _serve(self, control: Connection) -> None:
        while True:
            ready, _, _ = select.select([self._fd, control], [], [])
            if control in ready:
                try:
                    command = control.recv()
                except EOFError:
                    return  # the test is done with this disk
                if command[0] == "fail":
                    self.failing = command[1]
                    control.send(None)
                else:
                    control.send((list(self._refused), list(self._broken)))
                continue
            try:
                request = os.read(self._fd, MAX_WRITE + 64 * 1024)
            except OSError as exc:
                if exc.errno in (errno.EINTR, errno.EAGAIN, errno.ENOENT):
                    continue  # ENOENT: the request was interrupted before it was read
                return  # ENODEV: unmounted
            _len, opcode, unique, node, *_ = HEADER.unpack_from(request)
            op = OPS.get(opcode, str(opcode))
            body = request[HEADER.size:]
            if op in NO_REPLY:
                self._forget(op, node, body)
                continue
            try:
                reply = self._answer(op, node, body)
                error = 0
            except OSError as exc:
                reply, error = b"", -(exc.errno or errno.EIO)
            except Exception as exc:  # noqa: BLE001 - a bug here must never end the loop:
                # the kernel would wait on this server forever, and with it every process
                # touching the mount (a hung suite). The caller gets EIO; `stop` fails
                # the test, naming the bug.
                self._broken.append(f"{op}: {exc!r}")
                reply, error = b"", -errno.EIO
            with contextlib.suppress(OSError):  # ENOENT: the caller was interrupted
                os.write(self._fd, OUT_HEADER.pack(OUT_HEADER.size + len(reply), error,
                                                   unique) + reply)

    def _answer(self, op: str, node: int, body: bytes) -> bytes:
        code = self.failing.get(op)
        if code is not None:
            self._refused.append((op, self._paths.get(node, "?")))
            raise OSError(code, os.strerror(code))
        handler = getattr(self, f"_op_{op}", None)
        if handler is None:
            raise OSError(errno.ENOSYS, op)
        return handler(node, body)

    # --- names and attributes ----------------------------------------------------------

    def _real(self, node: int, name: bytes | None = None) -> str:
        rel = self._paths.get(node)
        if rel is None:
            raise OSError(errno.ESTALE, "unknown node")
        if name is not None:
            rel = f"{rel}/{name.decode('utf-8', 'surrogateescape')}".lstrip("/")
        return os.path.join(self.backing, rel) if rel else str(self.backing)

    def _rel(self, node: int, name: bytes) -> str:
        return os.path.relpath(self._real(node, name), self.backing)

    def _entry(self, rel: str) -> bytes:
        info = os.lstat(os.path.join(self.backing, rel))
        node = self._nodes.get(rel)
        if node is None:
            node = self._nodes[rel] = self._next_node
            self._paths[node] = rel
            self._next_node += 1
        return struct.pack("<QQQQII", node, 0, 0, 0, 0, 0) + self._attr(node, info)

    @staticmethod
    def _attr(node: int, info: os.stat_result) -> bytes:
        return ATTR.pack(node, info.st_size, info.st_blocks, int(info.st_atime),
                         int(info.st_mtime), int(info.st_ctime), info.st_atime_ns % 10**9,
                         info.st_mtime_ns % 10**9, info.st_ctime_ns % 10**9, info.st_mode,
                         info.st_nlink, info.st_uid, info.st_gid, info.st_rdev, 4096, 0)

    def _attr_out(self, node: int, info: os.stat_result) -> bytes:
        return struct.pack("<QII", 0, 0, 0) + self._attr(node, info)

    def _forget(self, op: str, node: int, body: bytes) -> None:
        """Names are kept for the mount's life (a test's world is small)."""

    def _moved(self, old: str, new: str) -> None:
        for rel in [r for r in self._nodes if r == old or r.startswith(old + "/")]:
            node = self._nodes.pop(rel)
            moved = new + rel[len(old):]
            self._nodes[moved], self._paths[node] = node, moved

    def _gone(self, rel: str) -> None:
        node = self._nodes.pop(rel, None)
        if node is not None:
            self._paths[node] = f"\0gone/{node}"  # no longer named; open handles go on

    # --- operations --------------------------------------------------------------------

    def _op_init(self, node: int, body: bytes) -> bytes:
        major, minor, readahead, _flags = struct.unpack_from("<IIII", body)
        if major != MAJOR:
            raise OSError(errno.EPROTO, f"kernel speaks FUSE {major}")
        return struct.pack("<IIIIHHIIHHI7I", MAJOR, MINOR, readahead, 0, 16, 12, MAX_WRITE,
                           1, MAX_WRITE // 4096, 0, 0, *([0] * 7))

    def _op_lookup(self, node: int, body: bytes) -> bytes:
        return self._entry(self._rel(node, body.rstrip(b"\0")))

    def _op_getattr(self, node: int, body: bytes) -> bytes:
        return self._attr_out(node, os.lstat(self._real(node)))

    def _op_setattr(self, node: int, body: bytes) -> bytes:
        (valid, _pad, fh, size, _owner, atime, mtime, _ctime, atimens, mtimens, _ctimens,
         mode, _u4, uid, gid, _u5) = struct.unpack_from("<IIQQQQQQIIIIIIII", body)
        real = self._real(node)
        if valid & (1 << 3):
            os.truncate(self._files[fh] if valid & (1 << 6) else real, size)
        if valid & (1 << 0):
            os.chmod(real, stat.S_IMODE(mode), follow_symlinks=False)
        if valid & ((1 << 1) | (1 << 2)):
            os.chown(real, uid if valid & (1 << 1) else -1, gid if valid & (1 << 2) else -1,
                     follow_symlinks=False)
        if valid & ((1 << 4) | (1 << 5)):
            info = os.lstat(real)
            times = (atime * 10**9 + atimens if valid & (1 << 4) else info.st_atime_ns,
                     mtime * 10**9 + mtimens if valid & (1 << 5) else info.st_mtime_ns)
            os.utime(real, ns=times, follow_symlinks=False)
        return self._attr_out(node, os.lstat(real))

    def _op_readlink(self, node: int, body: bytes) -> bytes:
        return os.fsencode(os.readlink(self._real(node)))

    def _op_symlink(self, node: int, body: bytes) -> bytes:
        name, target = body.split(b"\0")[:2]
        os.symlink(target, self._real(node, name))
        return self._entry(self._rel(node, name))

    def _op_mknod(self, node: int, body: bytes) -> bytes:
        mode, rdev, _umask, _pad = struct.unpack_from("<IIII", body)
        name = body[16:].rstrip(b"\0")
        os.mknod(self._real(node, name), mode, rdev)
        return self._entry(self._rel(node, name))

    def _op_mkdir(self, node: int, body: bytes) -> bytes:
        mode, _umask = struct.unpack_from("<II", body)
        name = body[8:].rstrip(b"\0")
        os.mkdir(self._real(node, name), stat.S_IMODE(mode))
        return self._entry(self._rel(node, name))

    def _op_unlink(self, node: int, body: bytes) -> bytes:
        name = body.rstrip(b"\0")
        os.unlink(self._real(node, name))
        self._gone(self._rel(node, name))
        return b""

    def _op_rmdir(self, node: int, body: bytes) -> bytes:
        name = body.rstrip(b"\0")
        os.rmdir(self._real(node, name))
        self._gone(self._rel(node, name))
        return b""

    def _op_rename(self, node: int, body: bytes, flags: int = 0, skip: int = 8) -> bytes:
        (newdir,) = struct.unpack_from("<Q", body)
        old, new = body[skip:].split(b"\0")[:2]
        if flags:
            raise OSError(errno.EINVAL, "rename flags are not served")
        target = self._rel(newdir, new)
        os.replace(self._real(node, old), self._real(newdir, new))
        self._gone(target)
        self._moved(self._rel(node, old), target)
        return b""

    def _op_rename2(self, node: int, body: bytes) -> bytes:
        _newdir, flags, _pad = struct.unpack_from("<QII", body)
        return self._op_rename(node, body, flags, skip=16)

    def _op_link(self, node: int, body: bytes) -> bytes:
        (old,) = struct.unpack_from("<Q", body)
        name = body[8:].rstrip(b"\0")
        os.link(self._real(old), self._real(node, name), follow_symlinks=False)
        return self._entry(self._rel(node, name))

    def _handle(self, fd: int) -> int:
        handle, self._next_handle = self._next_handle, self._next_handle + 1
        self._files[handle] = fd
        return handle

    def _op_open(self, node: int, body: bytes) -> bytes:
        flags, _open_flags = struct.unpack_from("<II", body)
        fd = os.open(self._real(node), (flags & ~(os.O_CREAT | os.O_EXCL | os.O_NOCTTY))
                     | os.O_NOFOLLOW | os.O_CLOEXEC)
        return struct.pack("<QII", self._handle(fd), 0, 0)

    def _op_create(self, node: int, body: bytes) -> bytes:
        flags, mode, _umask, _open_flags = struct.unpack_from("<IIII", body)
        name = body[16:].rstrip(b"\0")
        fd = os.open(self._real(node, name), flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     stat.S_IMODE(mode))
        return self._entry(self._rel(node, name)) + struct.pack("<QII", self._handle(fd), 0, 0)

    def _op_read(self, node: int, body: bytes) -> bytes:
        fh, offset, size = struct.unpack_from("<QQI", body)
        return os.pread(self._files[fh], size, offset)

    def _op_write(self, node: int, body: bytes) -> bytes:
        fh, offset, size = struct.unpack_from("<QQI", body)
        written = os.pwrite(self._files[fh], body[40:40 + size], offset)
        return struct.pack("<II", written, 0)

    def _op_flush(self, node: int, body: bytes) -> bytes:
        return b""

    def _op_release(self, node: int, body: bytes) -> bytes:
        (fh,) = struct.unpack_from("<Q", body)
        fd = self._files.pop(fh, None)
        if fd is not None:
            os.close(fd)
        return b""

    def _op_fsync(self, node: int, body: bytes) -> bytes:
        (fh,) = struct.unpack_from("<Q", body)
        os.fsync(self._files[fh])
        return b""

    def _op_fsyncdir(self, node: int, body: bytes) -> bytes:
        return b""  # the backing folder is on the machine's disk; nothing to add here

    def _op_statfs(self, node: int, body: bytes) -> bytes:
        info = os.statvfs(self.backing)
        return struct.pack("<QQQQQIIII6I", info.f_blocks, info.f_bfree, info.f_bavail,
                           info.f_files, info.f_ffree, info.f_bsize, info.f_namemax,
                           info.f_frsize, 0, *([0] * 6))

    def _op_access(self, node: int, body: bytes) -> bytes:
        os.lstat(self._real(node))
        return b""

    def _op_opendir(self, node: int, body: bytes) -> bytes:
        real = self._real(node)
        names = [(".", stat.S_IFDIR, node), ("..", stat.S_IFDIR, 1)]
        with os.scandir(real) as found:
            for entry in found:
                kind = stat.S_IFMT(entry.stat(follow_symlinks=False).st_mode)
                names.append((entry.name, kind, entry.inode()))
        handle, self._next_handle = self._next_handle, self._next_handle + 1
        self._dirs[handle] = names
        return struct.pack("<QII", handle, 0, 0)

    def _op_readdir(self, node: int, body: bytes) -> bytes:
        fh, offset, size = struct.unpack_from("<QQI", body)
        out = b""
        for index, (name, kind, inode) in enumerate(self._dirs.get(fh, [])[offset:], offset):
            raw = os.fsencode(name)
            record = struct.pack("<QQII", inode or 1, index + 1, len(raw), kind >> 12) + raw
            record += b"\0" * (-len(record) % 8)
            if len(out) + len(record) > size:
                break
            out += record
        return out

    def _op_releasedir(self, node: int, body: bytes) -> bytes:
        (fh,) = struct.unpack_from("<Q", body)
        self._dirs.pop(fh, None)
        return b""

    def _op_destroy(self, node: int, body: bytes) -> bytes:
        return b""


@contextlib.contextmanager
def faulty_disk(backing: Path, mount: Path) -> Iterator[FaultyDisk]:
    """A FaultyDisk mounted at `mount` for the block, unmounted however it ends."""
    disk = FaultyDisk(backing, mount)
    disk.start()
    try:
        yield disk
    finally:
        disk.stop()
