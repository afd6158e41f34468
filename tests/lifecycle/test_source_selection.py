"""`enable` binds the session sources whose folders exist; a folder that never existed is not
used, one that disappears makes the index incomplete (and `status` says which and why); a bare
`index refresh` reads the enabled scopes' folders."""

import json
from pathlib import Path

from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import SOURCE_KINDS
from obelisk_session_evidence.lifecycle.enablement import enable
from obelisk_session_evidence.providers.native.index.scope import enablement_roots
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request

SCOPE = (
    "--surface",
    "replan-history",
    "--agent-id",
    "agent-fixture",
    "--project-id",
    "project-fixture",
    "--repository-id",
    "repo-fixture",
    "--historical-repo-root",
    "/nonexistent/fixture-repo",
)


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


def _make_folder(source):
    folder = default_roots(Path.home())[source]
    folder.mkdir(parents=True)
    return folder


def test_enable_without_source_binds_only_the_existing_folders_and_says_which_it_skipped():
    _make_folder("codex")
    outcome = enable(enable_request(), paths=state_paths())
    assert (outcome.enablement.sources, outcome.enablement.sources_found) == (["codex"], ["codex"])
    missing = default_roots(Path.home())
    assert [(s.source, s.folder, s.reason_code) for s in outcome.skipped_sources] == [
        (source, str(missing[source]), "folder_missing") for source in SOURCE_KINDS if source != "codex"
    ]


def test_with_no_folder_at_all_every_source_is_bound_and_none_is_read_until_its_folder_exists():
    outcome = enable(enable_request(), paths=state_paths())
    assert (outcome.enablement.sources, outcome.enablement.sources_found) == (list(SOURCE_KINDS), [])
    assert outcome.skipped_sources == []
    assert enablement_roots(outcome.enablement) == {}
    appeared = _make_folder("pi")
    assert enablement_roots(outcome.enablement) == {"pi": [appeared]}


def test_a_folder_that_never_existed_leaves_the_scope_healthy_and_one_that_disappears_makes_it_incomplete():
    claude = _make_folder("claude")
    enabled = _invoke("enable", *SCOPE, "--source", "claude", "--source", "kimi", "--format", "json")
    assert enabled.exit_code == 0, enabled.output
    assert json.loads(enabled.stdout)["enablement"]["sources_found"] == ["claude"]
    refreshed = _invoke("index", "refresh", "--format", "json")
    assert (refreshed.exit_code, json.loads(refreshed.stdout)["freshness"]) == (0, "fresh")
    healthy = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    assert (healthy.exit_code, json.loads(healthy.stdout)["reason_code"]) == (0, "healthy")

    claude.rmdir()
    assert _invoke("index", "refresh", "--format", "json").exit_code == 2
    report = json.loads(_invoke("status", "--project-id", "project-fixture", "--format", "json").stdout)
    assert report["reason_code"] == "index_incomplete"
    (index,) = [scope["index"] for scope in report["scopes"]]
    assert [(r["source"], r["path"], r["state"]) for r in index["incomplete_roots"]] == [
        ("claude", str(claude), "missing")
    ]
    text = _invoke("status", "--project-id", "project-fixture")
    assert f"next: the claude session folder {claude} is missing" in text.stdout
    assert "failed to parse" not in text.stdout


def test_a_bare_index_refresh_reads_the_enabled_scopes_folders_only(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    enabled = _invoke("enable", *SCOPE, "--source", "codex", "--source-root", f"codex={sessions}")
    assert enabled.exit_code == 0, enabled.output
    report = json.loads(_invoke("index", "refresh", "--format", "json").stdout)
    assert (report["roots"], report["freshness"]) == (1, "fresh")
