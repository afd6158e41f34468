"""`config.json`: the enablement configuration, read strictly (parsing and permissions only)."""

import os
import stat

from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.contracts.errors import ConfigInvalid, InvalidInput
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract, read_at_most
from obelisk_session_evidence.state.paths import StatePaths


def read_config(paths: StatePaths) -> EnablementConfig | None:
    """The configuration file, strictly read (duplicate keys reject it); None when absent.

    Only a regular file is read, opened without blocking (a FIFO there would stall `run` and
    `status` forever) and read to a size cap. A file that others may write is refused like a
    malformed one: its scope is not the owner's. Whether two scopes would read the same
    sessions is the lifecycle's check (`lifecycle.policy.load_config`), which needs the disk.
    """
    try:
        descriptor = os.open(paths.config_file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        raise ConfigInvalid("config.json cannot be read") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ConfigInvalid("config.json is not a regular file")
        if status.st_size > MAX_DOCUMENT_BYTES:
            raise ConfigInvalid(f"config.json is larger than {MAX_DOCUMENT_BYTES} bytes")
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            raw = read_at_most(handle, MAX_DOCUMENT_BYTES)
    except OSError:
        raise ConfigInvalid("config.json cannot be read") from None
    finally:
        os.close(descriptor)
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigInvalid("config.json is writable by others; make it 0600")
    try:
        return load_contract(EnablementConfig, raw)
    except InvalidInput as error:
        raise ConfigInvalid(f"config.json: {error.detail}") from None
