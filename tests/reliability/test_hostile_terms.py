"""Hostile query terms through the full pipeline and both providers: data, never syntax.

Every hostile payload is run as the proposed route's command, so admission turns it into a query
term. The same command failed earlier in the agent's history (and, as bait, in another repository
and another agent's folder). A run passes when the planted row comes back, no bait and no decoy
does, every returned item shares a token with the terms, nothing was executed or written (no
marker file, index intact, Obelisk template code unchanged), the run was quick, and the canary in
every term is in no public output.
"""

import json
import re
import sqlite3
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.limits import HARD_CAPS
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import Admitted
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.native.index.fts import token_words
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.providers.obelisk.discovery import clear_probe_cache
from obelisk_session_evidence.providers.obelisk.plan import lanes_for
from obelisk_session_evidence.stages.retrieve import retrieve
from tests.reliability.figures import FIGURES, FULL
from tests.reliability.index_dump import integrity_problems
from tests.reliability.leaks import assert_no_canary, error_texts
from tests.reliability.pipeline_runs import MeasuredRun, run_pipeline_measured
from tests.reliability.worlds import World, build_world, write_config

pytestmark = pytest.mark.reliability

CANARY = "CANARY-HOSTILE-5c1e"
HOSTILE_BOUND_S = 15.0
"""A lookup over hostile terms answers within this (generous: CI machines are shared and slow)."""
OVERSIZE_BOUND_S = 3.0
"""An out-of-contract request is refused within this, before any search."""
GENERATED = 150 if FULL else 4
"""Generated hostile terms per provider (through the whole pipeline each)."""

