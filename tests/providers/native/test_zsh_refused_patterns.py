"""zsh refuses a command whose unquoted pattern matched no file and runs nothing of it: the call is
stored as the failure it was (a search's exit 1 is no answer, a filter's 0 after it no success), and
an index a release before filled is read again. Outputs as jdx/mise's and Claude Code's read; the
paths are invented."""

from pathlib import Path

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from tests.providers.native.index.older_index import before_migration, evidence_types
from tests.providers.native.index.transcripts import ClaudeTranscript

LISTING = "ls target/deps/app-* 2>/dev/null | head"
SEARCH = "rg -n name plugins/*/package.json"


def _refused_calls(root: Path) -> None:
    transcript = ClaudeTranscript(root, "s-refused", "/work/alpha")
    transcript.call("Bash", {"command": LISTING}, "(eval):1: no matches found: target/deps/app-*")
    refused = "Exit code 1\nzsh:1: no matches found: plugins/*/package.json"
    transcript.call("Bash", {"command": SEARCH}, refused, is_error=True)
    transcript.call("Bash", {"command": "rg -n name src"}, "Exit code 1", is_error=True)
    transcript.write()


def test_a_command_zsh_refused_is_stored_as_a_failure(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    _refused_calls(claude)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    assert evidence_types(path) == [
        (LISTING, "prior_failure"),
        (SEARCH, "prior_failure"),
        ("rg -n name src", "tool_outcome"),  # the search ran and found nothing: an answer
    ]


def test_an_index_that_stored_refused_commands_as_answers_reads_them_again(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    _refused_calls(claude)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    read = evidence_types(path)
    undo = ("UPDATE entries SET evidence_type = 'tool_outcome'",)  # as the release before stored them
    before_migration(path, "0022_zsh_refused_patterns", undo=undo)
    assert evidence_types(path) != read
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert evidence_types(path) == read
