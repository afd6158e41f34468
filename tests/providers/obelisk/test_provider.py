"""ObeliskProvider end to end against the stand-in: answers, typed failures, scope, privacy."""

import json
import logging
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from contracts.errors import (
    EvidenceError,
    ProviderFailed,
    ProviderOutputMalformed,
    ProviderOutputTooLarge,
    ProviderTimeout,
    ProviderUnavailable,
    ScopeViolation,
    UnsupportedOption,
)
from contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from contracts.stage_values import Admitted
from fixtures.obelisk_stand_in import CANARY, StandIn, install_stand_in, stand_in_data
from providers.base import EvidenceProvider
from providers.obelisk import ObeliskProvider
from stages.retrieve import retrieve

TIMEOUT_S = 2.0
WINDOW = {"after": "2026-08-01T09:01:30+00:00", "before": "2026-08-30T00:00:00+00:00"}

FAILURES = [
    pytest.param({"mode": "hang"}, {}, ProviderTimeout, id="hang"),
    pytest.param({"mode": "hang_with_child"}, {}, ProviderTimeout, id="hang-with-child"),
    pytest.param({"mode": "orphan_holds_pipe"}, {}, ProviderTimeout, id="orphan-holds-stdout"),
    pytest.param({"mode": "slow", "delay_s": 30}, {}, ProviderTimeout, id="slow"),
    pytest.param({"mode": "huge"}, {}, ProviderOutputTooLarge, id="100MB"),
    pytest.param({"mode": "malformed"}, {}, ProviderOutputMalformed, id="malformed"),
    pytest.param({"mode": "stray_log"}, {}, ProviderOutputMalformed, id="stray-log-line"),
    pytest.param({"mode": "trailing_log"}, {}, ProviderOutputMalformed, id="trailing-log-line"),
    pytest.param({"mode": "error"}, {}, ProviderFailed, id="error-envelope"),
    pytest.param({"mode": "crash"}, {}, ProviderFailed, id="crash"),
    pytest.param({"mode": "signal"}, {}, ProviderFailed, id="killed"),
    pytest.param({"mode": "leak_source"}, {}, ScopeViolation, id="row-from-another-source"),
    pytest.param({"mode": "leak_repo"}, {}, ScopeViolation, id="row-from-another-repository"),
    pytest.param(
        {"mode": "leak_session_source"}, {}, ScopeViolation, id="row-session-of-another-source"
    ),
    pytest.param({"mode": "leak_window"}, WINDOW, ScopeViolation, id="row-outside-window"),
    pytest.param({"missing_helpers": ["sql"]}, {}, ProviderUnavailable, id="no-sql-helper"),
    pytest.param({"node": "20.11.1"}, {}, ProviderUnavailable, id="sandbox-node-too-old"),
    pytest.param({"version_mode": "hang"}, {}, ProviderUnavailable, id="version-probe-hangs"),
    pytest.param({"version_mode": "garbage"}, {}, ProviderUnavailable, id="version-probe-garbage"),
]


def _search_timed(
    provider: ObeliskProvider, request: HistoricalEvidenceRequest
) -> tuple[Any, float]:
    started = time.monotonic()
    try:
        outcome: Any = provider.search(request).result
    except EvidenceError as error:
        outcome = error
    return outcome, time.monotonic() - started


