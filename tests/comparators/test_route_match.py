"""Route matching: outcome and revision awareness over prior steps."""

from datetime import UTC, datetime, timedelta

import pytest

from obelisk_session_evidence.comparators.history import prior_steps
from obelisk_session_evidence.comparators.route_match import route_match
from obelisk_session_evidence.contracts.evidence import EvidenceItem
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.contracts.thresholds import RouteThresholds

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
THRESHOLDS = RouteThresholds()
CURRENT = Revision(current="c0ffee1")


def call(
    command: str,
    outcome: str = "exit 1",
    *,
    minute: int | None = 0,
    revision: str | None = None,
    evidence_type: str | None = None,
    output: str = "",
) -> EvidenceItem:
    failed = outcome not in ("exit 0", "ok")
    return EvidenceItem(
        session_ref="session:" + "a" * 16,
        evidence_type=evidence_type or ("prior_failure" if failed else "tool_outcome"),
        observed_at=None if minute is None else T0 + timedelta(minutes=minute),
        revision_ref=revision,
        snippet=tool_snippet(command, outcome, output),
    )


def edit(path: str, *, minute: int | None = 5, revision: str | None = None) -> EvidenceItem:
    return EvidenceItem(
        session_ref="session:" + "a" * 16,
        evidence_type="file_history",
        observed_at=None if minute is None else T0 + timedelta(minutes=minute),
        revision_ref=revision,
        snippet=tool_snippet(f"Edit {path}", "ok", ""),
    )


def prose(text: str, evidence_type: str = "decision") -> EvidenceItem:
    return EvidenceItem(session_ref="session:" + "b" * 16, evidence_type=evidence_type, snippet=text)


def match(items, *, commands=(), files=(), action_kind="shell", hypothesis=None, blocker=None, revision=CURRENT):
    route = RouteProposal(
        action_kind=action_kind, commands=list(commands), files=list(files), hypothesis=hypothesis, blocker=blocker
    )
    return route_match(route, prior_steps(items), thresholds=THRESHOLDS, revision=revision)


@pytest.mark.parametrize(
    ("proposed", "historical"),
    [
        ("pytest tests/test_parser.py", "pytest tests/test_parser.py"),
        ("python -m pytest -q tests/test_parser.py", "cd /home/dev/wt && pytest tests/test_parser.py -x 2>&1 | tail"),
        ("bash -lc 'make test'", "make -j4 test"),
    ],
)
def test_route_match_repeat_and_paraphrase_of_failure(proposed: str, historical: str) -> None:
    result = match([call(historical)], commands=[proposed])
    assert result.repeats_failure and result.command_similarity == 100 and result.command_items == {0}


@pytest.mark.parametrize(
    ("proposed", "historical"),
    [
        ("pytest tests/test_lexer.py", "pytest tests/test_parser.py"),
        ("git push --force origin main", "git push origin main"),
        ("pytest tests/test_parser.py -k unicode", "pytest tests/test_parser.py"),
    ],
)
def test_route_match_novel_commands(proposed: str, historical: str) -> None:
    result = match([call(historical)], commands=[proposed])
    assert not result.repeats_failure and not result.repeats_attempt and result.command_items == frozenset()


def test_route_match_success_is_an_attempt() -> None:
    result = match([call("make build", "exit 0")], commands=["make build"])
    assert result.repeats_attempt and not result.repeats_failure


def test_route_match_later_success_resolves_failure() -> None:
    items = [call("git push origin main", "exit 1", minute=0), call("git push origin main", "exit 0", minute=9)]
    result = match(items, commands=["git push origin main"])
    assert result.repeats_attempt and not result.repeats_failure and result.resolved == 1


def test_route_match_earlier_success_does_not_resolve_later_failure() -> None:
    items = [call("git push origin main", "exit 0", minute=0), call("git push origin main", "exit 1", minute=9)]
    result = match(items, commands=["git push origin main"])
    assert result.repeats_failure and result.resolved == 0


def test_route_match_unknown_times_never_resolve() -> None:
    items = [call("git push", "exit 1", minute=None), call("git push", "exit 0", minute=None)]
    assert match(items, commands=["git push"]).repeats_failure


def test_route_match_test_rerun_after_edit_of_code_under_test_is_not_a_repeat() -> None:
    items = [call("pytest tests/test_parser.py", minute=0), edit("src/pkg/parser.py", minute=5)]
    result = match(items, commands=["pytest tests/test_parser.py"])
    assert not result.repeats_failure and not result.repeats_attempt and result.superseded == 1


def test_route_match_test_rerun_after_unrelated_edit_repeats() -> None:
    items = [call("pytest tests/test_parser.py", minute=0), edit("src/pkg/lexer.py", minute=5)]
    assert match(items, commands=["pytest tests/test_parser.py"]).repeats_failure


def test_route_match_edit_before_failure_does_not_supersede() -> None:
    items = [edit("src/pkg/parser.py", minute=0), call("pytest tests/test_parser.py", minute=5)]
    assert match(items, commands=["pytest tests/test_parser.py"]).repeats_failure


