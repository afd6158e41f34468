"""The adapter over the stand-in and the real corpus: tool calls, exit codes, scope, prior calls."""

import json
import subprocess
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from obelisk_session_evidence.contracts.errors import ScopeViolation, UnsupportedOption
from obelisk_session_evidence.providers.obelisk.items import repository_cwd
from obelisk_session_evidence.providers.obelisk.plan import query_plan
from obelisk_session_evidence.providers.obelisk.template import CALLS_SQL, CODE, query_script
from tests.providers.obelisk.conftest import (
    CODEX_ROOT,
    SPOTTER_ROOT,
    enablement_for,
    provider_for,
    request_for,
)

BUILD = "node assets/build.js"
ORPHAN_ONLY = "tree /home/USER/projects/spotter-worktrees/spotter-0rt/lib"
"""A command that only the orphan subagent (6c2214d7…, no main session file) ran."""


def _spotter(stand_in: StandIn, tmp_path: Path, **kwargs):
    enablement = enablement_for(stand_in.home, roots=[SPOTTER_ROOT], sources=["claude"])
    return provider_for(stand_in, enablement, tmp_path / "work", **kwargs)


def test_a_claude_failure_comes_back_as_a_prior_call_and_a_prior_failure(built: StandIn, tmp_path: Path) -> None:
    answer = _spotter(built, tmp_path).search(request_for(BUILD))
    failures = [item for item in answer.result.items if item.evidence_type == "prior_failure"]
    assert failures and failures[0].snippet.startswith(f"$ {BUILD} 2>&1\nexit 1\n")
    call = next(call for call in answer.prior_calls if call.command == f"{BUILD} 2>&1")
    assert (call.tool_name, call.exit_code, call.is_error) == ("Bash", 1, True)
    assert call.cwd == f"{SPOTTER_ROOT}/spotter-fum"
    assert call.repository_cwd == ""  # the session's checkout: a worktree's root
    assert 'Could not resolve "js/app.js"' in call.output_excerpt
    assert call.observed_at is not None and call.observed_at.tzinfo is not None
    assert answer.result.freshness == "fresh"
    assert answer.result.index_revision.startswith("obelisk-index:sha256:")


def test_a_codex_failure_is_read_from_its_exit_text(built: StandIn, tmp_path: Path) -> None:
    """Codex results have is_error = 0; `Process exited with code 2` is the only failure sign. The
    `rg` was still running when it answered: the `write_stdin` that finished it gives its exit and
    the rest of its output, as the native Codex parser folds them."""
    enablement = enablement_for(built.home, roots=[CODEX_ROOT], sources=["codex"])
    provider = provider_for(built, enablement, tmp_path / "work")
    answer = provider.search(request_for("node_modules/opencode-ai"))
    call = next(call for call in answer.prior_calls if call.exit_code == 2 and call.tool_name == "exec_command")
    assert call.is_error is False and call.command.startswith("rg -n")
    assert "Process running with session ID" in call.output_excerpt
    assert "Process exited with code 2" in call.output_excerpt
    assert call.cwd == CODEX_ROOT and call.repository_cwd == ""
    assert any(item.evidence_type == "prior_failure" for item in answer.result.items)


def test_full_commands_keep_their_newlines(built: StandIn, tmp_path: Path) -> None:
    answer = _spotter(built, tmp_path).search(request_for("git commit"))
    multi_line = [call for call in answer.prior_calls if "\n" in call.command]
    assert multi_line, "heredoc commits are multi-line in the corpus"
    assert all(len(call.command) <= 16 * 1024 for call in answer.prior_calls)


def test_decisions_come_from_search_and_only_when_asked(built: StandIn, tmp_path: Path) -> None:
    provider = _spotter(built, tmp_path)
    with_text = provider.search(request_for("Phoenix", types=["decision"]))
    assert with_text.result.items and {i.evidence_type for i in with_text.result.items} == {"decision"}
    assert all("phoenix" in item.snippet.lower() for item in with_text.result.items)
    calls_only = provider.search(request_for("Phoenix", types=["prior_failure", "tool_outcome"]))
    assert {i.evidence_type for i in calls_only.result.items} <= {"prior_failure", "tool_outcome"}


