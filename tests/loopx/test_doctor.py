"""The extension's doctor: the checks of `status`, over every enabled project."""

from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.loopx.doctor import doctor_report, installed_loopx, loopx_supported
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.providers.native.index.transcripts import ClaudeTranscript


def _enable(tmp_path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "claude").mkdir()
    result = CliRunner().invoke(
        main,
        [
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            "agent-a",
            "--project-id",
            "project-a",
            "--repository-id",
            "repo-a",
            "--repo-root",
            str(tmp_path / "repo"),
            "--source",
            "claude",
            "--source-root",
            f"claude={tmp_path / 'claude'}",
        ],
    )
    assert result.exit_code == 0, result.stderr


def test_doctor_follows_status_from_absent_to_ready(tmp_path):
    paths = state_paths()
    assert doctor_report(paths) == (False, "not_enabled")
    _enable(tmp_path)
    assert doctor_report(paths) == (False, "index_absent")
    ClaudeTranscript(tmp_path / "claude", "s1", str(tmp_path / "repo")).user("hi").write()
    assert CliRunner().invoke(main, ["index", "refresh", "--root", f"claude={tmp_path / 'claude'}"]).exit_code == 0
    assert doctor_report(paths) == (True, "healthy")
    # A session written since the refresh: the index is behind, and lookups still answer.
    ClaudeTranscript(tmp_path / "claude", "s2", str(tmp_path / "repo")).user("again").write()
    assert doctor_report(paths)[0] is True
    write_private(paths.config_file, b"[]")
    assert doctor_report(paths) == (False, "config_invalid")


def test_doctor_checks_the_loopx_beside_it_against_the_supported_range(tmp_path):
    """Issue 30 §4: the installed (pinned) LoopX passes; none, or one outside the range, does not."""
    paths = state_paths()
    assert installed_loopx() == "2.1.1" and loopx_supported("2.1.1")
    assert doctor_report(paths, loopx_version=lambda: None) == (False, "loopx_not_installed")
    for unsupported in ("2.1.0", "2.2.0", "3.0", "dev"):
        assert doctor_report(paths, loopx_version=lambda v=unsupported: v) == (False, "loopx_version_unsupported")
    assert doctor_report(paths, loopx_version=lambda: "2.1.9") == (False, "not_enabled")  # in range: on to status
