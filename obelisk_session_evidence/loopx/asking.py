"""Who is asking: the LoopX goal and agent behind one Decision Context extension call.

LoopX 2.1.1's extension request (`decision_context_advisory_retrieve_request_v0`) carries a
namespace, a scope ref and the query, but neither the goal nor the agent that LoopX's profile
gate just checked. The extension runs as a direct child of the `loopx` process, so the asker is
LoopX's own invocation: the command line of the parent process (Linux `/proc`), or of this
process when the in-process provider runs inside LoopX, read exactly as LoopX's parser reads it
(`LOOPX_GRAMMAR`: argparse with LoopX's options and no abbreviations, so the last `--agent-id`
wins, `--agent-id=A` counts, `--agent` is no option at all, and a value is never mistaken for an
option). A request that names `goal_id` / `agent_id` (as a later LoopX may; its chat server
knows both) is the first source, and counts only when LoopX started this process; the invocation
completes what it leaves unsaid, and the two naming different ids is `asking_agent_conflict`.
LoopX's host-turn environment (`LOOPX_GOAL_ID` / `LOOPX_AGENT_ID`) only corroborates: differing
from the other sources is `asking_agent_conflict`, and on its own it establishes nobody. Without a
LoopX `decision-context` invocation or a request from LoopX naming the asker, the asker is unknown
and the lookup is refused.

For a `host-session:<source>:<id>` scope the named thread identifies the agent through LoopX's
thread-agent bindings (`bind-agent-thread`); a thread bound to another agent than the asker is
refused, and so is any lookup when those bindings cannot be read. docs/identity.md has the model.
"""

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

from obelisk_session_evidence.contracts.sources import SOURCES, source_named

LOOPX_COMMAND: Final = "decision-context"
GOAL_VARIABLE: Final = "LOOPX_GOAL_ID"
AGENT_VARIABLE: Final = "LOOPX_AGENT_ID"
MAX_CMDLINE_BYTES: Final = 65_536
LOOPX_MODULES: Final = frozenset({"loopx.entrypoint", "loopx.cli"})
"""The modules `python -m` runs LoopX's CLI from (`loopx = loopx.entrypoint:main`)."""
LOOPX_SCRIPTS: Final = ("/loopx/entrypoint.py", "/loopx/cli.py")
"""`sys.argv[0]` of a LoopX run as `python -m loopx.entrypoint` (the in-process provider's case)."""

_SCOPE: Final = ("goal-id", "agent-id")
LOOPX_GRAMMAR: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {
    # subcommand: (required options, other options taking a value, flags), LoopX 2.1.1's
    # `register_decision_context_commands`; `tests/loopx/test_asker_grammar.py` holds it to LoopX's parser.
    "capture-diagnose": ((*_SCOPE, "profile", "spool", "cursor-state", "source-id"), (), ("probe",)),
    "capture-recovery": (
        (*_SCOPE, "profile", "spool", "cursor-state", "source-id", "action"),
        ("expected-token", "recovery-id"),
        ("execute",),
    ),
    "capture": ((*_SCOPE, "profile", "spool"), ("cursor-state",), ("execute",)),
    "capture-status": ((*_SCOPE, "profile", "spool"), ("cursor-state",), ()),
    "prepare-captured": (
        (*_SCOPE, "profile", "spool", "batch-id", "decision-id", "rebase-json", "pending-settlement"),
        ("cursor-state",),
        ("execute",),
    ),
    "architecture": ((), (), ()),
    "inspect-profile": (_SCOPE, ("profile",), ()),
    "source-manifest": ((*_SCOPE, "profile"), ("observed-at",), ()),
    "prepare-evidence": (
        (*_SCOPE, "profile", "decision-id"),
        ("cursor-state", "source-id", "observed-at", "before", "timeout-seconds"),
        (),
    ),
    "recall-context": (
        (*_SCOPE, "profile", "context-scope-ref", "query", "query-summary"),
        ("max-results", "timeout-seconds", "observed-at"),
        (),
    ),
    "prepare-review": (
        (*_SCOPE, "profile", "decision-id", "rebase-json", "pending-settlement"),
        ("cursor-state", "source-id", "observed-at", "before", "timeout-seconds"),
        ("execute",),
    ),
    "settle-review": (
        (*_SCOPE, "profile", "cursor-state", "pending-settlement", "event-log", "actor-ref", "reason-code", "summary"),
        ("proposal-json", "source-event-id"),
        ("execute",),
    ),
}


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
    *,
    requested: Asker | None = None,
    parent_argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Asker | None, str | None]:
    """`(asker, None)` as LoopX established it, or `(None, reason)` (`established` says which).

    :param requested: the goal and agent the request itself names (None where it names neither).
    :param parent_argv: LoopX's command line, program included (default: read from `/proc`).
    """
    argv = parent_argv if parent_argv is not None else loopx_arguments()
    invoked = invocation_asker(argv)
    if invoked is None and requested is not None:
        parent = parent_argv if parent_argv is not None else _process_arguments(os.getppid())
        if _loopx_arguments_of(parent) is not None:  # LoopX (its chat server) started us, naming nobody
            invoked = Asker(None, None)
    return established(invoked, requested, os.environ if environ is None else environ)


