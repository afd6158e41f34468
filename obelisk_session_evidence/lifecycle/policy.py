"""The admission policy a decision runs under: `config.json`, checked against the disk too.

`state.config_store` parses the file. Two scopes whose folders differ as text can still read the
same sessions (an alias or a link of the same folder, a clone of the same repository); such a
configuration is refused here by the same check `enable` runs (`lifecycle.scope_guard`).
"""

from obelisk_session_evidence.contracts.config import AdmissionPolicy, EnablementConfig
from obelisk_session_evidence.contracts.errors import ConfigInvalid
from obelisk_session_evidence.lifecycle.scope_guard import scopes_reading_the_same_sessions
from obelisk_session_evidence.state.config_store import read_config
from obelisk_session_evidence.state.paths import StatePaths


def load_config(paths: StatePaths) -> EnablementConfig | None:
    """The configuration (None when absent); `ConfigInvalid` when it is malformed or would let
    one scope read another's sessions."""
    config = read_config(paths)
    if config is None:
        return None
    shared = scopes_reading_the_same_sessions(config.enablements)
    if shared is not None:
        raise ConfigInvalid(
            f"config.json: enablements {shared[0]} and {shared[1]} would read the same sessions"
            " for different scopes (same repository and session folder, as real paths)"
        )
    return config


def load_policy(paths: StatePaths) -> AdmissionPolicy:
    """The enablement configuration; absent or invalid means admission is off."""
    try:
        config = load_config(paths)
    except ConfigInvalid:
        return AdmissionPolicy(config=None, load_reason_code="config_invalid")
    if config is None:
        return AdmissionPolicy(config=None, load_reason_code="config_absent")
    return AdmissionPolicy(config=config, load_reason_code="config_loaded")
