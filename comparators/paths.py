"""File paths and volatile tokens: the same file, or the same run, written differently compares equal.

Repository-relative paths are the comparison key. A session records absolute paths under the
checkout it ran in, and worktrees of one repository live under different folders, so a path is
cut at the repository root when one is known (a `cd <root> &&` prefix, or roots the caller
passes) and otherwise at the first conventional top-level folder (`src/`, `tests/`, ...).
"""

import posixpath
import re
from collections.abc import Iterable
from typing import Final

TEMP_PLACEHOLDER: Final = "<tmp>"

_TEMP_ROOT: Final = re.compile(
    r"(?:(?:/private)?/tmp|(?:/private)?/var/folders|/var/tmp|/dev/shm|\$\{?TMPDIR\}?|\$\{?TMP\}?)"
    r"(?=/|$)(?P<rest>[^\s'\"]*)"
)
# Starts only at a word's start (the lookbehind): one backward scan per word, not one per character.
_PYTEST_TEMP: Final = re.compile(r"(?<![^\s'\"])[^\s'\"]*/pytest-of-[^/\s'\"]+(?P<rest>[^\s'\"]*)")
_RANDOM_NAME: Final = re.compile(
    r"^(?:tmp|temp)[\w.-]*$|^(?=[\w-]*\d[\w-]*\d)[A-Za-z0-9_-]{6,}$|^pytest-\d+$|^test\d+$"
)
_VOLATILE: Final = (
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<uuid>",
    ),
    (
        re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"),
        "<time>",
    ),
    (re.compile(r"(?<![\w:])\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (
        re.compile(r"(?<![A-Za-z0-9_])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![A-Za-z0-9_])"),
        "<hash>",
    ),
    # A number, with its decimals, before an optional short unit (`3.5s`, `120ms`, `64MB`).
    (re.compile(r"(?<![A-Za-z0-9_<.])\d+(?:\.\d+)*(?=(?:[A-Za-z%]{1,3})?(?![A-Za-z0-9_>]))"), "<n>"),
)

_HOME_LIKE: Final = frozenset(
    {"home", "Users", "root", "work", "workspace", "workspaces", "mnt", "srv", "code", "projects", "src"}
)
"""First components of absolute paths that hold checkouts (as opposed to system paths)."""
_TOP_DIRS: Final = frozenset(
    {
        "src",
        "tests",
        "test",
        "lib",
        "libs",
        "pkg",
        "cmd",
        "internal",
        "docs",
        "doc",
        "scripts",
        "app",
        "apps",
        "packages",
        "crates",
        "include",
        "examples",
        "benchmarks",
        "bench",
        "tools",
        "spec",
        "specs",
        "migrations",
        "fixtures",
        ".github",
    }
)
"""Conventional top-level folders of a repository: an absolute path is cut at the first one."""
FILE_EXTENSIONS: Final = frozenset(
    {
        ".py",
        ".pyi",
        ".ipynb",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".vue",
        ".svelte",
        ".astro",
        ".json",
        ".jsonc",
        ".json5",
        ".md",
        ".mdx",
        ".rst",
        ".txt",
        ".yml",
        ".yaml",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".lock",
        ".ex",
        ".exs",
        ".heex",
        ".eex",
        ".erl",
        ".rs",
        ".go",
        ".rb",
        ".rake",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".clj",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".cs",
        ".fs",
        ".swift",
        ".m",
        ".mm",
        ".php",
        ".pl",
        ".pm",
        ".lua",
        ".r",
        ".jl",
        ".dart",
        ".zig",
        ".nim",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".sql",
        ".graphql",
        ".gql",
        ".proto",
        ".css",
        ".scss",
        ".sass",
        ".less",
        ".html",
        ".htm",
        ".xml",
        ".svg",
        ".csv",
        ".tsv",
        ".env",
        ".dockerfile",
        ".tf",
        ".hcl",
        ".nix",
        ".gradle",
        ".properties",
        ".sbt",
        ".cmake",
        ".mk",
        ".el",
        ".hs",
        ".ml",
        ".mli",
        ".elm",
    }
)
"""Extensions of files a repository command reads or a failure names."""
_SCOPED_PACKAGE: Final = re.compile(r"\A@[\w.-]+/[\w.-]+\Z")
"""`@app/core`: a workspace package's name (turbo prints `@app/core:test:`), not a path."""
_PATH_CHARACTERS: Final = re.compile(r"^/?[\w@.+~-]+(?:/[\w@.+~-]+)*/?$")
_POSITION: Final = re.compile(r"(?::\d+){1,2}:?$|\(\d+(?:,\d+)?\)?:?$")
_WORKTREE_MARKERS: Final = frozenset({"worktrees", ".worktrees", "worktree"})
_FILE_SUFFIX: Final = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_TEST_NAME: Final = re.compile(
    r"^(?:test_(?P<a>.+)|(?P<b>.+?)_tests?|(?P<c>.+?)\.(?:test|spec)|(?P<d>.+?)(?:Test|Tests|Spec))$"
)


