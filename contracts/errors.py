"""The one exception tree. Messages carry codes, counts and digests, never content.

    EvidenceError
    ├── InvalidInput                 invalid_input
    ├── ConfigInvalid                config_invalid
    ├── ScopeBroadeningNotQualified  scope_broadening_not_qualified
    ├── PrivateTargetRefused         private_target_refused
    ├── ScopeRefused                 scope_refused
    ├── StorageFailed                storage_failed
    ├── StageFailed                  stage_failed
    ├── PrefectApiNotConfigured      prefect_api_not_configured
    ├── PrefectServerFailed          prefect_server_failed
    ├── DaskUnreachable              dask_unreachable
    ├── LoopxRuntimeUnavailable      loopx_runtime_unavailable
    └── ProviderError                provider_error
        ├── ProviderUnavailable      provider_unavailable
        ├── ProviderTimeout          provider_timeout
        ├── ProviderFailed           provider_failed
        ├── ProviderOutputTooLarge   provider_output_too_large
        ├── ProviderOutputMalformed  provider_output_malformed
        ├── UnsupportedOption        unsupported_option
        ├── IndexUnavailable         index_unavailable
        └── ScopeViolation           scope_violation

`retrieve` turns every ProviderError (and anything else a provider raises) into a typed empty
result, so nothing below it reaches the work lane as an exception.
"""

import errno
import os
from collections.abc import Sequence
from typing import ClassVar

from obelisk_session_evidence.contracts.reason_codes import ErrorCode, StageFailureCode


class EvidenceError(Exception):
    """Base of every error this package raises on purpose."""

    reason_code: ClassVar[ErrorCode] = "evidence_error"

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        super().__init__(f"{self.reason_code}: {detail}" if detail else self.reason_code)


class InvalidInput(EvidenceError):
    """An input document failed validation; `detail` names the field, never its value."""

    reason_code = "invalid_input"

    def __init__(self, detail: str = "", *, problems: Sequence[str] = ()) -> None:
        super().__init__(detail)
        self.problems = tuple(problems)
        """A validation failure's problems, `<field path>: <what is wrong>` (public, no values)."""

    @classmethod
    def unreadable(cls, argument: object, error: OSError) -> "InvalidInput":
        """A path the user gave that cannot be read: the path as they wrote it and the OS reason
        (`No such file or directory`), never the file's content."""
        return cls(f"cannot read {argument}: {error.strerror or type(error).__name__}")


class ConfigInvalid(EvidenceError):
    """The enablement configuration is unreadable or malformed; admission stays off."""

    reason_code = "config_invalid"


class ScopeBroadeningNotQualified(EvidenceError):
    """A cross-agent, cross-project or foreign-archive scope was requested (not in v0)."""

    reason_code = "scope_broadening_not_qualified"


class PrivateTargetRefused(EvidenceError):
    """A file the tool would write exists and is not a regular file (a device, FIFO, socket,
    folder or link): it is refused, never replaced."""

    reason_code = "private_target_refused"


class ScopeRefused(EvidenceError):
    """A situation outside what its caller may ask for: not an enabled scope, or not the scope of
    the LoopX asker that started the command (docs/identity.md). `detail` is the reason code."""

    reason_code = "scope_refused"


class StorageFailed(EvidenceError):
    """Writing or reading local storage failed (no space, read-only, permission): errno only."""

    reason_code = "storage_failed"

    @classmethod
    def of(cls, error: OSError, what: str) -> "StorageFailed":
        """The failure of `what` (a name the user gave, never a path from history)."""
        code = error.errno or errno.EIO
        name = errno.errorcode.get(code, "EIO")
        return cls(f"{what}: {name} ({os.strerror(code).lower()})")


class StageFailed(EvidenceError):
    """A stage raised; the original message is dropped because it may carry content."""

    reason_code = "stage_failed"

    def __init__(self, detail: str = "", *, stage: str | None = None, cause: StageFailureCode | None = None) -> None:
        super().__init__(detail)
        self.stage = stage
        """The stage that raised (`compare-route`, ...), when known."""
        self.cause = cause
        """The reason code of what the stage raised (`stage_crashed` for a bug)."""

    @classmethod
    def at(cls, stage: str, cause: StageFailureCode) -> "StageFailed":
        """The failure of `stage`, with the reason code of what it raised."""
        return cls(f"{stage}:{cause}", stage=stage, cause=cause)


class PrefectApiNotConfigured(EvidenceError):
    """`--prefect` was asked for but no standing Prefect API is configured."""

    reason_code = "prefect_api_not_configured"


class PrefectServerFailed(EvidenceError):
    """`ui` could not start the local Prefect server (port taken, early exit, not ready in time)."""

    reason_code = "prefect_server_failed"


class DaskUnreachable(EvidenceError):
    """`--dask-address` names a scheduler that does not answer (checked before any work starts)."""

    reason_code = "dask_unreachable"


class LoopxRuntimeUnavailable(EvidenceError):
    """LoopX's TypeScript runtime cannot start here (no Node new enough): says which it needs."""

    reason_code = "loopx_runtime_unavailable"


class ProviderError(EvidenceError):
    """A history provider could not answer; always converted to a typed empty result."""

    reason_code: ClassVar[ErrorCode] = "provider_error"


class ProviderUnavailable(ProviderError):
    """The provider is absent, disabled, or failed its probe."""

    reason_code = "provider_unavailable"


class ProviderTimeout(ProviderError):
    """The provider did not answer within its own timeout and was stopped."""

    reason_code = "provider_timeout"


class ProviderFailed(ProviderError):
    """The provider answered with an error (non-zero exit or an error envelope)."""

    reason_code = "provider_failed"


class ProviderOutputTooLarge(ProviderError):
    """The provider's output passed the byte cap and was cut off unread."""

    reason_code = "provider_output_too_large"


class ProviderOutputMalformed(ProviderError):
    """The provider's output was not the documented shape."""

    reason_code = "provider_output_malformed"


class UnsupportedOption(ProviderError):
    """A request field or provider option outside the allowlist; rejected before any call."""

    reason_code = "unsupported_option"


class IndexUnavailable(ProviderError):
    """The native index could not be opened or queried."""

    reason_code = "index_unavailable"


class ScopeViolation(ProviderError):
    """A returned row lies outside the requested scope: the whole result is rejected."""

    reason_code = "scope_violation"
