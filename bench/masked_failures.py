"""How often reading a masked call's output flags a call that succeeded; prints numbers only.

Every real shell call whose recorded outcome is a success is read as compare-route reads a prior
call (`comparators.attribution.attribute`); a call flagged as a masked failure is a false
positive unless the program really failed behind the mask, which `--list` lets a person check
(it prints the flagged calls' file and line numbers, never their content).

Usage: python bench/masked_failures.py [--corpus DIR] [--list]
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._shell_corpus import REAL_CORPUS, real_shell_calls
from obelisk_session_evidence.comparators.attribution import attribute
from obelisk_session_evidence.comparators.commands import parse_command


def main() -> None:
    """Print successful calls, those with a hidden status, and those flagged (the upper bound of FP)."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", type=Path, default=REAL_CORPUS)
    options.add_argument("--list", action="store_true", help="print each flagged call's file and ordinal")
    arguments = options.parse_args()
    calls = real_shell_calls(arguments.corpus)
    successes = [(number, call) for number, call in enumerate(calls) if call.failed is False]
    counts: Counter[str] = Counter()
    flagged: list[tuple[int, str]] = []
    for number, call in successes:
        shapes = parse_command(call.command).shapes
        hidden = any(shape.next_op in ("|", "|&", "||", ";") for shape in shapes)
        counts["hidden_status"] += hidden
        if attribute(shapes, call.output, failed=False, exit_code=call.exit_code).failed:
            counts["flagged"] += 1
            flagged.append((number, call.path))
    total = len(successes)
    print(f"shell calls {len(calls)}  recorded successes {total}  with a hidden status {counts['hidden_status']}")
    print(
        f"flagged as masked failures {counts['flagged']}  ({counts['flagged'] / max(total, 1):.2%} of successes,"
        f" {counts['flagged'] / max(counts['hidden_status'], 1):.2%} of hidden-status calls)"
    )
    if arguments.list:
        for number, path in flagged:
            print(f"  call {number}  {path}")


if __name__ == "__main__":
    main()
