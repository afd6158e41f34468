"""Stand-ins the adversary's attacks are built from, all under the test's own tmp_path."""

import json
import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fixtures.situations import situation
from obelisk_session_evidence.state.paths import state_paths
from tests.batch.standin import enable_fixture_scope

CANARY = "SECRETRAWXYZ-attack"


def admitted_config() -> None:
    """An enablement whose runs are admitted and whose provider is absent (freshness unknown)."""
    enable_fixture_scope(state_paths(), provider="obelisk", obelisk_bin="/nonexistent/obelisk")


def situation_file(tmp_path: Path) -> str:
    """A situation whose commands and hypothesis carry the canary."""
    path = tmp_path / "situation.json"
    path.write_text(json.dumps(situation(commands=[f"pytest {CANARY}"], hypothesis=CANARY)))
    return str(path)


def make_special(path: Path, kind: str) -> None:
    """A FIFO, a UNIX socket, a character device (root can mknod) or a folder at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.close()  # the socket file stays
    elif kind == "chardev":
        try:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("mknod needs root")
    else:
        path.mkdir()


@contextmanager
def small_tmpfs(folder: Path, *, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `folder` (root only), unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    options = f"size={size},mode=0700" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def fill(folder: Path) -> None:
    """Fill the file system under `folder` to the last byte (one file, unbuffered writes)."""
    descriptor = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(descriptor, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(descriptor)