def _chain(error: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _public_text(result: Any) -> str:
    """Everything in a result except the private snippets."""
    document = result.model_dump(mode="json")
    for item in document["items"]:
        item.pop("snippet")
    return repr(document)


def test_obelisk_provider_implements_the_protocol(make_provider) -> None:
    provider = make_provider()
    assert isinstance(provider, EvidenceProvider)
    assert provider.provider_version == "0.1.0 obelisk-cli/unprobed template/1"


def test_search_returns_in_scope_items(make_provider, make_request, stand_in: StandIn) -> None:
    provider = make_provider()
    result = provider.search(make_request()).result
    assert (
        provider.provider_version == result.provider_version == "0.1.0 obelisk-cli/0.2.3 template/1"
    )
    assert result.freshness == "fresh"
    assert result.index_revision.startswith("obelisk-index:sha256:")
    assert {item.evidence_type for item in result.items} == {
        "decision",
        "prior_failure",
        "tool_outcome",
        "summary",
        "file_history",
    }
    snippets = "\n".join(item.snippet for item in result.items)
    assert (
        "Other repository" not in snippets
        and "Kimi" not in snippets
        and "system-reminder" not in snippets
    )
    assert "$ pytest -x tests/unit\nexit 1" in snippets
    assert (result.truncated, result.omitted_count) == (False, 0)
    (query,) = stand_in.queries()
    assert query["script_mode"] == "0o600"
    assert not Path(query["script_path"]).parent.exists()


def test_search_probes_once_per_process(make_provider, make_request, stand_in: StandIn) -> None:
    make_provider().search(make_request())
    make_provider().search(make_request())
    assert [entry["verb"] for entry in stand_in.reports()] == [
        "--version",
        "usage",
        "--query",
        "--query",
    ]


def test_search_finds_obelisk_on_path_through_node(
    tmp_path: Path, repo_root: str, enablement, make_request, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = install_stand_in(tmp_path / "npm", data=stand_in_data(repo_root), node="22.14.0")
    monkeypatch.setenv("PATH", f"{stand_in.bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = ObeliskProvider(enablement).search(make_request()).result
    assert result.items


@pytest.mark.parametrize(("control", "options", "error"), FAILURES)
def test_search_failure_is_typed_within_the_deadline(
    control: dict,
    options: dict,
    error: type[EvidenceError],
    stand_in: StandIn,
    make_provider,
    make_request,
) -> None:
    stand_in.control(**control)
    provider = make_provider(timeout_s=TIMEOUT_S, options=options)
    outcome, elapsed = _search_timed(provider, make_request())
    assert type(outcome) is error
    assert elapsed < TIMEOUT_S + 1.0
    for query in stand_in.queries():
        assert not Path(query["script_path"]).parent.exists()


def test_search_oversize_output_is_not_buffered(
    stand_in: StandIn, make_provider, make_request
) -> None:
    stand_in.control(mode="huge", huge_bytes=100_000_000)
    cap = 4 * 1024 * 1024
    provider = make_provider(max_output_bytes=cap)
    tracemalloc.start()
    try:
        outcome, _ = _search_timed(provider, make_request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(outcome, ProviderOutputTooLarge)
    assert peak < 3 * cap


@pytest.mark.parametrize(
    "control",
    [
        {"mode": "slow", "delay_s": 0.3},
        {"mode": "stderr_flood"},
        {"variant": "B"},
        {"version": "0.3.2"},
        {"version": "9999.9999.999999-abcdefghij.klmnopqrs"},
    ],
)
def test_search_tolerates(control: dict, stand_in: StandIn, make_provider, make_request) -> None:
    stand_in.control(**control)
    assert make_provider().search(make_request()).result.items


@pytest.mark.parametrize(
    "term",
    [
        'say "hi"',
        "it's",
        "run `rm -rf /`",
        "${process.exit(1)}",
        "*/ process.exit(1); /*",
        "line one\nline two",
        "</script><script>alert(1)</script>",
        "a\u2028b\u2029c",
        "nul\x00byte",
        "back\\slash",
        '"]; process.exit(1); const X = ["',
        "x" * 256,
    ],
)
def test_search_terms_stay_data(term: str, stand_in: StandIn, make_provider, make_request) -> None:
    make_provider().search(make_request(query_terms=["retry"]))
    make_provider().search(make_request(query_terms=[term, "retry"]))
    benign, hostile = stand_in.queries()
    assert hostile["data_block_ok"] is True
    assert hostile["consts"]["TERMS"] == [term, "retry"]
    assert hostile["code_sha256"] == benign["code_sha256"]


def test_search_matches_terms_literally(stand_in: StandIn, make_provider, make_request) -> None:
    result = make_provider().search(make_request(query_terms=["ab", "wq"])).result
    assert result.items == []


def _spawned(stand_in: StandIn) -> bool:
    return stand_in.report_path.exists()


@pytest.mark.parametrize(
    ("kwargs", "request_overrides", "error"),
    [
        pytest.param(
            {"options": {"cross_agent": True}}, {}, UnsupportedOption, id="unknown-option"
        ),
        pytest.param(
            {"options": {"after": "not a date"}}, {}, UnsupportedOption, id="bad-option-value"
        ),
        pytest.param({"timeout_s": 0}, {}, UnsupportedOption, id="zero-timeout"),
        pytest.param(
            {},
            {
                "scope": RequestScope(
                    agent_id="agent-2", project_id="proj-1", repository_id="repo-1"
                )
            },
            ScopeViolation,
            id="other-agent",
        ),
    ],
)
def test_search_rejects_before_any_process(
    kwargs: dict,
    request_overrides: dict,
    error: type[EvidenceError],
    stand_in: StandIn,
    make_provider,
    make_request,
) -> None:
    with pytest.raises(error):
        make_provider(**kwargs).search(make_request(**request_overrides))
    assert not _spawned(stand_in)


def test_search_rejects_unvalidated_request_before_any_process(
    stand_in: StandIn, make_provider, make_request
) -> None:
    huge = HistoricalEvidenceRequest.model_construct(
        **{**dict(make_request()), "query_terms": ["x" * 1024 * 1024]}
    )
    with pytest.raises(UnsupportedOption):
        make_provider().search(huge)
    assert not _spawned(stand_in)


def test_search_without_repository_roots_rejects_before_any_process(
    stand_in: StandIn, enablement, make_request
) -> None:
    provider = ObeliskProvider(
        enablement.model_copy(update={"repo_roots": []}), binary=str(stand_in.executable)
    )
    with pytest.raises(ScopeViolation):
        provider.search(make_request())
    assert not _spawned(stand_in)


def test_search_without_obelisk_on_path_is_unavailable(
    enablement, make_request, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProviderUnavailable):
        ObeliskProvider(enablement).search(make_request())


def _admission(request: HistoricalEvidenceRequest) -> Admitted:
    return Admitted(trigger=request.trigger, request=request, token_budget=2000)


def test_retrieve_without_obelisk_is_a_typed_empty_result(
    enablement, make_request, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    retrieval = retrieve(_admission(make_request()), provider=ObeliskProvider(enablement))
    assert retrieval.reason_code == "provider_unavailable"
    assert retrieval.result is not None
    assert (retrieval.result.items, retrieval.result.freshness) == ([], "unknown")


def test_retrieve_accepts_the_obelisk_answer(make_provider, make_request) -> None:
    retrieval = retrieve(_admission(make_request()), provider=make_provider())
    assert retrieval.reason_code == "retrieved"
    assert retrieval.result is not None and retrieval.result.items


@pytest.mark.parametrize(
    ("markers", "freshness", "revision"),
    [("stale", "stale", True), ("none", "unknown", False), ("incomplete", "incomplete", False)],
)
def test_search_reports_freshness_from_markers(
    markers: str,
    freshness: str,
    revision: bool,
    stand_in: StandIn,
    repo_root: str,
    make_provider,
    make_request,
) -> None:
    stand_in.data_path.write_text(json.dumps(stand_in_data(repo_root, markers=markers)))
    result = make_provider().search(make_request()).result
    assert result.freshness == freshness
    assert result.index_revision.startswith("obelisk-index:") is revision


def test_search_applies_window(make_provider, make_request) -> None:
    result = make_provider(options=WINDOW).search(make_request()).result
    assert result.items
    assert all(
        item.observed_at is not None and item.observed_at.isoformat() >= "2026-08-01T09:01:30"
        for item in result.items
    )


def test_search_applies_limits_honestly(make_provider, make_request) -> None:
    limits = RequestLimits(max_sessions=1, max_items=2, max_snippet_chars=30, max_total_chars=50)
    result = make_provider().search(make_request(limits=limits)).result
    assert len(result.items) <= 2
    assert len({item.session_ref for item in result.items}) == 1
    assert all(len(item.snippet) <= 30 for item in result.items)
    assert sum(len(item.snippet) for item in result.items) <= 50
    assert result.truncated is True and result.omitted_count > 0


@pytest.mark.parametrize(
    "control",
    [
        {"mode": "ok"},
        {"mode": "error"},
        {"mode": "malformed"},
        {"mode": "stray_log"},
        {"mode": "trailing_log"},
        {"mode": "leak_repo"},
        {"mode": "huge", "huge_bytes": 8_000_000},
        {"mode": "crash"},
        {"mode": "stderr_flood"},
        {"version_mode": "garbage"},
        {"version_mode": "fail"},
    ],
)
def test_search_never_leaks_raw_output(
    control: dict,
    stand_in: StandIn,
    make_provider,
    make_request,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stand_in.control(error_text=CANARY, log_text=CANARY, **control)
    caplog.set_level(logging.DEBUG)
    provider = make_provider()
    outcome, _ = _search_timed(provider, make_request())
    retrieval = retrieve(_admission(make_request()), provider=make_provider())
    texts = [_public_text(retrieval.result), provider.provider_version]
    if isinstance(outcome, EvidenceError):
        for error in _chain(outcome):
            texts += [str(error), repr(error), repr(error.args), repr(vars(error))]
    else:
        texts.append(_public_text(outcome))
        assert any(CANARY in item.snippet for item in outcome.items)
    captured = capsys.readouterr()
    texts += [caplog.text, captured.out, captured.err]
    assert not any(CANARY in text for text in texts)


def test_search_survives_lone_surrogates_in_history(
    stand_in: StandIn, make_provider, make_request
) -> None:
    data = json.loads(stand_in.data_path.read_text())
    data["messages"][0]["text"] = "retry \ud83d alone"
    stand_in.data_path.write_text(json.dumps(data))
    result = make_provider().search(make_request(query_terms=["retry"])).result
    assert any(item.snippet == "retry \ufffd alone" for item in result.items)
