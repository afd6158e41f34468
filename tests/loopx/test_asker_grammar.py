"""`asking.LOOPX_GRAMMAR` is LoopX 2.1.1's `decision-context` grammar: the same options per command,
and the same goal, agent, registry and runtime root as LoopX's own parser for every command line
LoopX accepts (and no asker for one it refuses)."""

import argparse
import contextlib
import io

import pytest

from obelisk_session_evidence.loopx.asking import LOOPX_COMMAND, LOOPX_GRAMMAR, Asker, invocation_asker

loopx_cli = pytest.importorskip("loopx.cli", reason="LoopX's own parser is the oracle")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str], set[str]]:
    required, optional, flags = set(), set(), set()
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "subcommand_format"):
            continue
        (name,) = action.option_strings
        name = name.removeprefix("--")
        if action.nargs == 0:
            flags.add(name)
        elif action.required:
            required.add(name)
        else:
            optional.add(name)
    return required, optional, flags


def test_the_grammar_has_loopxs_decision_context_commands_and_options():
    parser = loopx_cli.build_parser()
    assert parser.allow_abbrev is False
    globals_ = {s for a in parser._actions for s in a.option_strings}
    assert globals_ == {"-h", "--help", "--version", "--registry", "--runtime-root", "--format"}
    commands = _subparsers(_subparsers(parser)[LOOPX_COMMAND])
    assert set(commands) == set(LOOPX_GRAMMAR)
    for name, command in commands.items():
        required, optional, flags = LOOPX_GRAMMAR[name]
        assert _options(command) == (set(required), set(optional), set(flags)), name
        assert command.allow_abbrev is False


RECALL = ["decision-context", "recall-context", "--profile", "p.json", "--context-scope-ref", "goal"]
TAIL = ["--query", "q", "--query-summary", "s"]
COMMAND_LINES = [
    [*RECALL, "--goal-id", "g", "--agent-id", "a", *TAIL],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", "--agent-id", "b", *TAIL],
    [*RECALL, "--goal-id=g", "--agent-id=a", "--agent-id", "b", "--agent-id=c", *TAIL],
    ["--registry", "/r", "--runtime-root=/rt", *RECALL, "--goal-id", "g", "--agent-id", "a", *TAIL],
    [*RECALL, "--goal-id", "g", "--agent", "b", "--agent-id", "a", *TAIL],
    [*RECALL, "--goal", "g", "--agent-id", "a", *TAIL],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", "--query", "--agent-id=b", "--query-summary", "s"],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", "--query=--agent-id b", "--query-summary", "s"],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", "--query", "x --agent-id b", "--query-summary", "s"],
    [*RECALL, "--goal-id", "g", *TAIL],
    ["decision-context", "prepare-evidence", "--goal-id", "g", "--agent-id", "a", "--profile", "p"],
    [
        "decision-context",
        "prepare-evidence",
        "--goal-id",
        "g",
        "--agent-id",
        "a",
        "--profile",
        "p",
        "--decision-id",
        "d",
    ],
    [
        "decision-context",
        "prepare-evidence",
        "--source-id",
        "s1",
        "--goal-id",
        "g",
        "--agent-id",
        "a",
        "--source-id=s2",
        "--profile",
        "p",
        "--decision-id",
        "d",
        "--agent-id",
        "z",
    ],
    ["--registry", "decision-context", "status", "--agent-id", "a"],
    ["status", "--goal-id", "g"],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", *TAIL, "--", "--agent-id", "b"],
    [*RECALL, "--goal-id", "g", "--agent-id", "a", *TAIL, "-h"],
]


def _loopxs_reading(arguments: list[str]) -> Asker | None:
    """What LoopX's own parser makes of `arguments`; None when it refuses them."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            parsed = loopx_cli.build_parser().parse_args(arguments)
    except SystemExit:
        return None
    if parsed.command != LOOPX_COMMAND or getattr(parsed, "help", False):
        return None

    def value(name: str) -> str | None:
        found = getattr(parsed, name, None)
        return found.strip() or None if isinstance(found, str) else None

    registry = parsed.registry if any(a == "--registry" or a.startswith("--registry=") for a in arguments) else None
    return Asker(value("goal_id"), value("agent_id"), registry, value("runtime_root"))


@pytest.mark.parametrize("arguments", COMMAND_LINES)
def test_the_asker_is_what_loopxs_parser_reads(arguments):
    ours = invocation_asker(["/venv/bin/python3", "/venv/bin/loopx", *arguments])
    assert ours == _loopxs_reading(arguments)
