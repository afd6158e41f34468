"""Histories for the reliability tests: real-format session files in one HOME that both the native
index and the Obelisk stand-in read.

HOME holds `.claude/projects/<encoded cwd>/<session>.jsonl` (Claude Code) and
`.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (Codex), as the agents write them; the native index is
built from those folders and the stand-in indexes the same HOME with `--build`, as the real CLI
would. Each planted row is a failed shell command in its own Claude session, in scope (the enabled
repository). Every planted command is also written out of scope as bait that must never come back:
in another repository (same HOME, both backends), as a Codex session in the repository (a source
the agent is not bound to, both backends), and in another agent's Claude folder outside HOME (the
native index holds it; Obelisk reads one HOME and cannot see it). Decoy rows hold words that only
an operator (a prefix `*`, `NEAR`, a column filter) could match. All text carries the canary.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixtures.obelisk_stand_in import StandIn, install_stand_in
from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.providers.obelisk.items import opaque_ref
from tests.providers.native.index.transcripts import ClaudeTranscript

DECOY_TEXTS = (
    "authentication succeeded for the alphabetical gamma service",
    "nearly every column was filtered by the delta job",
)
OBELISK_BUILD_TIMEOUT_S = 120.0


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
    home: Path
    """The HOME both backends read (and the stand-in runs with)."""
    claude_root: Path
    codex_root: Path
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
            update={"provider": "obelisk", "obelisk_bin": str(self.stand_in.executable)}
        )

    def obelisk_provider(self, work_dir: Path, **options: Any) -> ObeliskProvider:
        """The adapter over the stand-in and this HOME, writing its query files under `work_dir`."""
        return ObeliskProvider(
            self.obelisk_enablement(),
            binary=str(self.stand_in.executable),
            work_dir=work_dir,
            obelisk_home=self.home / ".obelisk",
            **options,
        )


def build_world(root: Path, commands: Sequence[str], *, canary: str) -> World:
    """Plant `commands` (and their bait and the decoys) in HOME; index it natively and in Obelisk."""
    home = root / "home"
    claude_root, codex_root = home / ".claude" / "projects", home / ".codex" / "sessions"
    other_agent_root = root / "other-agent" / ".claude" / "projects"
    repo_root, bait_repo_root = root / "work" / "alpha", root / "work" / "beta"
    for folder in (repo_root / "src", bait_repo_root):
        folder.mkdir(parents=True, exist_ok=True)
    planted, bait, decoys = [], set(), set()
    for number, command in enumerate(commands):
        session, bait_repo, bait_agent = (f"{kind}-{number:03d}" for kind in ("planted", "bait-repo", "bait-agent"))
        bait_codex = f"bait-codex-{number:03d}"
        failed_claude_run(ClaudeTranscript(claude_root, session, str(repo_root / "src")), command, canary)
        failed_claude_run(ClaudeTranscript(claude_root, bait_repo, str(bait_repo_root)), command, canary)
        failed_claude_run(ClaudeTranscript(other_agent_root, bait_agent, str(repo_root)), command, canary)
        failed_codex_run(codex_root, bait_codex, str(repo_root), command, canary)
        bait |= {session_ref("claude", bait_repo), session_ref("claude", bait_agent), session_ref("codex", bait_codex)}
        bait |= {opaque_ref("session", "claude", bait_repo), opaque_ref("session", "codex", f"codex:{bait_codex}")}
        planted.append(PlantedRow(command, session_ref("claude", session), opaque_ref("session", "claude", session)))
    for number, text in enumerate(DECOY_TEXTS):
        session = f"decoy-{number}"
        ClaudeTranscript(claude_root, session, str(repo_root)).assistant(f"{text} {canary}").write()
        decoys |= {session_ref("claude", session), opaque_ref("session", "claude", session)}
    index_dir = root / "state" / "index"
    refresh_index(index_file(index_dir), {"claude": [claude_root, other_agent_root], "codex": [codex_root]})
    world = World(
        root=root,
        home=home,
        claude_root=claude_root,
        codex_root=codex_root,
        other_agent_root=other_agent_root,
        repo_root=repo_root,
        bait_repo_root=bait_repo_root,
        index_dir=index_dir,
        stand_in=install_stand_in(root / "stand-in", home=home),
        planted=tuple(planted),
        bait_refs=frozenset(bait),
        decoy_refs=frozenset(decoys),
    )
    world.obelisk_provider(root / "obelisk-work").build_index(timeout_s=OBELISK_BUILD_TIMEOUT_S)
    return world


def failed_claude_run(transcript: ClaudeTranscript, command: str, canary: str) -> Path:
    """A user asking, and `command` failing in Bash. When the command's whitespace is not single
    spaces it runs a second time as admission writes it (collapsed): Obelisk matches commands as
    substrings, the native index as words, and both must find the planted row."""
    transcript.user(f"Run it again {canary}")
    for form in dict.fromkeys((command, " ".join(command.split()))):
        transcript.bash(form, f"FAILED {canary}", exit_code=1)
    return transcript.write()


def failed_codex_run(codex_root: Path, thread: str, cwd: str, command: str, canary: str) -> Path:
    """A Codex rollout (session_meta, turn_context, the user's message, `exec_command` of each
    form of `command` and its `Process exited with code 1` output), as Codex CLI writes one."""
    stamp = "2026-03-01T10:00:00.000Z"
    records: list[tuple[str, dict[str, Any]]] = [
        (
            "session_meta",
            {
                "id": thread,
                "timestamp": stamp,
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.125.0",
                "source": "cli",
            },
        ),
        ("turn_context", {"turn_id": f"turn-{thread}", "cwd": cwd, "model": "gpt-5.1-codex"}),
        ("event_msg", {"type": "user_message", "message": f"Run it again {canary}"}),
        (
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"Run it again {canary}"}]},
        ),
    ]
    for number, form in enumerate(dict.fromkeys((command, " ".join(command.split())))):
        call_id = f"call_{thread}_{number}"
        arguments = json.dumps({"cmd": form, "workdir": cwd, "yield_time_ms": 1000})
        output = f"Chunk ID: c{number}\nWall time: 1.0 seconds\nProcess exited with code 1\nOutput:\nFAILED {canary}"
        records += [
            (
                "response_item",
                {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id},
            ),
            ("response_item", {"type": "function_call_output", "call_id": call_id, "output": output}),
        ]
    path = codex_root / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) for kind, payload in records)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


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
