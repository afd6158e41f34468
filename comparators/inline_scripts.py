"""Inline scripts and commit messages reduced to what they mean.

A `python -c '…'` or `node -e '…'` body is compared by what it does, the modules it imports,
the functions it calls and the files it names, not as one opaque string: re-indenting it,
renaming a local or changing a printed label does not make it a new route. A commit message is
compared by its subject line (Claude Code writes every body through a heredoc).
"""

import ast
import re
from typing import Final

MAX_SIGNATURE_TERMS: Final = 256
_JS_IMPORT: Final = re.compile(r"""require\(\s*['"]([^'"]+)['"]|\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(?\s*['"]([^'"]+)['"]""")
_CALL: Final = re.compile(r"([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*\(")
_PY_IMPORT_LINE: Final = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", re.M)
_KEYWORDS: Final = frozenset(
    {"if", "for", "while", "switch", "catch", "function", "return", "typeof", "new", "await", "elif",
     "and", "or", "not", "in", "with", "print", "lambda", "def", "class", "except"}
)  # fmt: skip
_PATH_LITERAL: Final = re.compile(r"^[\w.~-]*(?:/[\w.@-]+)+/?$|^[\w-]+\.(?:py|json|toml|ya?ml|txt|md|csv|js|ts|cfg|ini)$")


def python_signature(body: str) -> tuple[str, ...]:
    """Sorted `import:` / `call:` / `file:` terms of a Python body; a regex reading if it does not parse."""
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _regex_signature(body, python=True)
    terms: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            terms.update(f"import:{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            terms.update(f"import:{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name:
                terms.add(f"call:{name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _PATH_LITERAL.match(node.value):
                terms.add(f"file:{node.value}")
        if len(terms) >= MAX_SIGNATURE_TERMS:
            break
    return tuple(sorted(terms))


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


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif parts:
        parts.append("")  # a method of a call result or literal: `.attr`
    else:
        return None
    return ".".join(reversed(parts))


def _regex_signature(body: str, *, python: bool) -> tuple[str, ...]:
    terms: set[str] = set()
    if python:
        for module_from, modules in _PY_IMPORT_LINE.findall(body):
            names = [module_from] if module_from else [m.split(" as ")[0].strip() for m in modules.split(",")]
            terms.update(f"import:{name}" for name in names if name)
    else:
        terms.update(f"import:{next(g for g in groups if g)}" for groups in _JS_IMPORT.findall(body))
    for name in _CALL.findall(body):
        name = re.sub(r"\s+", "", name)
        if name.split(".")[0] not in _KEYWORDS and name not in ("require", "import"):
            terms.add(f"call:{name}")
    for literal in re.findall(r"""['"]([^'"\s]{3,200})['"]""", body):
        if _PATH_LITERAL.match(literal):
            terms.add(f"file:{literal}")
    return tuple(sorted(terms)[:MAX_SIGNATURE_TERMS])
