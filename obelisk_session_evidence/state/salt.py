"""The owner-local salt for receipt digests of private values."""

import os
import secrets

from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private


def digest_salt(paths: StatePaths) -> str:
    """The salt, created once."""
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
