"""Who is asking: the LoopX goal and agent behind one Decision Context extension call.

LoopX 2.1.1's extension request (`decision_context_advisory_retrieve_request_v0`) carries a
namespace, a scope ref and the query, but neither the goal nor the agent that LoopX's profile
gate just checked. The extension runs as a direct child of the `loopx` process and inherits its
environment, so the asker is read from, in order:

1. LoopX's own invocation: the `decision-context <command> --goal-id G --agent-id A`
   arguments of the parent process (Linux `/proc`), or of this process when the in-process
   provider runs inside LoopX; LoopX validated both against the profile;
2. LoopX's host-turn environment, `LOOPX_GOAL_ID` / `LOOPX_AGENT_ID`.

Both present and different is a conflict, never a guess. For a `host-session:<source>:<id>`
scope the named thread identifies the agent through LoopX's thread-agent bindings
(`bind-agent-thread`, `loopx/thread_agent_binding.py`); a thread bound to another agent than
the asker is refused.
"""

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.sources import SOURCES, source_named

LOOPX_COMMAND: Final = "decision-context"
GOAL_VARIABLE: Final = "LOOPX_GOAL_ID"
AGENT_VARIABLE: Final = "LOOPX_AGENT_ID"
MAX_CMDLINE_BYTES: Final = 65_536


@dataclass(frozen=True, slots=True)
class Asker:
    """The goal and agent LoopX is asking for; None where LoopX did not say."""

    goal_id: str | None
    agent_id: str | None
    registry: str | None = None
    """LoopX's `--registry`, when the invocation named one (else LoopX's default applies)."""
    runtime_root: str | None = None
    """LoopX's `--runtime-root`, when the invocation named one (else LoopX's rule applies)."""


def asker(
    *, parent_argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Asker | None, str | None]:
    """`(asker, None)`, or `(None, "asking_agent_conflict")` when LoopX's two sources disagree."""
    from_invocation = invocation_asker(parent_argv if parent_argv is not None else loopx_arguments())
    environment = os.environ if environ is None else environ
    from_environment = Asker(environment.get(GOAL_VARIABLE) or None, environment.get(AGENT_VARIABLE) or None)
    for field in ("goal_id", "agent_id"):
        one, other = getattr(from_invocation, field), getattr(from_environment, field)
        if one and other and one != other:
            return None, "asking_agent_conflict"
    return (
        Asker(
            from_invocation.goal_id or from_environment.goal_id,
            from_invocation.agent_id or from_environment.agent_id,
            from_invocation.registry,
            from_invocation.runtime_root,
        ),
        None,
    )


def invocation_asker(argv: Sequence[str]) -> Asker:
    """`--goal-id` / `--agent-id` of a `loopx decision-context ...` command line."""
    if LOOPX_COMMAND not in argv:
        return Asker(None, None)
    return Asker(
        _option(argv, "--goal-id"),
        _option(argv, "--agent-id"),
        _option(argv, "--registry"),
        _option(argv, "--runtime-root"),
    )


def loopx_arguments() -> list[str]:
    """LoopX's argument vector: the parent's (the extension runs as LoopX's child), else this
    process's own (an in-process `ContextProvider` runs inside LoopX); [] when neither is LoopX's.
    Only the goal, agent and registry options are read from it."""
    for argv in (_process_arguments(os.getppid()), list(sys.argv)):
        if LOOPX_COMMAND in argv:
            return argv
    return []


def _process_arguments(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()[:MAX_CMDLINE_BYTES]
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def bound_agents(source: str, session_id: str, *, registry: str | None = None) -> frozenset[str] | None:
    """The agents LoopX binds this host thread to (in the registry LoopX would use), or None
    when LoopX's state cannot be read here."""
    kind = source_named(source)
    if kind is None:
        return frozenset()
    prefix = SOURCES[kind].host_surface_prefix
    try:
        from loopx.control_plane.projects.registry_codec import load_registry
        from loopx.paths import default_registry_path
        from loopx.registry import registry_goals
        from loopx.thread_agent_binding import collect_accepted_bindings

        goals = registry_goals(load_registry(Path(registry) if registry else default_registry_path()))
        bindings = collect_accepted_bindings(goals)
    except Exception:
        return None
    return frozenset(
        binding["agent_id"]
        for binding in bindings
        if binding["thread_id"] == session_id and binding["host_surface"].startswith(prefix)
    )


def _option(argv: Sequence[str], name: str) -> str | None:
    for index, value in enumerate(argv):
        if value == name and index + 1 < len(argv):
            return argv[index + 1].strip() or None
        if value.startswith(name + "="):
            return value.split("=", 1)[1].strip() or None
    return None
