"""The hand-labelled real-transcript set: it loads, covers the issue's categories, and is well-formed."""

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import get_args

import pytest

from obelisk_session_evidence.contracts.config import SourceKind
from obelisk_session_evidence.contracts.decision import Verdict
from obelisk_session_evidence.qualify.real import cut_at_time, cut_before_line, write_history
from obelisk_session_evidence.qualify.real_cases import (
    CASES_FILE,
    CATEGORIES,
    REQUIRED_CATEGORIES,
    corpus_root,
    load_real_cases,
    read_line,
    repository_groups,
)

pytestmark = pytest.mark.skipif(not corpus_root().is_dir(), reason="the real corpus is not on this machine")
VERDICTS = set(get_args(Verdict))


@pytest.fixture(scope="module")
def cases():
    return load_real_cases()


def test_at_least_120_cases_each_with_a_why_and_a_unique_id(cases) -> None:
    assert len(cases) >= 120
    assert len({case.case_id for case in cases}) == len(cases)
    assert all(case.why.strip() and "\n" not in case.why for case in cases)


def test_every_category_is_covered_and_known(cases) -> None:
    counts = Counter(category for case in cases for category in case.categories)
    assert set(counts) <= set(CATEGORIES)
    missing = [category for category in REQUIRED_CATEGORIES if counts[category] == 0]
    assert missing == []
    # Both outcomes of the judgement are represented, and every trap expects no repeat.
    assert sum(case.repeated_route for case in cases) >= 40
    assert sum(not case.repeated_route for case in cases) >= 40
    assert all(not case.repeated_route for case in cases if case.trap)


def test_labels_are_legal_and_removal_matches_the_verdict(cases) -> None:
    for case in cases:
        assert case.expected_verdict in VERDICTS
        assert (case.removes == "route") == case.repeated_route, case.case_id
        outcomes = set(case.expected_outcomes)
        assert not (case.repeated_route and outcomes & {"new_probe_family", "new_runnable_successor"})


def test_every_source_file_has_its_provenance_recorded() -> None:
    for group in repository_groups().values():
        assert all(group.origin[key] for key in ("repository", "upstream_path", "commit", "licence"))
        for entry in group.files:
            assert (corpus_root() / entry.path).is_file(), entry.path
    text = CASES_FILE.read_text(encoding="utf-8")
    for reserved in ("claude-code-log", "session-share"):
        assert reserved not in text


def test_each_case_points_at_a_real_record_and_a_well_formed_proposal(cases) -> None:
    for case in cases:
        record = read_line(corpus_root() / case.at_file, case.at_line)
        assert isinstance(record, dict) and case.cutoff, case.case_id
        assert case.at_file in {entry.path for entry in case.group.files}
        route = case.document["proposed"]["route"]
        assert route["commands"] and all(command.strip() for command in route["commands"])
        assert set(case.other_agent) <= {entry.path for entry in case.group.files}
        assert case.group.name not in case.other_repo_groups
        if case.situation is not None:
            assert case.situation.proposed.route.commands == route["commands"]


def test_history_stops_before_the_replan(cases, tmp_path: Path) -> None:
    """The Replan's own record and everything stamped after it never reach the history."""
    for case in cases[::7]:
        home, other = tmp_path / case.case_id / "home", tmp_path / case.case_id / "other"
        written = write_history(case, home, other)
        assert written, case.case_id
        assert cut_before_line(corpus_root() / case.at_file, case.at_line).count(b"\n") == case.at_line - 1
        whole = {Path(e.path).name for name in case.other_repo_groups for e in repository_groups()[name].files}
        cutoff = _instant(case.cutoff)
        for path in written:
            if path.name in whole or path.name == Path(case.at_file).name:
                continue  # other repositories' sessions are whole; the Replan's own file is cut by line
            stamps = [json.loads(line).get("timestamp") for line in path.read_bytes().splitlines()]
            assert all(_instant(s) < cutoff for s in stamps if isinstance(s, str)), (case.case_id, path.name)


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_cut_at_time_keeps_only_earlier_records(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"timestamp": "2026-01-01T00:00:00Z"}\n{"no": "stamp"}\n{"timestamp": "2026-01-02T00:00:00Z"}\n'
        '{"timestamp": "2026-01-01T12:00:00Z"}\n'
    )
    assert cut_at_time(session, "2026-01-02T00:00:00Z").count(b"\n") == 2
    assert cut_before_line(session, 2) == b'{"timestamp": "2026-01-01T00:00:00Z"}\n'


def _failed_commands(paths: list[Path], source: SourceKind) -> list[str]:
    from obelisk_session_evidence.providers.native.parsers import parse_session_file

    return [
        call.command_text or "" for path in paths for call in parse_session_file(path, source).tool_calls if call.failed
    ]


def test_every_other_agent_trap_hides_a_real_failure_of_the_proposed_program(cases, tmp_path: Path) -> None:
    """A trap is only a trap when the other agent really failed with it and this agent never did."""
    traps = [case for case in cases if "trap_other_agent" in case.categories]
    assert len(traps) >= 5
    for case in traps:
        home, other = tmp_path / case.case_id / "home", tmp_path / case.case_id / "other"
        written = write_history(case, home, other)
        proposed = case.document["proposed"]["route"]["commands"][0]
        program = proposed.split()[0] if not proposed.startswith("cd ") else proposed.split("&&")[1].split()[0]
        theirs = _failed_commands([p for p in written if other in p.parents], case.group.source)
        mine = _failed_commands([p for p in written if home in p.parents], case.group.source)
        assert any(program in command for command in theirs), case.case_id
        assert proposed not in mine, case.case_id


def test_every_other_repository_trap_hides_a_real_failure_outside_the_repository(cases, tmp_path: Path) -> None:
    from obelisk_session_evidence.providers.native.index.repository import under
    from obelisk_session_evidence.providers.native.parsers import parse_session_file

    traps = [case for case in cases if "trap_other_repo" in case.categories]
    assert len(traps) >= 5
    for case in traps:
        written = write_history(case, tmp_path / case.case_id / "home", tmp_path / case.case_id / "other")
        proposed = case.document["proposed"]["route"]["commands"][0]
        program = proposed.split()[0]
        inside, outside = [], []
        for path in written:
            source: SourceKind = "claude" if ".claude" in path.parts else "codex" if ".codex" in path.parts else "pi"
            outcome = parse_session_file(path, source)
            cwd = next((s.cwd for s in outcome.sessions if s.cwd), "")
            mine = any(under(cwd, root) for root in case.group.repo_roots)
            (inside if mine else outside).extend(c.command_text or "" for c in outcome.tool_calls if c.failed)
        assert any(program in command for command in outside), case.case_id
        assert proposed not in inside, case.case_id
