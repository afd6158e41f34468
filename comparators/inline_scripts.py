"""Inline scripts and commit messages reduced to what they mean.

A `python -c '…'` or `node -e '…'` body is compared by what it does, the modules it imports,
the functions it calls and the files it names, not as one opaque string: re-indenting it,
renaming a local or changing a printed label does not make it a new route. A commit message is
compared by its subject line (Claude Code writes every body through a heredoc).
"""

import re
from typing import Final

MAX_SIGNATURE_TERMS: Final = 256
_JS_IMPORT: Final = re.compile(
    r"""require\(\s*['"]([^'"]+)['"]|\bfrom\s+['"]([^'"]+)['"]|\bimport\s*(?:\(\s*)?['"]([^'"]+)['"]"""
)
_MAX_CALL_NAME: Final = 200
_NAMES: Final = r"(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*[\w.]+(?:\s+as\s+\w+)?"
_PY_FROM: Final = re.compile(rf"\bfrom\s+([\w.]+)\s+import\s+\(?\s*({_NAMES})")
_PY_IMPORT: Final = re.compile(rf"(?<![\w.])import\s+({_NAMES})")
_KEYWORDS: Final = frozenset(
    {
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "function",
        "return",
        "typeof",
        "new",
        "await",
        "elif",
        "and",
        "or",
        "not",
        "in",
        "with",
        "lambda",
        "def",
        "class",
        "except",
    }
)
_PATH_LITERAL: Final = re.compile(
    r"^[\w.~-]*(?:/[\w.@-]+)+/?$|^[\w-]+\.(?:py|json|toml|ya?ml|txt|md|csv|js|ts|cfg|ini)$"
)


def python_signature(body: str) -> tuple[str, ...]:
    """Sorted `import:` / `call:` / `file:` terms of a Python body.

    Read by pattern, not by `ast`: a snippet collapses a script's newlines, and the collapsed
    script (no longer valid Python) must read the same as the one the agent proposes.
    """
    return _regex_signature(body, python=True)


def javascript_signature(body: str) -> tuple[str, ...]:
    """Sorted `import:` / `call:` / `file:` terms of a JavaScript body (read by pattern)."""
    return _regex_signature(body, python=False)


COLLAPSED_MARK: Final = " …"
"""Ends the key of a message whose line breaks a snippet collapsed: compared by prefix."""
_COLLAPSED_HEREDOC: Final = re.compile(
    r"""^\$\(cat(?:\s+<<-?\s*['"]?(?P<tag>\w+)['"]?)?\s+(?P<body>.*?)(?:\s+(?P=tag)\s*\)?\s*)?(?:…)?$""", re.S
)


def commit_subject(message: str) -> str:
    """The first non-blank line of a commit message, whitespace folded.

    A `$(cat <<'EOF' … EOF)` message whose line breaks a snippet collapsed has no line to cut
    at: its key is the whole text, marked with `COLLAPSED_MARK`, and compares by prefix.
    """
    collapsed = _COLLAPSED_HEREDOC.match(message) if "\n" not in message else None
    if collapsed is not None:
        body = " ".join(collapsed["body"].split())
        return body + COLLAPSED_MARK if body else ""
    for line in message.splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def same_commit_subject(a: str, b: str) -> bool:
    """True when two subject keys name one message: equal, or a collapsed one starts with the other."""
    if a == b:
        return True
    for collapsed, other in ((a, b), (b, a)):
        if not collapsed.endswith(COLLAPSED_MARK):
            continue
        text, plain = collapsed.removesuffix(COLLAPSED_MARK), other.removesuffix(COLLAPSED_MARK)
        if len(text) <= len(plain):
            # The collapsed message was cut (a snippet window): any long enough prefix.
            if len(text) >= 24 and plain.startswith(text):
                return True
        elif len(plain) >= 16 and text.startswith(plain + " "):
            return True  # the subject, then the collapsed body
    return False


def _called_names(body: str) -> list[str]:
    """The dotted name before each `(`, read backwards (linear: a regex here backtracks
    quadratically on long identifiers)."""
    names = []
    for opening in re.finditer(r"\(", body):
        end = opening.start()
        while end > 0 and body[end - 1] in " \t":
            end -= 1
        start = end
        while start > 0 and end - start < _MAX_CALL_NAME and (body[start - 1].isalnum() or body[start - 1] in "_$."):
            start -= 1
        name = body[start:end].strip(".")
        if name and (name[0].isalpha() or name[0] in "_$") and ".." not in name:
            names.append(name)
    return names


def _bound(name: str) -> str:
    return name.split(" as ")[0].strip()


def _regex_signature(body: str, *, python: bool) -> tuple[str, ...]:
    terms: set[str] = set()
    if python:
        for module, names in _PY_FROM.findall(body):
            terms.update(f"import:{module}.{_bound(name)}" for name in names.split(","))
        for names in _PY_IMPORT.findall(_PY_FROM.sub(" ", body)):
            terms.update(f"import:{_bound(name)}" for name in names.split(","))
    else:
        terms.update(f"import:{next(g for g in groups if g)}" for groups in _JS_IMPORT.findall(body))
    for name in _called_names(body):
        if name.split(".")[0] not in _KEYWORDS and name not in ("require", "import"):
            terms.add(f"call:{name}")
    for literal in re.findall(r"""['"]([^'"\s]{3,200})['"]""", body):
        if _PATH_LITERAL.match(literal):
            terms.add(f"file:{literal}")
    return tuple(sorted(terms)[:MAX_SIGNATURE_TERMS])