PAYLOADS: dict[str, list[str]] = {
    "fts5": [
        '"',
        'say "hi"',
        "auth*",
        "NEAR(alpha beta)",
        "alpha AND beta",
        "alpha OR beta",
        "NOT alpha",
        "(alpha)",
        "^alpha",
        "command:alpha",
        "{command body}: alpha",
        "-x --",
        "a + b",
    ],
    "sql": [
        "'",
        "it's",
        "'; DROP TABLE entries; --",
        "' OR '1'='1",
        '" OR 1=1 --',
        "/* comment */ SELECT 1",
        "x'); DELETE FROM files; --",
        "entry_text MATCH '*'",
    ],
    "shell": [
        "$(touch {marker}/dollar)",
        "`touch {marker}/backtick`",
        "; touch {marker}/semicolon",
        "| tee {marker}/pipe",
        "&& touch {marker}/and &",
        "> {marker}/redirect",
        "$((1+1)) ~ * ? [a] !!",
        "grep '' -r . && git commit -m \"\"",
    ],
    "javascript": [
        "${process.exit(1)}",
        "*/ process.exit(1); /*",
        '"]; process.exit(1); const X = ["',
        "</script><script>alert(1)</script>",
        "a\u2028b\u2029c",
        "\\u0022); x",
        "back\\slash",
        "'); require('child_process').execSync('touch {marker}/js'); ('",
    ],
    "control": [
        "nul\x00byte",
        "\u202egnp.exe",
        "abc\u202edef\u202c",
        "tab\tand\nnewline\r",
        "bell\x07esc\x1b[31m",
        "zero\u200bwidth",
        "emoji \U0001f525 \u00e7\u00e9",
    ],
}
FRAGMENTS = [payload for payloads in PAYLOADS.values() for payload in payloads] + list(string.punctuation)
MARKER = "{marker}"
_ROW = re.compile(re.escape(CANARY) + r"-(\d{3})")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """Every hostile payload planted as a failed command (with its bait), indexed and served."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "markers").mkdir()
    return build_world(root, [term for _, term in _all_terms(root / "markers")], canary=CANARY)


@pytest.fixture(autouse=True)
def fresh_probes() -> Iterator[None]:
    """The adapter remembers probes per binary in memory: start each test from none."""
    clear_probe_cache()
    yield
    clear_probe_cache()


def _all_terms(marker: Path) -> list[tuple[str, str]]:
    """`(category, term)` for every payload: the payload, then its numbered canary."""
    terms, number = [], 0
    for category, payloads in PAYLOADS.items():
        for payload in payloads:
            terms.append((category, f"{payload.replace(MARKER, str(marker))} {CANARY}-{number:03d}"))
            number += 1
    return terms


def _terms_of(world: World, category: str) -> list[str]:
    return [term for kind, term in _all_terms(world.root / "markers") if kind == category]


def _policy(enablement: Enablement) -> AdmissionPolicy:
    return AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")


def _situation(commands: list[str], files: list[str] | None = None, **overrides: Any) -> ReplanSituation:
    """A repeated-route situation proposing `commands`, asking for as much as the hard caps allow."""
    limits = {
        name: HARD_CAPS[name]
        for name in ("max_sessions", "max_items", "max_snippet_chars", "max_total_chars", "max_tokens")
    }
    document = situation(commands=commands, files=files or [], limits=limits, **overrides)
    return load_contract(ReplanSituation, json.dumps(document).encode("utf-8"))


def _provider(world: World, backend: str, work_dir: Path) -> EvidenceProvider:
    if backend == "native":
        return NativeIndexProvider(world.index_dir, world.native_enablement())
    return world.obelisk_provider(work_dir, timeout_s=10.0)


def _enablement(world: World, backend: str) -> Enablement:
    return world.native_enablement() if backend == "native" else world.obelisk_enablement()


def _index_shape(world: World) -> tuple[list[tuple[str, str]], int, int]:
    connection = sqlite3.connect(str(index_file(world.index_dir)))
    try:
        tables = connection.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
        (entries,) = connection.execute("SELECT count(*) FROM entries").fetchone()
        (files,) = connection.execute("SELECT count(*) FROM files").fetchone()
    finally:
        connection.close()
    return tables, entries, files


def _assert_nothing_ran(world: World, shape_before: tuple[list[tuple[str, str]], int, int]) -> None:
    """Zero injections: no marker file, the index unchanged and sound, the template code fixed."""
    assert sorted(path.name for path in (world.root / "markers").iterdir()) == []
    assert _index_shape(world) == shape_before
    connection = connect(index_file(world.index_dir))
    try:
        assert integrity_problems(connection) == []
    finally:
        connection.close()
    scripts = world.stand_in.scripts()
    assert all(script["data_block_ok"] for script in scripts)
    assert len({script["code_sha256"] for script in scripts}) <= 1


def _assert_literal(run: MeasuredRun, world: World, backend: str, planted_terms: list[str]) -> None:
    """The planted rows come back; bait, decoys and rows sharing no token with the terms do not."""
    request = run.values.admission.request
    assert run.decision.retrieval.reason_code == "retrieved"
    refs = [item.session_ref for item in run.items]
    stray = sum(ref in world.bait_refs for ref in refs)
    FIGURES.out_of_scope_rows += stray
    assert stray == 0, f"{stray} out-of-scope item(s)"
    assert not any(ref in world.decoy_refs for ref in refs), "a decoy matched: a term acted as an operator"
    wanted = {int(_ROW.search(term)[1]) for term in planted_terms}
    by_ref = {
        row.native_ref if backend == "native" else row.obelisk_ref: number for number, row in enumerate(world.planted)
    }
    found = {by_ref[ref] for ref in refs if ref in by_ref}
    assert wanted <= found, f"planted rows not returned: {sorted(wanted - found)}"
    tokens = {token for term in request.query_terms for token in token_words(term)}
    for item in run.items:
        assert set(token_words(item.snippet)) & tokens, "an item shares no token with the terms"
    if backend == "obelisk":
        _assert_terms_sent_as_data(world, request)


def _assert_terms_sent_as_data(world: World, request: HistoricalEvidenceRequest) -> None:
    """The last query script carried the terms as JSON data: the tool-call SQL's lanes (each term's
    program and subjects, path or text) as a `?` binding, and `search()`'s list when decisions or
    summaries were asked for."""
    (script,) = world.stand_in.scripts()[-1:]
    consts = script["consts"]
    assert json.loads(consts["CALLS_ARGS"][4]) == [lane.literal() for lane in lanes_for(request.query_terms)]
    searched = bool({"decision", "summary"} & set(request.evidence_types))
    assert consts["TERMS"] == (request.query_terms if searched else [])


@pytest.mark.parametrize("category", sorted(PAYLOADS))
@pytest.mark.parametrize("backend", ["native", "obelisk"])
def test_run_pipeline_matches_hostile_terms_literally(
    world: World, backend: str, category: str, encoder, tmp_path: Path, caplog, capsys
) -> None:
    caplog.set_level("DEBUG")
    shape = _index_shape(world)
    terms = _terms_of(world, category)
    run = run_pipeline_measured(
        _situation(terms),
        provider=_provider(world, backend, tmp_path / "obelisk-work"),
        policy=_policy(_enablement(world, backend)),
        encoder=encoder,
    )
    FIGURES.cases["hostile_terms"] += len(terms)
    FIGURES.hostile_latency(f"{backend}:{category}", run.seconds)
    assert run.decision.admission.admitted
    request_terms = run.values.admission.request.query_terms
    assert all(" ".join(term.split()) in request_terms for term in terms)
    _assert_literal(run, world, backend, terms)
    assert run.seconds < HOSTILE_BOUND_S
    _assert_nothing_ran(world, shape)
    assert list((tmp_path / "obelisk-work").glob("*")) == [], "a query folder outlived its run"
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {**run.public_outputs(), "log": caplog.text, "stdout": captured.out, "stderr": captured.err},
    )


@pytest.mark.parametrize("backend", ["native", "obelisk"])
def test_run_pipeline_largest_admissible_situation_is_bounded(
    world: World, backend: str, encoder, tmp_path: Path, caplog, capsys
) -> None:
    """32 commands of 4 KB, 64 paths of 1 KB, 2,000-character hypothesis and blocker: 24 terms, quick."""
    fragments = [term for _, term in _all_terms(world.root / "markers")]
    commands = [
        (fragments[n % len(fragments)] + " ") * (4096 // (len(fragments[n % len(fragments)]) + 1)) for n in range(32)
    ]
    files = [f"src/{n}/" + "x" * 990 + f" {CANARY}" for n in range(64)]
    text = (" ".join(fragments))[:2000]
    situation_model = _situation(commands, files, hypothesis=text, blocker=text)
    caplog.set_level("DEBUG")
    shape = _index_shape(world)
    run = run_pipeline_measured(
        situation_model,
        provider=_provider(world, backend, tmp_path / "obelisk-work"),
        policy=_policy(_enablement(world, backend)),
        encoder=encoder,
    )
    FIGURES.cases["hostile_terms"] += 1
    FIGURES.hostile_latency(f"{backend}:largest-admissible", run.seconds)
    request = run.values.admission.request
    assert len(request.query_terms) == 24 and max(len(term) for term in request.query_terms) <= 256
    assert run.decision.retrieval.reason_code == "retrieved"
    assert not any(item.session_ref in world.bait_refs for item in run.items)
    assert run.seconds < HOSTILE_BOUND_S
    _assert_nothing_ran(world, shape)
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {**run.public_outputs(), "log": caplog.text, "stdout": captured.out, "stderr": captured.err},
    )


@pytest.mark.parametrize(
    "shape",
    [pytest.param("one-1MB-command", id="1MB-term"), pytest.param("10000-commands", id="10000-terms")],
)
def test_load_contract_refuses_oversize_terms_in_one_line(shape: str, tmp_path: Path) -> None:
    """Past the contract's bounds a situation never reaches admission: one content-free line, exit 2."""
    commands = (
        [f"x{' y' * 524_288} {CANARY}"]
        if shape == "one-1MB-command"
        else [f"pytest {n} {CANARY}" for n in range(10_000)]
    )
    raw = json.dumps(situation(commands=commands)).encode("utf-8")
    started = time.monotonic()
    with pytest.raises(InvalidInput) as refused:
        load_contract(ReplanSituation, raw)
    result = CliRunner().invoke(main, ["run", "--situation", "-", "--format", "json"], input=raw)
    seconds = time.monotonic() - started
    FIGURES.cases["hostile_terms"] += 1
    FIGURES.hostile_latency(f"contract:{shape}", seconds)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert json.loads(result.stdout)["reason_code"] == "invalid_input"  # the --format json error envelope
    assert seconds < OVERSIZE_BOUND_S * 2
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {"error": error_texts(refused.value), "cli_stdout": result.stdout, "cli_stderr": result.stderr},
    )


