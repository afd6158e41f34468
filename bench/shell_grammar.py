"""Shell parsers on every real shell command: failures and time per parser; prints numbers only.

A failure is an exception (bashlex, shlex) or a tree with an ERROR/MISSING node (tree-sitter,
which never raises). `comparators.shell` is the project's reader built on the chosen parser;
its fallback count is how often compare-route falls back to token comparison.

Usage: python bench/shell_grammar.py [--corpus DIR] [--repeat N]
"""

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._shell_corpus import REAL_CORPUS, real_shell_calls


def _shlex(command: str) -> bool:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        list(lexer)
    except ValueError:
        return False
    return True


def _bashlex() -> Callable[[str], bool] | None:
    try:
        import bashlex
    except ImportError:
        return None

    def parse(command: str) -> bool:
        try:
            bashlex.parse(command)
        except Exception:
            return False
        return True

    return parse


def _tree_sitter() -> Callable[[str], bool] | None:
    try:
        import tree_sitter_bash
        from tree_sitter import Language, Parser
    except ImportError:
        return None
    parser = Parser(Language(tree_sitter_bash.language()))

    def parse(command: str) -> bool:
        return not parser.parse(command.encode()).root_node.has_error

    return parse


def _project_reader() -> Callable[[str], bool]:
    from obelisk_session_evidence.comparators.shell import _parse

    # Uncached, so the time is the reader's own, not a cache hit.
    return lambda command: not _parse(command).fallback


def main() -> None:
    """Print, per parser: commands, failures, failure share, and microseconds per command."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", type=Path, default=REAL_CORPUS)
    options.add_argument("--repeat", type=int, default=3)
    arguments = options.parse_args()
    commands = [call.command for call in real_shell_calls(arguments.corpus)]
    features = {
        "heredoc": sum("<<" in c for c in commands),
        "command_substitution": sum("$(" in c for c in commands),
        "multi_line": sum("\n" in c for c in commands),
        "and_or_chain": sum("&&" in c or "||" in c for c in commands),
        "pipe": sum("|" in c.replace("||", "") for c in commands),
    }
    print(f"commands {len(commands)}  longest {max(map(len, commands))} chars")
    print("features " + "  ".join(f"{name} {count}" for name, count in features.items()))
    parsers = {
        "shlex (today)": _shlex,
        "bashlex": _bashlex(),
        "tree-sitter-bash": _tree_sitter(),
        "obelisk_session_evidence.comparators.shell": _project_reader(),
    }
    print(f"{'parser':<22}{'failures':>9}{'share':>8}{'heredoc fail':>14}{'us/cmd':>9}")
    for name, parse in parsers.items():
        if parse is None:
            print(f"{name:<22}  not installed")
            continue
        started = time.perf_counter()
        for _ in range(arguments.repeat):
            results = [parse(command) for command in commands]
        micros = (time.perf_counter() - started) / arguments.repeat / len(commands) * 1e6
        failures = results.count(False)
        heredoc = sum(1 for ok, c in zip(results, commands, strict=False) if not ok and "<<" in c)
        print(f"{name:<22}{failures:>9}{failures / len(commands):>8.1%}{heredoc:>14}{micros:>9.1f}")


if __name__ == "__main__":
    main()
