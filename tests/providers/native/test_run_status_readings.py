"""A CI status reading (`gh pr checks`, `gh run view`) exits non-zero while the watched run is
unfinished: the run has no outcome yet, and the call did not fail (issue 25 item 5). A failed check
is the run's failure, and stands as one.

Shaped on jdx/mise's Codex sessions: `gh pr checks 10705` polled while checks were pending, and
`gh run view … --log` asked before the run had finished."""

from pathlib import Path

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from tests.providers.native.index.older_index import before_migration, evidence_types, stored_as_failures
from tests.providers.native.index.transcripts import ClaudeTranscript

CHECKS = "gh pr checks 10705"
PENDING_CHECKS = "Exit code 8\nlint\tpending\t0\thttps://github.com/jdx/mise/actions/runs/28556222127/job/1\t\n"
FAILING_CHECKS = "Exit code 1\nlint\tfail\t7m20s\thttps://github.com/jdx/mise/actions/runs/28556222127/job/1\t\n"
NO_PULL_REQUEST = 'Exit code 1\nno pull requests found for branch "main"'


def _polled(claude: Path) -> None:
    transcript = ClaudeTranscript(claude, "s-checks", "/work/alpha")
    transcript.call("Bash", {"command": CHECKS}, PENDING_CHECKS, is_error=True)
    transcript.call("Bash", {"command": "gh pr checks 10705 --watch"}, FAILING_CHECKS, is_error=True)
    transcript.call("Bash", {"command": "gh pr checks 1"}, NO_PULL_REQUEST, is_error=True)
    transcript.write()


def test_checks_of_a_pending_run_are_no_failure_of_the_call(tmp_path):
    claude = tmp_path / "claude"
    _polled(claude)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    assert evidence_types(path) == [
        (CHECKS, "tool_outcome"),
        ("gh pr checks 10705 --watch", "prior_failure"),
        ("gh pr checks 1", "prior_failure"),
    ]


def test_an_index_that_stored_such_readings_as_failures_reads_their_files_again(tmp_path):
    claude = tmp_path / "claude"
    _polled(claude)
    untouched = ClaudeTranscript(claude, "s-other", "/work/alpha")
    untouched.call("Bash", {"command": "cargo test"}, "Exit code 101\ntest a::b ... FAILED", is_error=True)
    untouched.write()
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    stored_as_failures(path, CHECKS)  # as the release before this rule stored it
    before_migration(path, "0012_run_status_readings", dropped_columns=())
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert (CHECKS, "tool_outcome") in evidence_types(path)
