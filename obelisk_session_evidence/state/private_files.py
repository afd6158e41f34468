"""Private files: owner-only folders the tool creates, atomic 0600 writes to regular files only.

A folder that already exists is never changed (a shared 1777 folder keeps its sticky bit and its
other users), and a target that exists must be a regular file: a device, FIFO, socket, folder or
symbolic link there is refused, never replaced.
"""

import os
import stat
import tempfile
from pathlib import Path

from obelisk_session_evidence.contracts.errors import PrivateTargetRefused


def private_dir(path: Path) -> Path:
    """Make `path` a folder, creating each missing part owner-only (0700); existing ones are kept."""
    missing = []
    for part in (path, *path.parents):
        if os.path.lexists(part):
            break
        missing.append(part)
    for part in reversed(missing):
        try:
            part.mkdir(mode=0o700)
        except FileExistsError:
            continue  # a concurrent first use made it; it is theirs or ours, not to be changed
        part.chmod(0o700)  # mkdir's mode is masked by the umask
    if not path.is_dir():
        raise PrivateTargetRefused("a folder the tool writes into is not a folder")
    return path


def check_folder_or_absent(path: Path) -> None:
    """`PrivateTargetRefused` unless `path` is absent or a folder (links are not followed): what
    `private_dir` would refuse, found before anything is written."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise PrivateTargetRefused(f"a folder the tool writes into is {_kind(mode)}")


def write_private(path: Path, data: bytes) -> None:
    """Atomically write `data` with mode 0600 (temp file in the same folder, then rename)."""
    private_dir(path.parent)
    check_regular_or_absent(path)
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        check_regular_or_absent(path)  # again: something may have been put there meanwhile
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def remove_private(path: Path) -> None:
    """Remove the regular file at `path` (absent is fine); anything else there is refused."""
    check_regular_or_absent(path)
    Path(path).unlink(missing_ok=True)


def check_regular_or_absent(path: Path) -> None:
    """`PrivateTargetRefused` unless `path` is absent or a regular file (links are not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise PrivateTargetRefused(f"the target is {_kind(mode)}, not a regular file")


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")
