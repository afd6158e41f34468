"""Command normalisation and similarity: tables of repeat, paraphrase and novel pairs."""

import pytest

from obelisk_session_evidence.comparators.command_similarity import command_similarity
from obelisk_session_evidence.comparators.commands import cd_roots, command_shapes, normalise_command

REPEATS = [
    ("pytest tests/test_parser.py", "pytest tests/test_parser.py"),
    ("git push origin main", "git push origin main"),
]
PARAPHRASES = [
    # reordered flags, cosmetic flags, bundled short flags
    ("pytest -x -q tests/test_parser.py", "pytest tests/test_parser.py -q -x"),
    ("pytest -xvs tests/test_parser.py", "pytest -x -v -s tests/test_parser.py"),
    ("pytest tests/test_parser.py --tb=short -vv", "pytest tests/test_parser.py"),
    ("ls -la src", "ls -al src"),
    # interpreters and wrappers
    ("python -m pytest tests/test_parser.py", "pytest tests/test_parser.py"),
    ("python3 -m pytest tests/test_parser.py", "py.test tests/test_parser.py"),
    ("bash -lc 'pytest tests/test_parser.py'", "pytest tests/test_parser.py"),
    ('sh -c "pytest tests/test_parser.py"', "zsh -ic 'pytest tests/test_parser.py'"),
    ("uv run pytest tests/test_parser.py", "poetry run pytest tests/test_parser.py"),
    ("timeout 120 pytest tests/test_parser.py", "env CI=1 pytest tests/test_parser.py"),
    (".venv/bin/pytest tests/test_parser.py", "pytest tests/test_parser.py"),
    ("npx jest src/app.test.ts", "jest src/app.test.ts"),
    ("npx vercel@latest ls planetfall --format=json", "npx vercel ls planetfall --format=json"),
    ("bunx @biomejs/biome@2.1.0 check src", "bunx @biomejs/biome check src"),
    # how node reads the script text (ES module or not) is not what it runs
    (
        "node --input-type=module -e \"import fs from 'node:fs'; fs.rmSync('dist')\"",
        "node -e \"import fs from 'node:fs'; fs.rmSync('dist')\"",
    ),
    # environment assignments and cd prefixes
    ("PYTHONPATH=src DEBUG=1 pytest tests/test_parser.py", "pytest tests/test_parser.py"),
    ("cd /home/dev/repo && pytest tests/test_parser.py", "pytest tests/test_parser.py"),
    (
        "cd /home/dev/wt/feature && pytest /home/dev/wt/feature/tests/test_parser.py",
        "cd /home/dev/repo && pytest /home/dev/repo/tests/test_parser.py",
    ),
    ("cd backend && pytest tests/test_parser.py", "pytest backend/tests/test_parser.py"),
    # redirections and display filters
    ("pytest tests/test_parser.py 2>&1 | tail -n 40", "pytest tests/test_parser.py"),
    ("pytest tests/test_parser.py > /tmp/out.log", "pytest tests/test_parser.py | grep FAILED"),
    # package-manager spellings
    ("npm test", "npm run test"),
    ("yarn test", "npm run-script test"),
    ("make -j8 test", "make test"),
    ("git --no-pager log --oneline -n 5", "git log -n 7"),
    # volatile tokens
    ("python scripts/replay.py /tmp/tmpa81kq2/events.json", "python scripts/replay.py /tmp/tmpzz93x1/events.json"),
    ("ls /tmp/pytest-of-dev/pytest-12/report.xml", "ls /private/var/folders/x1/T/report.xml"),
    ("python tools/fetch.py --since 2026-01-02T10:00:00Z", "python tools/fetch.py --since 2026-03-09T08:15:00Z"),
    ("kill 41213", "kill 977"),
    ("curl http://localhost:8080/health", "curl http://localhost:9090/health"),
    (
        "python scripts/load.py 3f1c9a52-1b7e-4d6a-9a0e-2b8c4d6e8f10",
        "python scripts/load.py 0a9e2f4c-5d1b-4c3a-8e7f-1a2b3c4d5e6f",
    ),
    ("./scripts/build.sh --release", "bash scripts/build.sh --release"),
    ("pytest --maxfail=2 tests/test_parser.py", "pytest tests/test_parser.py"),
]
NOVEL = [
    # same program, other target
    ("pytest tests/test_parser.py", "pytest tests/test_lexer.py"),
    ("pytest tests/test_a.py::test_one", "pytest tests/test_a.py::test_two"),
    ("pytest tests/test_a.py", "pytest tests/test_a.py tests/test_b.py"),
    # one character of an argument names another thing (a parent commit, another file)
    ("git show c3f1dae:.github/workflows/deploy.yml", "git show c3f1dae^:.github/workflows/deploy.yml"),
    ("pytest tests/integration/test_lockfile_v2.py", "pytest tests/integration/test_lockfile_v3.py"),
    # another commit (chikachow/cyspbot: the file at 529270f is not the file at c3f1dae)
    ("git show c3f1dae:.github/workflows/deploy.yml", "git show 529270f:.github/workflows/deploy.yml"),
    ("git show 4f2a9c1d", "git show 9e0b77aa31"),
    # same target, a flag that changes meaning
    ("git push origin main", "git push --force origin main"),
    ("pytest tests/test_parser.py", "pytest tests/test_parser.py -k unicode"),
    ("pytest tests/test_parser.py", "pytest tests/test_parser.py --lf"),
    ("pip install -e .", "pip install -e . --no-deps"),
    ("cargo test", "cargo test --release"),
    # another program
    ("pytest tests/test_parser.py", "mypy tests/test_parser.py"),
    ("npm run test", "npm run lint"),
    ("git push origin main", "git pull origin main"),
    ("make test", "make build"),
    # two scripts fed to node as module here-documents (planetfall: a DevTools probe, then a page check)
    (
        "node --input-type=module <<'NODE'\nimport http from 'node:http';\nhttp.get('http://127.0.0.1:9222/json', r => r.pipe(process.stdout));\nNODE",
        "node --input-type=module <<'NODE'\nconst ws = new WebSocket(process.argv[2]);\nws.onmessage = (m) => console.log(JSON.parse(m.data).result);\nNODE",
    ),
]


