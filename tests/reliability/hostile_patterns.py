"""Every regular expression that reads tool output or commands, and adversarial text to time them on.

The registry finds patterns by itself: every compiled pattern a module of `SCANNED_PACKAGES` holds
at module level (directly, or inside a tuple, list, set, dict or dataclass constant), the
redaction detectors that read whole snippets (compiled on first use), and `INLINE_PATTERNS`, the few written inline at their
call. A new module-level pattern in those packages joins the timing test without any edit here;
a pattern compiled inside a function must be added to `INLINE_PATTERNS`.

Adversarial inputs are built per pattern from its own literal fragments (`pytest-of-`, `error`,
`import`, ...) and from pumps that make backtracking engines go quadratic: long words, repeated
separators and blank lines (`tests/reliability/test_linear_patterns.py` times them).
"""

import importlib
import pkgutil
import re
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any, Final

SCANNED_PACKAGES: Final = (
    "obelisk_session_evidence.comparators",
    "obelisk_session_evidence.providers.native.index",
    "obelisk_session_evidence.providers.native.parsers",
    "obelisk_session_evidence.providers.obelisk",
    "obelisk_session_evidence.providers.redaction",
    "obelisk_session_evidence.stages",
)
INLINE_PATTERNS: Final[dict[str, str]] = {
    "comparators.inline_scripts (call opening)": r"\(",
    "comparators.inline_scripts (string literal)": r"""['"]([^'"\s]{3,200})['"]""",
    "comparators.shell (backslash escape)": r"\\(.)",
    "comparators.shell (quoted escape)": r"\\([\\\"$`])",
    "comparators.shell (fallback tokens)": r"&&|\|\||[;&|<>]+|[^\s;&|<>]+",
}
"""Patterns compiled at their call (`re.findall(r"…", text)`), by where they are."""

PUMPS: Final = (
    "a",
    "x1",
    "f0",
    " ",
    "\t",
    "\n",
    "\n\n",
    " \n",
    "\r\n",
    "/",
    "a/",
    "-",
    "a-",
    "--a ",
    ".",
    "a.",
    ":",
    "a:",
    "=",
    "a=",
    "_",
    ",",
    "'",
    '"',
    "\\",
    "$",
    "(",
    "a ",
    "A",
)
"""Repeated units: a long word, a long run of one separator, blank lines, or a word and a separator."""
QUICK_PUMPS: Final = (" ", "\n", " \n", "a", "a ", "=", ":", "'")
"""The pumps a default (not full) run tries where each try is costly (through all of redaction)."""
MAX_LITERALS: Final = 10


def registered_patterns() -> dict[str, re.Pattern[Any]]:
    """`{where: pattern}` for every pattern of the registry, each source text once."""
    found: dict[tuple[Any, int], tuple[str, re.Pattern[Any]]] = {}
    for package_name in SCANNED_PACKAGES:
        package = importlib.import_module(package_name)
        names = [package_name] + [info.name for info in pkgutil.walk_packages(package.__path__, package_name + ".")]
        for name in names:
            module = importlib.import_module(name)
            seen: set[int] = set()
            for attribute, value in vars(module).items():
                for where, pattern in _patterns_in(value, f"{name}.{attribute}", seen):
                    found.setdefault((pattern.pattern, pattern.flags), (where, pattern))
    for where, pattern in _redaction_patterns():
        found.setdefault((pattern.pattern, pattern.flags), (where, pattern))
    for where, source in INLINE_PATTERNS.items():
        pattern = re.compile(source)
        found.setdefault((pattern.pattern, pattern.flags), (where, pattern))
    return dict(found.values())


def _patterns_in(value: Any, where: str, seen: set[int]) -> Iterator[tuple[str, re.Pattern[Any]]]:
    if isinstance(value, re.Pattern):
        yield where, value
        return
    if isinstance(value, type) or id(value) in seen:
        return
    if isinstance(value, (tuple, list, set, frozenset)):
        seen.add(id(value))
        for index, item in enumerate(value):
            yield from _patterns_in(item, f"{where}[{index}]", seen)
    elif isinstance(value, dict):
        seen.add(id(value))
        for key, item in value.items():
            yield from _patterns_in(item, f"{where}[{key!r}]", seen)
    elif is_dataclass(value):
        seen.add(id(value))
        for field in fields(value):
            yield from _patterns_in(getattr(value, field.name), f"{where}.{field.name}", seen)


