"""Histories for the reliability tests: a native index and an Obelisk stand-in holding the same rows.

Each planted row is a failed shell command in its own session, in scope (the agent's Claude root,
the enabled repository). Every planted command is also written out of scope twice (another
repository, another agent's root) as bait that must never come back. Decoy rows hold words that
only an operator (a prefix `*`, `NEAR`, a column filter) could match. All text carries the canary.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contracts.config import Enablement
from fixtures.obelisk_stand_in import StandIn, install_stand_in, stand_in_data
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from providers.native.index.refresh import refresh_index
from providers.native.index.results import session_ref
from providers.native.index.store import index_file
from providers.obelisk.items import opaque_ref
from tests.providers.native.index.transcripts import ClaudeTranscript

DECOY_TEXTS = (
    "authentication succeeded for the alphabetical gamma service",
    "nearly every column was filtered by the delta job",
)


@dataclass(frozen=True)
class PlantedRow:
    """One planted command and the session refs under which each backend reports it."""

    command: str
    native_ref: str
    obelisk_ref: str


@dataclass(frozen=True)
class World:
    """Where the histories live and how to reach them."""

    root: Path
    claude_root: Path
    other_agent_root: Path
    repo_root: Path
    bait_repo_root: Path
    index_dir: Path
    stand_in: StandIn
    planted: tuple[PlantedRow, ...]
    bait_refs: frozenset[str]
    """Session refs (both backends) of every out-of-scope copy."""
    decoy_refs: frozenset[str]

    def native_enablement(self) -> Enablement:
        """The fixture agent, reading only its own Claude root and the enabled repository."""
        return Enablement(
            surface="replan-history",
            agent_id=FIXTURE_AGENT,
            project_id=FIXTURE_PROJECT,
            repository_id=FIXTURE_REPOSITORY,
            repo_roots=[str(self.repo_root)],
            sources=["claude"],
            source_roots={"claude": str(self.claude_root)},
            enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
        )

    def obelisk_enablement(self) -> Enablement:
        """The same scope, answered by the Obelisk adapter over the stand-in."""
        return self.native_enablement().model_copy(
            update={
                "provider": "obelisk",
                "sources": ["claude", "codex", "dsh"],
                "source_roots": {},
                "obelisk_bin": str(self.stand_in.executable),
            }
        )


def build_world(root: Path, commands: Sequence[str], *, canary: str) -> World:
    """Plant `commands` (and their bait and the decoys) in a native index and a stand-in."""
    claude_root, other_agent_root = root / "agent" / "claude", root / "other-agent" / "claude"
    repo_root, bait_repo_root = root / "work" / "alpha", root / "work" / "beta"
    for folder in (repo_root / "src", bait_repo_root):
        folder.mkdir(parents=True, exist_ok=True)
    data = stand_in_data(str(repo_root), other_root=str(bait_repo_root), canary=canary)
    planted, bait, decoys = [], set(), set()
    for number, command in enumerate(commands):
        session = f"planted-{number:03d}"
        _failed_run(ClaudeTranscript(claude_root, session, str(repo_root / "src")), command, canary)
        _failed_run(ClaudeTranscript(claude_root, f"bait-repo-{number:03d}", str(bait_repo_root)), command, canary)
        _failed_run(ClaudeTranscript(other_agent_root, f"bait-agent-{number:03d}", str(repo_root)), command, canary)
        bait |= {session_ref("claude", f"bait-repo-{number:03d}"), session_ref("claude", f"bait-agent-{number:03d}")}
        planted.append(PlantedRow(command, session_ref("claude", session), opaque_ref("session", "claude", session)))
        stored = " ".join(command.split())  # Obelisk stores what the agent ran; admission collapses spaces
        _stand_in_rows(data, session, "claude", str(repo_root), stored, canary, number)
        _stand_in_rows(data, f"bait-repo-{number:03d}", "claude", str(bait_repo_root), stored, canary, number)
        _stand_in_rows(data, f"bait-kimi-{number:03d}", "kimi", str(repo_root), stored, canary, number)
        bait |= {
            opaque_ref("session", source, f"bait-{kind}-{number:03d}")
            for kind, source in (("repo", "claude"), ("kimi", "kimi"))
        }
    for number, text in enumerate(DECOY_TEXTS):
        session = f"decoy-{number}"
        ClaudeTranscript(claude_root, session, str(repo_root)).assistant(f"{text} {canary}").write()
        _stand_in_rows(data, session, "claude", str(repo_root), f"{text} {canary}", canary, number, failed=False)
        decoys |= {session_ref("claude", session), opaque_ref("session", "claude", session)}
    index_dir = root / "state" / "index"
    refresh_index(index_file(index_dir), {"claude": [claude_root, other_agent_root]})
    stand_in = install_stand_in(root / "stand-in", data=data)
    return World(
        root=root,
        claude_root=claude_root,
        other_agent_root=other_agent_root,
        repo_root=repo_root,
        bait_repo_root=bait_repo_root,
        index_dir=index_dir,
        stand_in=stand_in,
        planted=tuple(planted),
        bait_refs=frozenset(bait),
        decoy_refs=frozenset(decoys),
    )


def _failed_run(transcript: ClaudeTranscript, command: str, canary: str) -> None:
    transcript.user(f"Run it again {canary}").bash(command, f"FAILED {canary}", exit_code=1).write()


def _stand_in_rows(
    data: dict[str, Any],
    session: str,
    source: str,
    cwd: str,
    text: str,
    canary: str,
    number: int,
    *,
    failed: bool = True,
) -> None:
    data["sessions"].append(
        {"id": session, "source": source, "project": cwd.replace("/", "-"), "project_path": cwd,
         "title": f"session {number}", "started_at": "2026-08-06T09:00:00.000Z"}
    )  # fmt: skip
    data["messages"].append(
        {"uuid": f"{session}-m", "session_id": session, "source": source, "cwd": cwd,
         "timestamp": "2026-08-06T09:01:00.000Z", "role": "assistant",
         "content_type": "tool_use" if failed else "text", "is_meta": False, "visibility": "visible",
         "model": "stand-in", "text": text, "tool_name": "Bash" if failed else None,
         "exit_code": 1 if failed else None}
    )  # fmt: skip
    if failed:
        data["messages"].append(
            {"uuid": f"{session}-r", "session_id": session, "source": source, "cwd": cwd,
             "timestamp": "2026-08-06T09:02:00.000Z", "role": "user", "content_type": "tool_result",
             "is_meta": False, "visibility": "visible", "model": "stand-in",
             "text": f"FAILED {text} {canary}", "tool_name": "Bash", "is_error": True}
        )  # fmt: skip


def write_config(state: Path, enablement: Enablement) -> None:
    """The owner's config file (0600) enabling exactly `enablement`."""
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    document = {
        "schema_version": "obelisk_session_evidence_config_v0",
        "enablements": [json.loads(enablement.model_dump_json())],
    }
    path = state / "config.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    path.chmod(0o600)