def mask_temp_paths(text: str) -> str:
    """Temporary paths become `<tmp>`, keeping a stable file name (`<tmp>/report.xml`)."""

    def replace(match: re.Match[str]) -> str:
        rest = [part for part in match["rest"].split("/") if part]
        if rest and not _RANDOM_NAME.match(rest[-1]):
            return f"{TEMP_PLACEHOLDER}/{rest[-1]}"
        return TEMP_PLACEHOLDER

    if "pytest-of-" in text:
        text = _PYTEST_TEMP.sub(replace, text)
    return _TEMP_ROOT.sub(replace, text)


def mask_volatile(text: str) -> str:
    """Temp paths, UUIDs, timestamps, hashes and numbers become placeholders."""
    text = mask_temp_paths(text)
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def looks_like_path(token: str) -> bool:
    """True for tokens that name a file or folder (`src/a.py`, `./run.sh`, `Makefile.am`)."""
    if not token or token.startswith("-") or "://" in token or token.startswith("<"):
        return False
    if "/" in token:
        return not token.startswith("$(") and " " not in token.strip()
    return bool(_FILE_SUFFIX.search(token)) and not token[0].isdigit()


def names_file(token: str) -> bool:
    """True for a token of prose or output that names a file: a slash-separated path of file-name
    characters, or a name with a source or data extension (`a.py`, not `p.name` or `{/*`)."""
    if not _PATH_CHARACTERS.match(token) or not any(character.isalpha() for character in token):
        return False
    extension = posixpath.splitext(token.rstrip("/"))[1].lower()
    if extension in FILE_EXTENSIONS:
        return True
    return "/" in token.strip("/") and not extension and not _SCOPED_PACKAGE.match(token)


def without_position(token: str) -> str:
    """A path without the line and column an output appends (`a.ts:3:10`, `a.ts(3,10)`)."""
    return _POSITION.sub("", token)


def repository_path(path: str, *, roots: Iterable[str] = ()) -> str:
    """`path` relative to the repository: roots stripped, `./` and `a/../` folded."""
    text = path.strip().strip("'\"").replace("\\", "/")
    text = text.removeprefix("file://")
    if text.startswith("~/"):
        text = "/home/~/" + text[2:]
    for root in sorted({r.rstrip("/") for r in roots if r.startswith("/")}, key=len, reverse=True):
        if text == root:
            return "."
        if text.startswith(root + "/"):
            return _clean(text[len(root) + 1 :])
    if not text.startswith("/") and not text.startswith("$"):
        return _clean(text)
    parts = [part for part in posixpath.normpath(text).split("/") if part]
    is_temp = mask_temp_paths(text) != text
    if not is_temp and (not parts or parts[0] not in _HOME_LIKE):
        return posixpath.normpath(text)
    for index in range(1, len(parts) - 1):
        if parts[index] in _WORKTREE_MARKERS:
            return _clean("/".join(parts[index + 2 :]))
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith(".") and part not in _TOP_DIRS and not is_temp:
            return posixpath.normpath(text)  # under a hidden folder (`~/.agents/…`): a tool's files, not a checkout
        if part in _TOP_DIRS and index < len(parts) - 1:
            # A checkout may live anywhere, a temp folder included (CI sandboxes, test runs).
            return _clean("/".join(parts[index:]))
    if is_temp:
        return mask_temp_paths(text)
    # No known root and no conventional folder: the last two components are the best stable key.
    return _clean("/".join(parts[-2:]))


