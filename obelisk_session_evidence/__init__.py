"""obelisk-session-evidence: bounded evidence from an agent's own earlier sessions for Replan.

The public surface: `decide` (one decision, the composition root), `PipelineRun` (what it returns),
`EvidenceError` (the base of every error raised on purpose, each with a stable `reason_code`) and
`SessionEvidenceContextProvider` (LoopX's in-process `ContextProvider`).
"""

from typing import Any

from obelisk_session_evidence.contracts.errors import EvidenceError
from obelisk_session_evidence.providers.version import PACKAGE_VERSION as __version__

__all__ = ["EvidenceError", "PipelineRun", "SessionEvidenceContextProvider", "__version__", "decide"]


def __getattr__(name: str) -> Any:
    """`decide`, `PipelineRun` and the LoopX provider load on first use: `import
    obelisk_session_evidence` stays cheap for the CLI, which imports only what each command needs."""
    if name == "PipelineRun":
        from obelisk_session_evidence.stages.pipeline import PipelineRun

        return PipelineRun
    if name == "decide":
        from obelisk_session_evidence.compose import decide

        return decide
    if name == "SessionEvidenceContextProvider":
        from obelisk_session_evidence.loopx.context_provider import SessionEvidenceContextProvider

        return SessionEvidenceContextProvider
    raise AttributeError(name)