def _redaction_patterns() -> Iterator[tuple[str, re.Pattern[Any]]]:
    """The redaction patterns that run on whole snippets (the rest run on bounded windows)."""
    from obelisk_session_evidence.providers.redaction import redaction
    from obelisk_session_evidence.providers.redaction.secret_patterns import load_patterns

    patterns = load_patterns()
    yield "redaction uuid", patterns.uuid
    for index, check in enumerate(redaction._checks()):
        if not check.needs_hint and check.kind not in redaction._ANCHORS:
            yield f"redaction check {index} ({check.kind})", check.pattern


def windowed_patterns() -> dict[str, re.Pattern[Any]]:
    """Redaction's patterns that run only on windows of at most `HINT_LEAD + HINT_TAIL` characters
    around a hint word or an anchor literal (some are quadratic on a whole line: detect-secrets'
    keyword, JWT, npm and OpenAI patterns). The timing test times redaction itself on texts made
    for each of them."""
    from obelisk_session_evidence.providers.redaction import redaction
    from obelisk_session_evidence.providers.redaction.secret_patterns import load_patterns

    patterns = load_patterns()
    found = {f"redaction keyword {index}": keyword.pattern for index, keyword in enumerate(patterns.keywords)}
    found["redaction indirect reference"] = patterns.indirect_reference
    for index, check in enumerate(redaction._checks()):
        if check.needs_hint or check.kind in redaction._ANCHORS:
            found[f"redaction check {index} ({check.kind})"] = check.pattern
    return found


def literals(pattern: re.Pattern[Any], limit: int = MAX_LITERALS) -> list[str]:
    """Runs of two or more literal characters in the pattern (`pytest-of-`, `Traceback (`, ...)."""
    parser = importlib.import_module("re._parser")
    source = pattern.pattern.decode("latin-1") if isinstance(pattern.pattern, bytes) else pattern.pattern
    runs: set[str] = set()

    def walk(parsed: Any) -> None:
        run: list[str] = []
        for op, argument in parsed:
            name = str(op)
            if name == "LITERAL":
                run.append(chr(argument))
                continue
            if len(run) >= 2:
                runs.add("".join(run))
            run = []
            if name == "SUBPATTERN":
                walk(argument[-1])
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                walk(argument[2])
            elif name == "BRANCH":
                for branch in argument[1]:
                    walk(branch)
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(argument[1])
        if len(run) >= 2:
            runs.add("".join(run))

    walk(parser.parse(source, pattern.flags & ~re.UNICODE))
    return sorted(runs, key=lambda run: (-len(run), run))[:limit]


def hostile_texts(
    pattern: re.Pattern[Any], size: int, max_literals: int = MAX_LITERALS, pumps: tuple[str, ...] = PUMPS
) -> Iterator[tuple[str, str]]:
    """`(label, text)` of about `size` characters: each pump alone, and around each literal."""
    found = literals(pattern, max_literals)
    for pump in pumps:
        count = max(1, size // len(pump))
        yield f"{pump!r}*", pump * count
        for literal in found:
            yield f"{literal!r}+{pump!r}*", literal + pump * count
            yield f"{pump!r}*+{literal!r}", pump * count + literal
            yield f"{pump!r}*+{literal!r}+{pump!r}*", pump * (count // 2) + literal + pump * (count // 2)
            yield f"({literal!r}+{pump!r})*", (literal + pump) * max(1, size // (len(literal) + len(pump)))


def hostile_text(pattern: re.Pattern[Any], label: str, size: int) -> str:
    """The text `hostile_texts` labels `label`, at `size`."""
    return next(text for found, text in hostile_texts(pattern, size) if found == label)