@pytest.mark.parametrize(
    "terms",
    [
        pytest.param([" ".join(f"w{n:06d}" for n in range(131_072)) + CANARY], id="1MB-term-of-distinct-words"),
        pytest.param(["x" * 1_048_576 + CANARY], id="1MB-term-one-word"),
        pytest.param([f"term{n} {CANARY}" for n in range(10_000)], id="10000-terms"),
        pytest.param([f"{n} " * 100 + CANARY for n in range(10_000)], id="10000-terms-of-1KB"),
    ],
)
@pytest.mark.parametrize("backend", ["native", "obelisk"])
def test_retrieve_refuses_an_out_of_contract_request_quickly(
    world: World, backend: str, terms: list[str], tmp_path: Path, caplog, capsys
) -> None:
    """A request built past the bounds (`model_construct` skips validation) is refused, typed and fast."""
    caplog.set_level("DEBUG")
    request = HistoricalEvidenceRequest.model_construct(
        request_id="req-oversize",
        situation_id="situation-oversize",
        trigger="replan_repetition",
        scope=_valid_request().scope,
        revision=None,
        evidence_types=["prior_failure", "decision"],
        query_terms=terms,
        limits=_valid_request().limits,
    )
    provider = _provider(world, backend, tmp_path / "obelisk-work")
    spawned_before = len(world.stand_in.reports())
    started = time.monotonic()
    retrieval = retrieve(_admission(request), provider=provider)
    seconds = time.monotonic() - started
    FIGURES.cases["hostile_terms"] += 1
    FIGURES.hostile_latency(f"{backend}:direct:{len(terms)}-terms", seconds)
    assert retrieval.reason_code == "unsupported_option"
    assert retrieval.result is not None and retrieval.result.items == []
    assert seconds < OVERSIZE_BOUND_S
    assert len(world.stand_in.reports()) == spawned_before, "a process was started for a refused request"
    errors: list[str] = []
    try:
        provider.search(request)
    except Exception as error:
        errors = error_texts(error)
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            "retrieval": retrieval.model_dump_json(),
            "error": errors,
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )


