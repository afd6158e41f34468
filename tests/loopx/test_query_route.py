"""Issue 30 §3: the text LoopX sends becomes the route it stands for."""

import pytest

from obelisk_session_evidence.contracts.situation import RouteProposal
from obelisk_session_evidence.loopx.query_route import MAX_QUERY_WORDS, query_route, query_words


def test_query_words_are_bounded_and_stripped_of_syntax():
    words = query_words('why did "pytest tests/test_auth.py" fail? OR NEAR(x) ' + "w" * 70 + " a")
    assert words == ["why", "did", "pytest", "tests/test_auth.py", "fail", "OR"]
    assert len(query_words(" ".join(f"word{i}" for i in range(40)))) == MAX_QUERY_WORDS
    # LoopX's fixed prepare-evidence query asks nothing specific.
    assert query_words("current  decision evidence") == []


@pytest.mark.parametrize(
    "query",
    [
        "pytest tests/test_auth.py -x",
        "make lint",
        "FOO=1 npm test",
        "./scripts/ci.sh --fast",
        "bin/check",
        "python3 -m pytest -q",
        "uv run pytest",
        "git push origin main",
        "cargo test --all",
        'git commit -m "fix the failing test"',
    ],
)
def test_a_command_line_is_compared_as_a_command(query):
    assert query_route(query) == RouteProposal(action_kind="shell", commands=[query])


def test_a_command_line_keeps_its_text_with_whitespace_collapsed():
    assert query_route("  pytest   -x \n tests ").commands == ["pytest -x tests"]


@pytest.mark.parametrize(
    ("query", "files", "hypothesis"),
    [
        ("tests/test_auth.py", ["tests/test_auth.py"], None),
        ("why does tests/test_auth.py fail?", ["tests/test_auth.py"], "why does fail"),
        ("auth.py and README.md", ["auth.py", "README.md"], "and"),
        ("the src/login folder", ["src/login"], "the folder"),
    ],
)
def test_a_query_naming_files_is_compared_as_files(query, files, hypothesis):
    assert query_route(query) == RouteProposal(action_kind="lookup", files=files, hypothesis=hypothesis)


@pytest.mark.parametrize(
    ("query", "hypothesis"),
    [
        ("token refresh races the login redirect", "token refresh races the login redirect"),
        ("did pytest fail before?", "did pytest fail before"),  # a question is not a command
        ("pytest fails on login?", "pytest fails on login"),
        ("pytest auth failure", "pytest auth failure"),
        ("make the build pass", "make the build pass"),
        ("upgrade to v1.2 e.g. 3.14", "upgrade to v1.2 e.g 3.14"),  # versions are not files
    ],
)
def test_other_text_is_compared_as_a_hypothesis(query, hypothesis):
    assert query_route(query) == RouteProposal(action_kind="lookup", hypothesis=hypothesis)


def test_loopx_prepare_query_and_empty_text_are_no_route():
    assert query_route("current decision evidence") == RouteProposal(action_kind="resume")
    assert query_route("  ") == RouteProposal(action_kind="lookup")