def test_other_repositories_and_sources_stay_out(built: StandIn, tmp_path: Path) -> None:
    enablement = enablement_for(built.home, roots=["/Users/user/repo"], sources=["claude"])
    answer = provider_for(built, enablement, tmp_path / "work").search(request_for(BUILD))
    assert answer.prior_calls == [] and answer.result.items == []
    codex_only = enablement_for(built.home, roots=[SPOTTER_ROOT], sources=["codex"])
    answer = provider_for(built, codex_only, tmp_path / "work").search(request_for(BUILD))
    assert answer.prior_calls == []


def test_orphan_tool_calls_are_out_of_scope(built: StandIn, tmp_path: Path) -> None:
    """The orphan's call is in Obelisk's tool_calls, but it has no session: not returned."""
    script = tmp_path / "facts.js"
    script.write_text(
        "return sql("
        + json.dumps("SELECT session_id FROM tool_calls WHERE instr(json_extract(input_json, '$.command'), ?) > 0")
        + ", "
        + json.dumps(ORPHAN_ONLY)
        + ");"
    )
    found = subprocess.run([str(built.executable), "--query", str(script)], capture_output=True, text=True)
    assert [row["session_id"][:8] for row in json.loads(found.stdout)] == ["6c2214d7"]
    answer = _spotter(built, tmp_path).search(request_for(ORPHAN_ONLY))
    assert answer.prior_calls == [] and answer.result.items == []


@pytest.mark.parametrize("mode", ["orphan_row", "foreign_row"])
def test_one_row_out_of_scope_rejects_the_answer(built: StandIn, tmp_path: Path, mode: str) -> None:
    built.control(mode=mode)
    try:
        with pytest.raises(ScopeViolation):
            _spotter(built, tmp_path).search(request_for("Phoenix"))
    finally:
        built.control(mode="ok")


def test_every_value_is_a_json_literal_in_the_data_block(built: StandIn, tmp_path: Path) -> None:
    hostile = 'x"); process.exit(1); ("\u2028`${1}`\'; DROP TABLE messages; --'
    provider = _spotter(built, tmp_path)
    answer = provider.search(request_for(hostile))
    assert answer.prior_calls == []
    plan = query_plan(request_for(hostile), enablement=provider._enablement, options={})
    plan_script = query_script(plan.template_values)
    code = plan_script.split("// -- code --\n", 1)[1]
    assert code == CODE and hostile not in plan_script
    assert "\u2028" not in plan_script and CALLS_SQL.count("?") > 0


def test_unknown_options_are_refused_before_any_process(built: StandIn, tmp_path: Path) -> None:
    before = len(built.reports())
    with pytest.raises(UnsupportedOption):
        _spotter(built, tmp_path, options={"repository": "x"}).search(request_for(BUILD))
    assert len(built.reports()) == before


def test_one_query_per_decision_and_the_probe_is_cached(built: StandIn, tmp_path: Path) -> None:
    provider = _spotter(built, tmp_path, probe_cache_dir=tmp_path / "cache")
    before = len(built.reports())
    provider.search(request_for(BUILD))
    provider.search(request_for(BUILD))
    verbs = [entry["argv"][0] for entry in built.reports()[before:] if entry.get("argv")]
    assert verbs.count("--query") == 2
    assert verbs.count("--version") == 1  # the second lookup reuses the probe


def test_repository_cwd() -> None:
    roots = (SPOTTER_ROOT,)
    worktree = f"{SPOTTER_ROOT}/spotter-fum"
    assert repository_cwd(f"{worktree}/assets", worktree, roots) == "assets"
    assert repository_cwd(worktree, worktree, roots) == ""
    assert repository_cwd(f"{SPOTTER_ROOT}/x", None, roots) == "x"
    assert repository_cwd("/tmp", worktree, roots) is None
    assert repository_cwd(None, worktree, roots) is None


