"""Where the owner-local state lives, and the private files in it (always mode 0600)."""

import hashlib
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from contracts.config import AdmissionPolicy, EnablementConfig
from contracts.errors import ConfigInvalid, InvalidInput
from contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.scope_guard import repository_shared_scopes

HOME_VARIABLE = "OBELISK_SESSION_EVIDENCE_HOME"


@dataclass(frozen=True, slots=True)
class StatePaths:
    """The state directory and the fixed places inside it."""

    root: Path

    @property
    def config_file(self) -> Path:
        return self.root / "config.json"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def spool_dir(self) -> Path:
        return self.root / "spool"

    @property
    def prefect_home(self) -> Path:
        return self.root / "prefect"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def salt_file(self) -> Path:
        return self.root / "digest-salt"


def state_paths(environ: Mapping[str, str] = os.environ) -> StatePaths:
    """`$OBELISK_SESSION_EVIDENCE_HOME`, else the XDG state directory."""
    if environ.get(HOME_VARIABLE):
        return StatePaths(Path(environ[HOME_VARIABLE]).expanduser())
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return StatePaths(Path(base) / "obelisk-session-evidence")


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


def load_policy(paths: StatePaths) -> AdmissionPolicy:
    """The enablement configuration; absent or invalid means admission is off."""
    try:
        config = read_config(paths)
    except ConfigInvalid:
        return AdmissionPolicy(config=None, load_reason_code="config_invalid")
    if config is None:
        return AdmissionPolicy(config=None, load_reason_code="config_absent")
    return AdmissionPolicy(config=config, load_reason_code="config_loaded")


def read_config(paths: StatePaths) -> EnablementConfig | None:
    """The configuration file, strictly read (duplicate keys reject it); None when absent.

    A file that others may write is refused like a malformed one: its scope is not the owner's. So
    is one where two scopes would bind the same sessions through one repository (a clone, a link).
    """
    try:
        with paths.config_file.open("rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        raise ConfigInvalid("config.json cannot be read") from None
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigInvalid("config.json is writable by others; make it 0600")
    try:
        config = load_contract(EnablementConfig, raw)
    except InvalidInput as error:
        raise ConfigInvalid(f"config.json: {error.detail}") from None
    shared = repository_shared_scopes(config.enablements)
    if shared is not None:
        raise ConfigInvalid(
            f"config.json: enablements {shared[0]} and {shared[1]} would read the same sessions"
            " for different scopes (same repository and session folder)"
        )
    return config


def digest_salt(paths: StatePaths) -> str:
    """The owner-local salt for receipt digests of private values, created once."""
    try:
        return paths.salt_file.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    # Concurrent first uses must agree on one salt: the first hard link wins, the rest read it.
    candidate = paths.salt_file.with_name(f".{paths.salt_file.name}.{secrets.token_hex(8)}")
    write_private(candidate, secrets.token_hex(32).encode("ascii"))
    try:
        os.link(candidate, paths.salt_file)
    except FileExistsError:
        pass
    finally:
        candidate.unlink(missing_ok=True)
    return paths.salt_file.read_text(encoding="ascii").strip()


def spool_situation(paths: StatePaths, raw: bytes) -> str:
    """Keep a situation in the private spool; return its content digest (the only public ref)."""
    reference = "sha256:" + hashlib.sha256(raw).hexdigest()
    target = spooled_path(paths, reference)
    if not target.exists():
        write_private(target, raw)
    return reference


def spooled_path(paths: StatePaths, reference: str) -> Path:
    """Where the spooled document with this digest lives."""
    return paths.spool_dir / "situations" / (reference.removeprefix("sha256:") + ".json")
