"""Private files in the state folder: owner-only folders, atomic 0600 writes."""

import os
import tempfile
from pathlib import Path


def private_dir(path: Path) -> Path:
    """Create `path` (and parents) readable by the owner only."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Atomically write `data` with mode 0600 (temp file in the same folder, then rename)."""
    private_dir(path.parent)
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