def established(
    invoked: Asker | None, requested: Asker | None, environ: Mapping[str, str]
) -> tuple[Asker | None, str | None]:
    """The asker from what LoopX says, first source first: the request's ids (`requested`), then
    LoopX's invocation (`invoked`; None when LoopX did not start this process, so a request
    naming anybody is no evidence either), each id confirmed by every other source that names
    it. `asking_agent_unknown` / `asking_goal_unknown` when no source names the agent / goal;
    `asking_agent_conflict` when the request, the invocation or LoopX's host-turn environment
    name different ones."""
    if invoked is None:
        return None, "asking_agent_unknown"
    goal_id, agent_id = invoked.goal_id, invoked.agent_id
    if requested is not None:
        for said, known in ((requested.goal_id, goal_id), (requested.agent_id, agent_id)):
            if said is not None and known is not None and said != known:
                return None, "asking_agent_conflict"
        goal_id, agent_id = requested.goal_id or goal_id, requested.agent_id or agent_id
    if agent_id is None:
        return None, "asking_agent_unknown"
    if goal_id is None:
        return None, "asking_goal_unknown"
    return corroborated(Asker(goal_id, agent_id, invoked.registry, invoked.runtime_root), environ)


def corroborated(invoked: Asker, environ: Mapping[str, str]) -> tuple[Asker | None, str | None]:
    """`invoked`, unless LoopX's host-turn environment names another goal or agent."""
    for variable, value in ((GOAL_VARIABLE, invoked.goal_id), (AGENT_VARIABLE, invoked.agent_id)):
        named = environ.get(variable, "").strip()
        if named and named != value:
            return None, "asking_agent_conflict"
    return invoked, None


def invocation_asker(argv: Sequence[str]) -> Asker | None:
    """The goal, agent, registry and runtime root of a `loopx decision-context ...` command line
    (program first), read as LoopX's parser reads them; None for any other command line."""
    arguments = _loopx_arguments_of(argv)
    if arguments is None:
        return None
    try:
        parsed = _parser().parse_args(arguments)
    except _NotLoopX:
        return None
    if parsed.help or parsed.version:  # LoopX prints and exits: no provider is asked
        return None
    return Asker(
        _value(parsed, "goal_id"),
        _value(parsed, "agent_id"),
        _value(parsed, "registry"),
        _value(parsed, "runtime_root"),
    )


def loopx_arguments() -> list[str]:
    """LoopX's command line: the parent's (the extension runs as LoopX's child), else this
    process's own (an in-process `ContextProvider` runs inside LoopX); [] when neither is a
    LoopX `decision-context` invocation."""
    for argv in (_process_arguments(os.getppid()), list(sys.argv)):
        if invocation_asker(argv) is not None:
            return argv
    return []


def caller_is_loopx() -> bool:
    """True when the parent process is LoopX (any command), so a command started by it, directly or
    by its extension, must establish its asker."""
    return _loopx_arguments_of(_process_arguments(os.getppid())) is not None


def _loopx_arguments_of(argv: Sequence[str]) -> list[str] | None:
    """What LoopX's `main` reads as `sys.argv[1:]`, when `argv` runs LoopX's CLI: the `loopx`
    script (directly, or as its interpreter's script) or `python -m loopx.entrypoint`."""
    if not argv:
        return None
    program = argv[0].replace(os.sep, "/")
    if os.path.basename(program) == "loopx" or program.endswith(LOOPX_SCRIPTS):
        return list(argv[1:])
    if not os.path.basename(program).startswith("python"):
        return None
    index = 1
    while index < len(argv):
        part = argv[index]
        if part == "-m":
            module = argv[index + 1] if index + 1 < len(argv) else ""
            return list(argv[index + 2 :]) if module in LOOPX_MODULES else None
        if part in ("-X", "-W"):
            index += 2
        elif part.startswith("-") and part != "-":
            if part.startswith("-c"):
                return None
            index += 1
        else:
            return list(argv[index + 1 :]) if os.path.basename(part) == "loopx" else None
    return None


def _process_arguments(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()[:MAX_CMDLINE_BYTES]
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


class _NotLoopX(Exception):
    """The command line is not one LoopX's parser accepts as a `decision-context` command."""


class _Strict(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        # No help action: `-h` must never print into the extension's protocol stream.
        super().__init__(allow_abbrev=False, add_help=False, **kwargs)
        self.add_argument("-h", "--help", action="store_true")

    def error(self, message: str) -> NoReturn:  # never prints or exits
        raise _NotLoopX(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _NotLoopX(message or "exit")


def _parser() -> argparse.ArgumentParser:
    """LoopX's global grammar with its `decision-context` commands (`cli_runtime.build_cli_parser`)."""
    parser = _Strict()
    parser.add_argument("--version", action="store_true")
    parser.add_argument("--registry")
    parser.add_argument("--runtime-root")
    parser.add_argument("--format", choices=["markdown", "json"])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Strict)
    context = commands.add_parser(LOOPX_COMMAND)
    subcommands = context.add_subparsers(dest="decision_context_command", required=True, parser_class=_Strict)
    for name, (required, optional, flags) in LOOPX_GRAMMAR.items():
        subcommand = subcommands.add_parser(name)
        subcommand.add_argument("--format", dest="subcommand_format", choices=["markdown", "json"])
        for option in required:
            subcommand.add_argument("--" + option, required=True)
        for option in optional:
            subcommand.add_argument("--" + option)
        for flag in flags:
            subcommand.add_argument("--" + flag, action="store_true")
    return parser


def _value(parsed: argparse.Namespace, name: str) -> str | None:
    value = getattr(parsed, name, None)
    return value.strip() or None if isinstance(value, str) else None


def bound_agents(source: str, session_id: str, *, registry: str | None = None) -> frozenset[str] | None:
    """The agents LoopX binds this host thread to (in the registry LoopX would use), or None
    when LoopX's state cannot be read here (the caller refuses: no binding check is skipped)."""
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
