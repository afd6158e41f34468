"""Calls that did not fail (issue 25 item 5): one the agent skipped for a queued user message never
ran, and a lookup that found no such name answered.

Shaped on preloopdev/preloop's Oh My Pi sessions, whose skipped calls carry an error flag and
`Skipped due to queued user message` as their whole result, and on jdx/mise's `command -v shellcheck`."""

from pathlib import Path

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from tests.providers.native.index.older_index import before_migration, evidence_types, stored_as_failures
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.providers.test_failure_causes import SKIPPED_FOR_USER

SKIPPED = "git show e901fa0 --stat"
LOOKUP = "command -v shellcheck"


def _session(claude: Path) -> None:
    transcript = ClaudeTranscript(claude, "s-skipped", "/work/alpha")
    transcript.call("Bash", {"command": SKIPPED}, SKIPPED_FOR_USER, is_error=True)
    transcript.call("Bash", {"command": LOOKUP}, "Exit code 1", is_error=True)
    transcript.call("Bash", {"command": "cargo test"}, "Exit code 101\ntest a::b ... FAILED", is_error=True)
    transcript.write()


def test_a_skipped_call_and_a_lookup_that_found_nothing_are_no_failures(tmp_path):
    claude = tmp_path / "claude"
    _session(claude)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    assert evidence_types(path) == [
        (SKIPPED, "tool_outcome"),
        (LOOKUP, "tool_outcome"),
        ("cargo test", "prior_failure"),
    ]


def test_an_index_that_stored_such_calls_as_failures_reads_their_files_again(tmp_path):
    claude = tmp_path / "claude"
    _session(claude)
    untouched = ClaudeTranscript(claude, "s-other", "/work/alpha")
    untouched.call("Bash", {"command": "cargo build"}, "Exit code 101\nerror[E0308]: mismatched types", is_error=True)
    untouched.write()
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    stored_as_failures(path, SKIPPED, LOOKUP)  # as the release before these rules stored them
    before_migration(path, "0014_calls_that_did_not_fail")
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    stored = dict(evidence_types(path))
    assert (stored[SKIPPED], stored[LOOKUP]) == ("tool_outcome", "tool_outcome")
