"""Finding and probing the Obelisk CLI once per installed version.

Discovery order: the `binary` argument, else `Enablement.obelisk_bin`, else `obelisk` on PATH.
The probe, for an executable not seen before:

1. Node: when the executable is a `#!... node` script (how npm installs it), run that `node
   --version`; older than 22.13 (no built-in SQLite with FTS5) or absent is `ProviderUnavailable`.
2. `obelisk --version`: one semver on stdout, exit 0, or `ProviderUnavailable`.
3. Variant: an unknown flag prints usage on stderr (exit 1, empty stdout). The usage text is read
   (at most 64 KiB, kept only to look for flag names): `--rebuild` means variant B (incremental
   `--build`, no `--search` limits); `--search` with `--limit` means variant A; else `unknown`.
   The adapter only uses `--query`, so an unknown variant is recorded, not fatal.

Records are keyed by the executable's identity (resolved path, inode, size, mtime, and the same
for its Node), so an upgrade is a new key. They live in memory for the process and, when a cache
directory is given, in one small 0600 JSON file keyed by a digest (no path is written).
"""

import json
import os
import re
import shutil
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Literal

from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.errors import ProviderError, ProviderUnavailable
from obelisk_session_evidence.providers.obelisk.process import Deadline, run_cli

Variant = Literal["A", "B", "unknown"]
MIN_NODE: Final = (22, 13)
USAGE_PROBE_FLAG: Final = "--obelisk-session-evidence-usage-probe"
PROBE_OUTPUT_BYTES: Final = 4096
PROBE_STEP_S: Final = 5.0
"""No single probe step may use more than this of the lookup's deadline."""
USAGE_BYTES: Final = 64 * 1024
CACHE_FILE: Final = "obelisk-cli-probes.json"
CACHE_SCHEMA: Final = "obelisk_cli_probes_v2"
CACHE_ENTRIES: Final = 16
_SEMVER: Final = re.compile(rb"^v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?:[-+][0-9A-Za-z.-]{1,20})?$")
_PROBES: dict[str, "CliProbe"] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class CliProbe:
    """What one installed Obelisk CLI is and can do."""

    version: str
    """`obelisk --version`, without a leading `v`."""
    variant: Variant
    """Which of the two documented command sets it speaks."""
    node: str | None = None
    """The Node version its shebang resolves to, when it is a Node script."""
    unusable: str | None = None
    """Reason code when this install cannot serve the template."""


@dataclass(frozen=True, slots=True)
class CliBinary:
    """A resolved executable and the key its probe is remembered under."""

    path: str
    key: str
    node_path: str | None


def find_binary(explicit: str | None, configured: str | None) -> CliBinary:
    """The executable to run and its identity, or `ProviderUnavailable` when there is none."""
    candidate = explicit or configured or shutil.which("obelisk")
    if candidate is None or not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
        raise ProviderUnavailable("obelisk binary not found")
    candidate = os.path.abspath(candidate)  # the CLI runs in a private working directory
    node_path = _node_of(candidate)
    return CliBinary(path=candidate, key=_identity(candidate, node_path), node_path=node_path)