@pytest.mark.parametrize("backend", ["native", "obelisk"])
def test_cli_run_over_hostile_terms_prints_only_the_decision(
    world: World, backend: str, clean_environment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --situation -` end to end: exit 0, one JSON decision, no canary in anything printed.
    HOME is the world's: the adapter looks for Obelisk's index where Obelisk keeps it."""
    monkeypatch.setenv("HOME", str(world.home))
    write_config(clean_environment, _enablement(world, backend))
    terms = _terms_of(world, "shell") + _terms_of(world, "sql")
    raw = _situation(terms).model_dump_json().encode("utf-8")
    started = time.monotonic()
    result = CliRunner().invoke(main, ["run", "--situation", "-", "--format", "json", "--provider", backend], input=raw)
    seconds = time.monotonic() - started
    FIGURES.cases["hostile_terms"] += len(terms)
    FIGURES.hostile_latency(f"{backend}:cli", seconds)
    assert result.exit_code == 0, result.stderr
    decision = json.loads(result.stdout)
    assert decision["retrieval"]["reason_code"] == "retrieved"
    assert decision["receipt"]["result_count"] > 0
    assert sorted(path.name for path in (world.root / "markers").iterdir()) == []
    assert_no_canary(CANARY, tmp_path / "public", {"cli_stdout": result.stdout, "cli_stderr": result.stderr})


_GENERATED_TERMS = st.lists(st.sampled_from(FRAGMENTS) | st.text(min_size=1, max_size=12), min_size=1, max_size=6).map(
    "".join
)


@pytest.mark.parametrize("backend", ["native", "obelisk"])
def test_run_pipeline_survives_generated_hostile_terms(world: World, backend: str, encoder, tmp_path: Path) -> None:
    """Random mixes of the payloads and arbitrary text: typed, bounded, literal, nothing executed."""
    shape = _index_shape(world)
    provider = _provider(world, backend, tmp_path / "obelisk-work")
    policy = _policy(_enablement(world, backend))
    outputs: dict[str, str] = {}

    @settings(max_examples=GENERATED, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(commands=st.lists(_GENERATED_TERMS, min_size=1, max_size=4))
    def check(commands: list[str]) -> None:
        commands = [f"{command} {CANARY}" for command in commands]
        run = run_pipeline_measured(_situation(commands), provider=provider, policy=policy, encoder=encoder)
        FIGURES.cases["hostile_terms"] += len(commands)
        FIGURES.hostile_latency(f"{backend}:generated", run.seconds)
        assert run.decision.retrieval.reason_code == "retrieved"
        assert run.seconds < HOSTILE_BOUND_S
        assert not any(item.session_ref in world.bait_refs for item in run.items)
        tokens = {token for term in run.values.admission.request.query_terms for token in token_words(term)}
        assert all(set(token_words(item.snippet)) & tokens for item in run.items)
        outputs.update(run.public_outputs(f"{len(outputs)}-"))

    check()
    _assert_nothing_ran(world, shape)
    assert_no_canary(CANARY, tmp_path / "public", outputs)


def _valid_request() -> HistoricalEvidenceRequest:
    from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY

    return HistoricalEvidenceRequest(
        request_id="req-valid",
        situation_id="situation-valid",
        trigger="replan_repetition",
        scope={"agent_id": FIXTURE_AGENT, "project_id": FIXTURE_PROJECT, "repository_id": FIXTURE_REPOSITORY},
        evidence_types=["prior_failure"],
        query_terms=["pytest"],
        limits={"max_sessions": 20, "max_items": 12, "max_snippet_chars": 600, "max_total_chars": 6000},
    )


def _admission(request: HistoricalEvidenceRequest) -> Admitted:
    return Admitted.model_construct(
        status="admitted", reason_code="admitted", trigger=request.trigger, request=request, token_budget=2000
    )