def same_file(a: str, b: str) -> bool:
    """True when two repository paths name the same file, allowing a missing leading folder."""
    if a == b:
        return True
    if a.startswith("/") != b.startswith("/"):
        return False  # one lies outside the repository (`repository_path` kept it absolute), one inside
    pa, pb = a.split("/"), b.split("/")
    shared = 0
    for x, y in zip(reversed(pa), reversed(pb), strict=False):
        if x != y:
            break
        shared += 1
    return shared >= min(len(pa), len(pb), 2)


def subject_stem(path: str) -> str:
    """The stem of the code a test file tests (`tests/test_parser.py` -> `parser`), else the stem."""
    name = posixpath.basename(path).split("::", 1)[0]
    stem = _FILE_SUFFIX.sub("", name)
    match = _TEST_NAME.match(stem)
    if match:
        return next(group for group in match.groups() if group)
    return stem


def tests_module_of(test: str, path: str) -> bool:
    """True when `path` is the module a failing test is named after, by the test's leading name:
    `prompt-generator > builds …` and `prompt-generator.ts`, `TestParseFoo` and `parse_foo.go`,
    `parser::tests::parses` and `parser.rs` (case, `-` and `_` aside; a test file's stem is its
    subject's, `subject_stem`). Names under three characters name nothing."""
    leading = _TEST_SEGMENT.split(test.strip(), maxsplit=1)[0]
    leading = leading.removeprefix("Test") if leading[4:5].isupper() else leading
    name = _folded(leading)
    return len(name) > 2 and name == _folded(subject_stem(path))


def _folded(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


_TEST_SEGMENT: Final = re.compile(r" > | › |::|/")


def is_test_path(path: str) -> bool:
    """True for a test file (`test_x.py`, `x_test.go`, `x.spec.ts`, anything under `tests/`)."""
    name = posixpath.basename(path).split("::", 1)[0]
    stem = _FILE_SUFFIX.sub("", name)
    return bool(_TEST_NAME.match(stem)) or "/tests/" in f"/{path}" or "/test/" in f"/{path}"


def related_files(target: str, changed: str) -> bool:
    """True when a change to `changed` can alter what running `target` shows.

    The same file or a folder holding it; a test file and the code it tests (matched by stem: `test_parser.py` and
    `parser.py`); a folder and what lies under it (a test folder tests every file).
    """
    target_file = target.split("::", 1)[0]
    if same_file(target_file, changed) or target_file.startswith(changed.rstrip("/") + "/"):
        return True  # the file, or a folder holding it (`rm -rf tmp/clones/x` for `tmp/clones/x/a.test.ts`)
    if not _FILE_SUFFIX.search(target_file):
        # A folder (`pkg/queue/...`, `tests/`): what lies under it; a test folder tests everything.
        folder = target_file.rstrip("/.")
        return (
            folder in ("", ".")
            or changed.startswith(folder + "/")
            or posixpath.basename(folder) in ("tests", "test", "spec", "__tests__")
        )
    return subject_stem(target_file) == subject_stem(changed) and (is_test_path(target_file) or is_test_path(changed))


def _clean(path: str) -> str:
    """Fold `./`, `a/../b` and duplicate slashes; keep a trailing `::node` id."""
    file_part, sep, node = path.partition("::")
    folded = posixpath.normpath(file_part) if file_part else file_part
    return (folded.removeprefix("./") if folded != "." else folded) + sep + node
