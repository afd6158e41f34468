"""The admission policy a decision runs under: `config.json`, checked against the disk too.

`state.config_store` parses the file. A lookup binds sessions to a repository by more than a path
prefix, so two scopes whose roots differ as text can still read the same sessions; such a
configuration is refused here, whether `enable` or a hand edit wrote it.
"""

from contracts.config import AdmissionPolicy, EnablementConfig
from contracts.errors import ConfigInvalid
from obelisk_session_evidence.lifecycle.scope_guard import repository_shared_scopes
from obelisk_session_evidence.state.config_store import read_config
from obelisk_session_evidence.state.paths import StatePaths


def load_config(paths: StatePaths) -> EnablementConfig | None:
    """The configuration (None when absent); `ConfigInvalid` when it is malformed or would let
    one scope read another's sessions."""
    config = read_config(paths)
    if config is None:
        return None
    shared = repository_shared_scopes(config.enablements)
    if shared is not None:
        raise ConfigInvalid(
            f"config.json: enablements {shared[0]} and {shared[1]} would read the same sessions"
            " for different scopes (same repository and session folder)"
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