def test_route_match_route_that_edits_the_code_under_test_is_not_a_repeat() -> None:
    result = match(
        [call("pytest tests/test_parser.py")],
        commands=["pytest tests/test_parser.py"],
        files=["src/pkg/parser.py"],
        action_kind="edit",
    )
    assert not result.repeats_failure and result.superseded == 1


def test_route_match_whole_suite_check_superseded_by_any_later_edit() -> None:
    items = [call("make test", minute=0), edit("docs/usage.md", minute=3)]
    assert not match(items, commands=["make test"]).repeats_failure


def test_route_match_other_revision_with_changed_files_is_a_failure_changed_since() -> None:
    items = [
        call("python scripts/migrate.py --dry-run", revision="abc1234", minute=None),
        edit("scripts/migrate.py", revision="c0ffee1", minute=None),
    ]
    result = match(items, commands=["python scripts/migrate.py --dry-run"])
    assert result.command_similarity == 100 and result.repeats_failure_changed_since
    assert not result.repeats_failure and result.superseded == 1


def test_route_match_other_revision_without_known_changes_still_counts() -> None:
    items = [call("python scripts/migrate.py --dry-run", revision="abc1234", minute=None)]
    assert match(items, commands=["python scripts/migrate.py --dry-run"]).repeats_failure


def test_route_match_every_command_must_repeat() -> None:
    items = [call("pytest tests/test_parser.py")]
    result = match(items, commands=["pip install -e .", "pytest tests/test_parser.py"])
    assert result.command_similarity == 0 and not result.repeats_failure


def test_route_match_segment_before_the_one_that_failed_is_an_attempt() -> None:
    # The output names the failing segment (`make test`'s test runner), so `make build` ran fine.
    items = [
        call("make build && pytest tests/test_a.py", output="E   AssertionError\nTraceback (most recent call last)")
    ]
    assert match(items, commands=["make build"]).repeats_attempt


def test_route_match_unattributed_chain_failure_is_its_first_segment_that_can_fail() -> None:
    # Output that names no segment: the first one that can fail is blamed, and what followed it
    # never ran.
    items = [call("echo start && make build && make test", output="start\nbuilding")]
    assert match(items, commands=["make build"]).repeats_failure
    assert not match(items, commands=["make test"]).command_items


def test_route_match_silent_chain_failure_is_its_last_segment() -> None:
    # Nothing printed: the closing predicate failed silently; the steps before it ran fine.
    items = [call("cd web && test -f dist/index.html")]
    assert match(items, commands=["test -f web/dist/index.html"]).repeats_failure
    assert match([call("make build && make test")], commands=["make build"]).repeats_attempt
    # The agent's own framing of an output (Claude's `Exit code 2`) is not the program speaking.
    framed = [call("make build && make test", output="Exit code 2")]
    assert match(framed, commands=["make build"]).repeats_attempt


def test_route_match_no_commands_has_no_command_score() -> None:
    result = match([call("make test")], hypothesis="the cache key ignores the locale")
    assert result.command_similarity is None and not result.repeats_failure


def test_route_match_files_share_of_route_files_seen() -> None:
    result = match([edit("src/a.py"), call("pytest tests/test_b.py")], files=["src/a.py", "src/c.py"])
    assert result.file_similarity == 50


@pytest.mark.parametrize(
    ("hypothesis", "history", "tried"),
    [
        ("The cache key ignores the locale", "Hypothesis: locale is ignored by the cache key.", True),
        ("The cache key ignores the locale", "Maybe the cache key ignores the timezone.", False),
        ("The cache key ignores the locale", "Unrelated: the retry loop never backs off.", False),
    ],
)
def test_route_match_hypothesis_table(hypothesis: str, history: str, tried: bool) -> None:
    # One word of four changed scores about 77: above the calibrated default (75), below 85.
    route = RouteProposal(action_kind="shell", hypothesis=hypothesis)
    strict = THRESHOLDS.model_copy(update={"hypothesis_repeat": 85})
    result = route_match(route, prior_steps([prose(history)]), thresholds=strict, revision=CURRENT)
    assert bool(result.hypothesis_items) is tried


def test_route_match_hypothesis_ignores_tool_output() -> None:
    items = [call("pytest", output="the cache key ignores the locale")]
    assert match(items, hypothesis="the cache key ignores the locale").hypothesis_items == frozenset()


@pytest.mark.parametrize(
    ("blocker", "history", "evidenced"),
    [
        (
            "staging DB credentials missing from the vault",
            "Blocked: the vault lacks the staging database credentials",
            True,
        ),
        (
            "registry rejects the push with 403 forbidden",
            "$ docker push img\nexit 1\nerror: registry rejects push: 403 Forbidden",
            True,
        ),
        ("staging DB credentials missing from the vault", "Blocked: CI cannot reach the staging database", False),
    ],
)
def test_route_match_blocker_table(blocker: str, history: str, evidenced: bool) -> None:
    result = match([prose(history, "prior_failure")], blocker=blocker)
    assert bool(result.blocker_items) is evidenced


def test_route_match_vague_text_is_not_judged() -> None:
    assert match([prose("it fails")], hypothesis="it fails").hypothesis_similarity is None
