"""The synthetic five-agent histories: deterministic, in each agent's layout, and parsed exactly."""

import shutil
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.parsers import (
    default_roots,
    detect_source,
    iter_session_paths,
    parse_session_file,
)
from obelisk_session_evidence.providers.native.parsers.codex import read_thread_names
from obelisk_session_evidence.qualify.session_writers import (
    FAILING_COMMAND,
    SOURCES,
    FixtureManifest,
    write_native_histories,
)

# DSH results carry an error flag but no exit code; only Codex states a successful exit (0).
_FAILED_EXIT = {"claude": 1, "codex": 1, "kimi": 1, "pi": 1, "dsh": None}
_PASSED_EXIT = {"claude": None, "codex": 0, "kimi": None, "pi": None, "dsh": None}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_write_native_histories_same_seed_same_bytes(tmp_path: Path) -> None:
    write_native_histories(tmp_path, seed=11, scale=2)
    first = _tree(tmp_path)
    shutil.rmtree(tmp_path)
    write_native_histories(tmp_path, seed=11, scale=2)
    assert _tree(tmp_path) == first
    shutil.rmtree(tmp_path)
    write_native_histories(tmp_path, seed=12, scale=2)
    assert _tree(tmp_path) != first


@pytest.mark.parametrize("source", SOURCES)
def test_parse_session_file_generated_counts_equal_manifest(generated: FixtureManifest, source: str) -> None:
    for expected in generated.for_source(source):
        outcome = parse_session_file(expected.path, source)
        assert outcome.skipped_total == 0, dict(outcome.skipped_records)
        counts = {
            "decisions": sum(m.evidence_type == "decision" for m in outcome.messages),
            "meta_messages": sum(m.is_meta for m in outcome.messages),
            "tool_calls": len(outcome.tool_calls),
            "failures": sum(c.evidence_type == "prior_failure" for c in outcome.tool_calls),
            "summaries": len(outcome.summaries),
        }
        assert counts == {key: getattr(expected, key) for key in counts}
        session = outcome.sessions[0]
        assert (session.session_id, session.cwd) == (expected.session_id, expected.cwd)


@pytest.mark.parametrize("source", SOURCES)
def test_iter_session_paths_finds_exactly_the_generated_sessions(generated: FixtureManifest, source: str) -> None:
    found = list(iter_session_paths(default_roots(generated.home)[source], source))
    assert found == sorted(generated.paths(source))
    assert {detect_source(path) for path in found} == {source}


@pytest.mark.parametrize("source", SOURCES)
def test_write_native_histories_repeats_the_failing_command(generated: FixtureManifest, source: str) -> None:
    runs = []
    for expected in generated.for_source(source):
        for call in parse_session_file(expected.path, source).tool_calls:
            if call.command_text == FAILING_COMMAND:
                runs.append((expected.is_bait, expected.repo_root, call.failed))
                assert call.exit_code == (_FAILED_EXIT if call.failed else _PASSED_EXIT)[source]
    alpha, beta = str(generated.repo_root), str(generated.bait_repo_root)
    # rounds_per_session=2: sessions 0 and 1 fail twice each, session 2 passes twice; bait fails twice.
    expected = [(False, alpha, True)] * 4 + [(False, alpha, False)] * 2 + [(True, beta, True)] * 2
    assert sorted(runs) == sorted(expected)


def test_write_native_histories_uses_a_worktree_and_a_second_repository(generated: FixtureManifest) -> None:
    cwds = {s.cwd for s in generated.sessions}
    assert cwds == {str(generated.repo_root), str(generated.worktree_root), str(generated.bait_repo_root)}
    assert (generated.worktree_root / ".git").read_text().startswith("gitdir: ")
    assert (generated.repo_root / ".git" / "HEAD").is_file()
    assert sum(s.is_bait for s in generated.sessions) == len(SOURCES)


def test_write_native_histories_scales_sessions_and_rounds(tmp_path: Path) -> None:
    manifest = write_native_histories(tmp_path, sessions_per_source=3, scale=4, rounds_per_session=5)
    assert len(manifest.for_source("pi")) == 3 * 4 + 4
    small = write_native_histories(tmp_path / "small", rounds_per_session=1)
    assert manifest.totals("claude")["decisions"] > 5 * small.totals("claude")["decisions"]


def test_write_native_histories_codex_titles_live_in_the_session_index(generated: FixtureManifest) -> None:
    titles = read_thread_names(generated.home / ".codex" / "session_index.jsonl")
    assert set(titles) == {s.session_id for s in generated.for_source("codex")}
    assert set(titles.values()) == {"Investigate failing auth test", "Fix expired-token login"}


def test_parse_session_file_generated_codex_folds_the_poll(generated: FixtureManifest) -> None:
    outcome = parse_session_file(generated.for_source("codex")[0].path, "codex")
    names = [c.name for c in outcome.tool_calls]
    assert "write_stdin" not in names and names.count("exec_command") >= 3
    git = outcome.sessions[0]
    assert git.git_branch == "main" and git.git_commit and git.repository_url.endswith("/alpha.git")


def test_parse_session_file_generated_dsh_picks_the_v1_file(generated: FixtureManifest) -> None:
    first = generated.for_source("dsh")[0].path
    assert first.name == "session.v1.jsonl.zstd" and (first.parent / "session.jsonl.zstd").is_file()
    assert parse_session_file(first.parent, "dsh").messages == parse_session_file(first, "dsh").messages