@pytest.mark.parametrize(("a", "b"), REPEATS + PARAPHRASES)
def test_normalise_command_folds_paraphrases(a: str, b: str) -> None:
    assert normalise_command(a) == normalise_command(b)


@pytest.mark.parametrize(("a", "b"), REPEATS + PARAPHRASES)
def test_command_similarity_repeat_is_100(a: str, b: str) -> None:
    (shape_a,), (shape_b,) = command_shapes(a), command_shapes(b)
    assert command_similarity(shape_a, shape_b) == 100


@pytest.mark.parametrize(("a", "b"), NOVEL)
def test_command_similarity_novel_is_low(a: str, b: str) -> None:
    (shape_a,), (shape_b,) = command_shapes(a), command_shapes(b)
    assert command_similarity(shape_a, shape_b) <= 67


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd /r && export X=1 && source .venv/bin/activate && pytest", ["pytest"]),
        ("make build && make test", ["make build", "make test"]),
        ("pytest || cat log.txt", ["pytest", "cat log.txt"]),
        ("curl -s https://x.io/install | sh", ["curl -s https://x.io/install", "sh"]),
        ("pytest | tee out.txt | tail", ["pytest"]),
        ("bash -c 'cd web && npm test'", ["npm run test"]),
        ("git -C /home/dev/repo status --short", ["git status"]),
        ("git switch -C codex/x origin/main", ["git switch -C codex/x origin/main"]),
        ("command -v shellcheck && shellcheck x.sh", ["command -v shellcheck", "shellcheck x.sh"]),
        ("command ls -la", ["ls -a -l"]),
        ("echo 'unbalanced", ["echo 'unbalanced"]),
        ("", []),
    ],
)
def test_command_shapes_segments(command: str, expected: list[str]) -> None:
    assert [shape.text for shape in command_shapes(command)] == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd /home/dev/repo && pytest", ("/home/dev/repo",)),
        ("bash -lc 'cd /srv/app/ && make'", ("/srv/app",)),
        ("cd src && ls", ()),
        ("pytest", ()),
    ],
)
def test_cd_roots_absolute_only(command: str, expected: tuple[str, ...]) -> None:
    assert cd_roots(command) == expected


@pytest.mark.parametrize(
    ("command", "is_check"),
    [
        ("pytest tests/a.py", True),
        ("npm test", True),
        ("cargo build", True),
        ("make", True),
        ("go test ./...", True),
        ("git push origin main", False),
        ("python scripts/migrate.py", False),
        ("python tests/test_smoke.py", True),
    ],
)
def test_command_shape_is_check(command: str, is_check: bool) -> None:
    (shape,) = command_shapes(command)
    assert shape.is_check is is_check


def test_command_shape_paths_are_repository_relative() -> None:
    (shape,) = command_shapes("cd /home/dev/repo && python scripts/x.py /home/dev/repo/src/a.py -n 3")
    assert shape.paths == ("scripts/x.py", "src/a.py")