def probe_cli(
    binary: CliBinary, *, deadline: Deadline, cache_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> CliProbe:
    """The remembered probe for `binary`, probing it first when it is new (its processes get
    `env`, by default the minimal environment)."""
    with _LOCK:
        known = _PROBES.get(binary.key)
    if known is None and cache_dir is not None:
        known = _read_cache(cache_dir).get(binary.key)
    if known is None:
        known = _probe(binary, deadline, env)
        _remember(binary.key, known, cache_dir)
    with _LOCK:
        _PROBES.setdefault(binary.key, known)
    if known.unusable is not None:
        raise ProviderUnavailable(known.unusable)
    return known


def clear_probe_cache() -> None:
    """Forget every in-memory probe (tests; a long-lived process after an upgrade)."""
    with _LOCK:
        _PROBES.clear()


def _probe(binary: CliBinary, deadline: Deadline, env: Mapping[str, str] | None) -> CliProbe:
    node_version = None
    if binary.node_path is not None:
        node_version = _version_of([binary.node_path, "--version"], deadline, env)
        if node_version is None:
            raise ProviderUnavailable("node version probe failed")
        if not _node_recent_enough(node_version.encode()):
            raise ProviderUnavailable("node older than 22.13")
    version = _version_of([binary.path, "--version"], deadline, env)
    if version is None:
        raise ProviderUnavailable("obelisk --version probe failed")
    return CliProbe(version=version, variant=_variant(binary.path, deadline, env), node=node_version)


def _version_of(argv: list[str], deadline: Deadline, env: Mapping[str, str] | None) -> str | None:
    try:
        answer = run_cli(argv, deadline=_step(deadline), max_output_bytes=PROBE_OUTPUT_BYTES, env=env)
    except ProviderError as error:
        if isinstance(error, ProviderUnavailable):
            raise
        return None
    text = answer.stdout.strip()
    if answer.exit_code != 0 or not _SEMVER.match(text):
        return None
    return text.decode("ascii").removeprefix("v")


def _variant(path: str, deadline: Deadline, env: Mapping[str, str] | None) -> Variant:
    try:
        answer = run_cli(
            [path, USAGE_PROBE_FLAG],
            deadline=_step(deadline),
            max_output_bytes=PROBE_OUTPUT_BYTES,
            keep_stderr_bytes=USAGE_BYTES,
            env=env,
        )
    except ProviderError as error:
        if isinstance(error, ProviderUnavailable):
            raise
        return "unknown"
    usage = answer.stderr_head
    if answer.exit_code == 0 or answer.stdout.strip():
        return "unknown"
    if b"--rebuild" in usage:
        return "B"
    if b"--search" in usage and b"--limit" in usage:
        return "A"
    return "unknown"


def _step(deadline: Deadline) -> Deadline:
    return Deadline(min(deadline.remaining(), PROBE_STEP_S))


def _node_recent_enough(version: bytes) -> bool:
    match = _SEMVER.match(version.strip())
    return match is not None and (int(match[1]), int(match[2])) >= MIN_NODE


def _node_of(path: str) -> str | None:
    """The Node interpreter a `#!` line names (`/usr/bin/env node`, `/path/node`), else None."""
    try:
        with open(path, "rb") as handle:
            first = handle.read(256).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    if not words or not os.path.basename(words[0]).startswith("node"):
        return None
    interpreter = words[0] if "/" in words[0] else shutil.which(words[0])
    if interpreter is None:
        raise ProviderUnavailable("node not found for the obelisk script")
    return interpreter


def _identity(path: str, node_path: str | None) -> str:
    parts: list[list[str | int] | None] = []
    for item in (path, node_path):
        if item is None:
            parts.append(None)
            continue
        real = os.path.realpath(item)
        stat = os.stat(real)
        parts.append([real, stat.st_ino, stat.st_size, stat.st_mtime_ns])
    return canonical_digest(parts)


def _remember(key: str, probe: CliProbe, cache_dir: Path | None) -> None:
    with _LOCK:
        _PROBES[key] = probe
    if cache_dir is not None:
        _write_cache(cache_dir, key, probe)


def _read_cache(cache_dir: Path) -> dict[str, CliProbe]:
    try:
        document = json.loads((cache_dir / CACHE_FILE).read_text(encoding="utf-8"))
        if document.get("schema") != CACHE_SCHEMA:
            return {}
        return {key: CliProbe(**entry) for key, entry in document["probes"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _write_cache(cache_dir: Path, key: str, probe: CliProbe) -> None:
    """Atomically rewrite the cache file (0600 in a 0700 directory); failures are ignored."""
    try:
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        entries = _read_cache(cache_dir)
        entries.pop(key, None)
        entries[key] = probe
        kept = dict(list(entries.items())[-CACHE_ENTRIES:])
        document = {"schema": CACHE_SCHEMA, "probes": {k: asdict(v) for k, v in kept.items()}}
        temporary = cache_dir / f".{CACHE_FILE}.{os.getpid()}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        os.replace(temporary, cache_dir / CACHE_FILE)
    except OSError:
        pass