@pytest.mark.parametrize(
    ("output", "expected_cut"),
    [("short", False), ("a" * 1500, False), ("b" * 2048, False), ("c" * 1024 + "d" * 9000, True)],
)
def test_output_excerpts_are_whole_or_head_and_tail(output: str, expected_cut: bool) -> None:
    from obelisk_session_evidence.providers.obelisk.items import _excerpt

    head = output[:1024]
    tail = output[-1024:] if len(output) > 1024 else None
    excerpt, cut = _excerpt(head, tail, len(output))
    assert cut is expected_cut and len(excerpt) <= 2048
    if not cut:
        assert excerpt == output
    else:
        assert excerpt.startswith("c" * 100) and excerpt.endswith("d" * 100) and "…" in excerpt


@pytest.mark.parametrize(
    "proposed",
    [f"{BUILD} 2>&1 | tail -20", f"cd {SPOTTER_ROOT}/spotter-fum && {BUILD}", f"{BUILD} --minify"],
)
def test_a_near_repeat_finds_the_prior_failure(built: StandIn, tmp_path: Path, proposed: str) -> None:
    """Not a substring of the prior command: found by its program (`node`) and subject."""
    answer = _spotter(built, tmp_path).search(request_for(proposed))
    assert any(c.command == f"{BUILD} 2>&1" and c.exit_code == 1 for c in answer.prior_calls)


def test_a_changed_commit_message_finds_the_prior_commits(built: StandIn, tmp_path: Path) -> None:
    answer = _spotter(built, tmp_path).search(request_for('git commit -m "a message nobody wrote"'))
    commits = [call for call in answer.prior_calls if call.command.startswith("git commit")]
    assert len(commits) >= 2


def test_the_edits_after_a_matched_failure_come_with_it(built: StandIn, tmp_path: Path) -> None:
    """compare-route's change rules need what changed after the failure: the edits come as prior
    calls (never as evidence items)."""
    answer = _spotter(built, tmp_path).search(request_for(f"{BUILD} 2>&1"))
    failure = next(c for c in answer.prior_calls if c.command == f"{BUILD} 2>&1")
    later_edits = [
        c
        for c in answer.prior_calls
        if c.tool_name in ("Edit", "Write", "MultiEdit") and c.observed_at and c.observed_at > failure.observed_at
    ]
    assert later_edits and all(c.files and c.files[0].startswith("/") for c in later_edits)
    assert len(answer.result.items) <= 12


def test_the_statement_is_fixed_and_every_value_a_binding(built: StandIn, tmp_path: Path) -> None:
    provider = _spotter(built, tmp_path)
    before = len(built.scripts())
    provider.search(request_for(f"{BUILD} 2>&1", "assets/build.js", "Could not resolve js"))
    provider.search(request_for("git push origin main"))
    first, second = built.scripts()[before:]
    assert first["consts"]["CALLS_SQL"] == second["consts"]["CALLS_SQL"] == CALLS_SQL
    lanes = json.loads(first["consts"]["CALLS_ARGS"][4])
    assert lanes == [
        {"kind": "command", "program": "node", "subjects": ["assets/build.js"], "text": f"{BUILD} 2>&1"},
        {"kind": "file", "words": ["assets/build.js"], "text": "assets/build.js"},
        {"kind": "text", "words": ["resolve", "could", "not", "js"], "text": "could not resolve js"},
    ]
    assert not any(word in CALLS_SQL for word in ("assets", "resolve", "origin"))


def test_a_patch_names_the_files_it_changes(built: StandIn, tmp_path: Path) -> None:
    """Codex `apply_patch` has no file_path in Obelisk's index: its targets come from the patch
    text, as the native provider reads them (compare-route's change rules need them)."""
    enablement = enablement_for(built.home, roots=[CODEX_ROOT], sources=["codex"])
    provider = provider_for(built, enablement, tmp_path / "work")
    answer = provider.search(request_for("src/agents/plugins/codemie-code.plugin.ts"))
    patches = [call for call in answer.prior_calls if call.tool_name == "apply_patch"]
    assert any("src/agents/plugins/codemie-code.plugin.ts" in call.files for call in patches)
    assert all(call.command == " ".join(call.files) for call in patches)
