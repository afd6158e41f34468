"""Repository paths and volatile tokens."""

import pytest

from obelisk_session_evidence.comparators.paths import (
    mask_volatile,
    related_files,
    repository_path,
    same_file,
    subject_stem,
)


@pytest.mark.parametrize(
    ("path", "roots", "expected"),
    [
        ("src/a.py", (), "src/a.py"),
        ("./src/../src/a.py", (), "src/a.py"),
        ("/home/dev/repo/src/a.py", ("/home/dev/repo",), "src/a.py"),
        ("/home/dev/repo/src/a.py", (), "src/a.py"),
        ("/Users/dev/code/wt/feature/tests/test_a.py", (), "tests/test_a.py"),
        ("/home/dev/.worktrees/feature/pyproject.toml", (), "pyproject.toml"),
        ("/home/dev/repo/pyproject.toml", (), "repo/pyproject.toml"),
        ("/home/dev/repo/pyproject.toml", ("/home/dev/repo/",), "pyproject.toml"),
        ("/etc/hosts", (), "/etc/hosts"),
        ("/tmp/tmpab12cd/report.xml", (), "<tmp>/report.xml"),
        ("/tmp/tmpab12cd", (), "<tmp>"),
        ("/tmp/pytest-of-ci/pytest-3/work/alpha/src/app/x.py", (), "src/app/x.py"),
        ("/tmp/ci/alpha/pyproject.toml", ("/tmp/ci/alpha",), "pyproject.toml"),
        ("tests/test_a.py::test_one", (), "tests/test_a.py::test_one"),
    ],
)
def test_repository_path_table(path: str, roots: tuple[str, ...], expected: str) -> None:
    assert repository_path(path, roots=roots) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run 42 took 3.5s, 12MB", "run <n> took <n>s, <n>MB"),
        ("v1.2.3 and img:1.2.3", "v1.2.3 and img:<n>"),
        ("commit 4f2a9c1d on main", "commit <hash> on main"),
        ("at 2026-03-02T09:00:00.123Z", "at <time>"),
        ("id 3f1c9a52-1b7e-4d6a-9a0e-2b8c4d6e8f10", "id <uuid>"),
        ("log in /var/folders/x1/T/tmpq/out.log", "log in <tmp>/out.log"),
        ("test_case_1 and python3", "test_case_1 and python3"),
        ("a deadbeefcafe word", "a deadbeefcafe word"),
    ],
)
def test_mask_volatile_table(text: str, expected: str) -> None:
    assert mask_volatile(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("src/a.py", "src/a.py", True),
        ("repo/src/a.py", "src/a.py", True),
        ("pyproject.toml", "repo/pyproject.toml", True),
        ("src/__init__.py", "tests/__init__.py", False),
        ("src/a.py", "src/b.py", False),
    ],
)
def test_same_file_table(a: str, b: str, same: bool) -> None:
    assert same_file(a, b) is same


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("tests/test_parser.py", "parser"),
        ("pkg/parser_test.go", "parser"),
        ("src/parser.test.ts", "parser"),
        ("src/ParserTest.java", "Parser"),
        ("src/parser.py", "parser"),
        ("tests/test_parser.py::test_x", "parser"),
    ],
)
def test_subject_stem_table(path: str, stem: str) -> None:
    assert subject_stem(path) == stem


@pytest.mark.parametrize(
    ("target", "changed", "related"),
    [
        ("tests/test_parser.py", "src/pkg/parser.py", True),
        ("tests/test_parser.py::test_x", "tests/test_parser.py", True),
        ("tests/test_parser.py", "src/pkg/lexer.py", False),
        ("scripts/migrate.py", "scripts/migrate.py", True),
        ("src/parser.py", "docs/parser.md", False),
        ("pkg/queue/...", "pkg/queue/queue.go", True),
        ("pkg/queue/...", "pkg/shard/shard.go", False),
        ("tests", "src/app/router.py", True),
    ],
)
def test_related_files_table(target: str, changed: str, related: bool) -> None:
    assert related_files(target, changed) is related
