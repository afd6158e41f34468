"""The extension as LoopX 2.1.1 drives it: its own CLI, in subprocesses, with isolated homes.

Every step is a real `loopx` process (install, enable, doctor, `decision-context recall-context`,
`prepare-evidence`, disable) over a real native index of written Claude Code sessions; nothing
is stubbed. Assertions are on what LoopX prints: status, result counts, the verdict item, and
its public retrieval receipt, which must be free of session content and query text (canaries).
"""

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import obelisk_session_evidence.loopx as adapters
from fixtures.situations import observation, situation
from obelisk_session_evidence.contracts.schemas import json_schema
from tests.conformance.conftest import REPOSITORY, WORKER, loopx_obligation
from tests.providers.native.index.transcripts import ClaudeTranscript

pytestmark = pytest.mark.conformance

EXTENSION_ID = "obelisk-session-evidence"
GOAL, AGENT, REPO_ID = "goal-h15", "agent-h15", "repo-h15"
CONTENT_CANARY = "canary-zebra-content-5511"
QUERY_CANARY = "canary-okapi-query-2207"
ROUTE = "pytest tests/test_auth.py -x"
MANIFEST = Path(adapters.__file__).with_name("extension.toml")


class LoopxHome:
    """One isolated owner: HOME (which holds LoopX's default runtime root), LoopX's registry,
    this project's state, a repository."""

    def __init__(self, root: Path, node: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.sessions = root / "claude"
        for folder in (root / "home", self.repo, self.sessions):
            folder.mkdir(parents=True)
        self.state = root / "ose"
        self.environment = {
            "HOME": str(root / "home"),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), str(node.parent), "/usr/bin:/bin"]),
            "PYTHONPATH": str(REPOSITORY),
            "LOOPX_REGISTRY": str(root / "loopx-registry.json"),
            "LOOPX_USAGE_PING": "0",
            "OBELISK_SESSION_EVIDENCE_HOME": str(self.state),
            "TMPDIR": str(root),
        }
        self.profile = root / "profile.json"
        self.profile.write_text(
            json.dumps(
                {
                    "schema_version": "decision_context_profile_v0",
                    "goal_id": GOAL,
                    "enabled": True,
                    "enabled_agents": [AGENT],
                    "source_provider_bindings": [],
                    "sources": [],
                    "context_provider": {
                        "provider": "extension",
                        "namespace": "replan",
                        "scope_ref": "goal",
                        "max_results": 4,
                        "timeout_seconds": 30,
                        "config": {"extension_id": EXTENSION_ID},
                    },
                    "automation": {"automatic_capture": False, "fail_open": True},
                }
            )
        )

    def run(self, *args: str, expect: int = 0, stdin: str | None = None) -> str:
        completed = subprocess.run(
            list(args),
            input=stdin,
            capture_output=True,
            text=True,
            env=self.environment,
            cwd=self.root,
            timeout=120,
            check=False,
        )
        assert completed.returncode == expect, (args[:3], completed.stdout[-2000:], completed.stderr[-2000:])
        return completed.stdout

    def loopx(self, *args: str) -> dict[str, Any]:
        return json.loads(self.run("loopx", *args, "--format", "json"))

    def ours(self, *args: str) -> str:
        return self.run("obelisk-session-evidence", *args)

    def history(self) -> None:
        """An earlier session whose route failed, and the current session with an earlier turn."""
        ClaudeTranscript(self.sessions, "s-earlier", str(self.repo)).user("fix login").bash(
            ROUTE, f"FAILED tests/test_auth.py::test_login {CONTENT_CANARY}", exit_code=1
        ).write()
        ClaudeTranscript(self.sessions, "s-current", str(self.repo)).user("login again").bash(
            "make lint", f"lint clean {CONTENT_CANARY}"
        ).write()
        self.ours(
            "enable",
            "--surface",
            "replan-history",
            "--agent-id",
            AGENT,
            "--project-id",
            GOAL,
            "--repository-id",
            REPO_ID,
            "--repo-root",
            str(self.repo),
            "--source",
            "claude",
            "--source-root",
            f"claude={self.sessions}",
        )
        self.ours("index", "refresh", "--root", f"claude={self.sessions}")

    def install(self) -> dict[str, Any]:
        return self.loopx("extension", "install", "--manifest", str(MANIFEST), "--execute")

    def recall(self, scope: str, query: str) -> dict[str, Any]:
        return self.loopx(
            "decision-context",
            "recall-context",
            "--goal-id",
            GOAL,
            "--agent-id",
            AGENT,
            "--profile",
            str(self.profile),
            "--context-scope-ref",
            scope,
            "--query",
            query,
            "--query-summary",
            "prior failures",
        )

    def loopx_runs(self, *observations: dict[str, Any]) -> None:
        """Run records in LoopX's own run index, which LoopX's `collect_history` reads."""
        runtime_root = self.run(
            sys.executable,
            "-c",
            ("from loopx.paths import select_default_runtime_root; print(select_default_runtime_root())"),
        ).strip()
        assert runtime_root.startswith(str(self.root))
        runs = Path(runtime_root) / "goals" / GOAL / "runs"
        runs.mkdir(parents=True)
        rows = [
            {
                "generated_at": f"2026-11-2{day}T10:00:00+00:00",
                "goal_id": GOAL,
                "agent_id": AGENT,
                "classification": "no_progress",
                "progress_observation": observation,
            }
            for day, observation in enumerate(observations, start=1)
        ]
        (runs / "index.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    def loopx_delta(self, obligation: dict[str, Any], progress_observation: dict[str, Any]) -> dict[str, Any]:
        """LoopX's own `semantic_delta_from_writeback` for one step (its Node runtime, this home)."""
        cases = [{"obligation": loopx_obligation(obligation), "progress_observation": progress_observation}]
        report = json.loads(self.run(sys.executable, str(WORKER), stdin=json.dumps({"cases": cases})))
        return report["results"][0]

    def stop_loopx_runtime(self) -> None:
        """Stop the TypeScript runtime daemon LoopX started under this home's TMPDIR."""
        self.run(
            sys.executable,
            "-c",
            (
                "from loopx.control_plane.effect_runtime import restart_effect_runtime;"
                "restart_effect_runtime(timeout=10.0, wait_for_exit=True)"
            ),
        )


@pytest.fixture
def home(tmp_path: Path, loopx_tools: Path) -> Iterator[LoopxHome]:
    owner = LoopxHome(tmp_path, loopx_tools)
    yield owner
    owner.stop_loopx_runtime()


@pytest.fixture
def ready(home: LoopxHome) -> LoopxHome:
    home.history()
    assert home.install()["doctor"]["status"] == "ready"
    assert home.loopx("extension", "enable", EXTENSION_ID, "--execute")["enabled"] is True
    doctor = home.loopx("extension", "doctor", EXTENSION_ID, "--execute")
    assert (doctor["status"], doctor["verified"]) == ("ready", True)
    return home


def _verdict(payload: dict[str, Any]) -> str:
    receipt = payload["retrieval_receipt"]
    public = json.dumps(receipt)
    assert CONTENT_CANARY not in public and QUERY_CANARY not in public and "pytest" not in public
    assert receipt["raw_content_captured"] is False
    return receipt["results"][0]["summary"]


def test_doctor_is_not_ready_without_an_enablement_or_with_a_broken_configuration(home):
    # LoopX refuses to install an extension whose doctor fails, and says so.
    refused = json.loads(
        home.run(
            "loopx",
            "extension",
            "install",
            "--manifest",
            str(MANIFEST),
            "--execute",
            "--format",
            "json",
            expect=2,
        )
    )
    assert refused["error"].endswith("doctor is not ready: provider_unavailable")
    home.history()
    assert home.install()["doctor"]["status"] == "ready"
    (home.state / "config.json").write_text("{broken")
    doctor = home.loopx("extension", "doctor", EXTENSION_ID, "--execute")
    assert (doctor["status"], doctor["failure_kind"]) == ("provider_unavailable", "probe_nonzero_exit")


def test_free_text_with_goal_scope_answers_with_the_verdict(ready):
    payload = ready.recall("goal", f"pytest test_auth login failed {QUERY_CANARY}")
    assert (payload["status"], payload["reason_code"]) == ("completed", None)
    verdict = _verdict(payload)
    assert verdict.startswith("verdict ") and "index fresh" in verdict
    returned = int(re.search(r"; returned (\d+);", verdict).group(1))
    assert returned >= 1 and payload["result_count"] == 1 + returned  # the verdict, then history
    assert any(CONTENT_CANARY in result["content"] for result in payload["results"][1:])


def test_free_text_with_host_session_scope_counts_that_threads_history(ready):
    payload = ready.recall("host-session:claude:s-current", "make lint")
    assert (payload["status"], payload["reason_code"]) == ("completed", None)
    verdict = _verdict(payload)
    # The named thread's earlier turn is history: it is returned, and nothing was excluded.
    assert "invoking turn excluded 0" in verdict and "; returned 1;" in verdict
    assert "lint clean" in payload["results"][1]["content"]


def test_a_spooled_situation_reference_carries_the_full_route(ready):
    spooled = situation(scope={"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID})
    (ready.root / "situation.json").write_text(json.dumps(spooled))
    reference = ready.ours("situation", "spool", "--situation", str(ready.root / "situation.json")).strip()
    assert reference.startswith("replan-situation:sha256:")
    payload = ready.recall("goal", reference)
    assert (payload["status"], payload["result_count"]) == ("completed", 2)
    assert _verdict(payload).startswith("verdict repeats_prior_failure; delta route_repeats_prior_failure")
    # The verdict's content, as LoopX hands it to its in-process caller, is the typed document:
    # LoopX's exact-id rules accept the new probe family; history removes it, and says by which rule.
    document = json.loads(payload["results"][0]["content"])
    jsonschema.validate(document, json_schema("replan_recall_verdict_v0"))
    assert (document["accepted"], document["loopx_accepted"], document["divergence_code"]) == (
        False,
        True,
        "route_repeats_prior_failure",
    )
    assert CONTENT_CANARY not in payload["results"][0]["content"]
    # ... and LoopX's own semantic delta for the same step agrees with `loopx_accepted`.
    assert ready.loopx_delta(spooled["obligation"], spooled["proposed"]["observation"])["accepted"] is True


def test_prepare_evidence_looks_up_the_open_obligation_loopx_holds(ready):
    def prepare() -> dict[str, Any]:
        payload = ready.loopx(
            "decision-context",
            "prepare-evidence",
            "--goal-id",
            GOAL,
            "--agent-id",
            AGENT,
            "--profile",
            str(ready.profile),
            "--decision-id",
            "decision-1",
        )
        assert CONTENT_CANARY not in json.dumps(payload["assembly"])
        return payload["assembly"]["context_retrieval_receipt"]

    # LoopX's fixed query asks nothing specific: with no open obligation there is nothing to find.
    receipt = prepare()
    assert (receipt["status"], receipt["reason_code"]) == ("unavailable", "no_query_terms")
    baseline = observation("unchanged")
    ready.loopx_runs(baseline, baseline, baseline)
    receipt = prepare()
    assert (receipt["status"], receipt["reason_code"]) == ("completed", None)
    verdict = receipt["results"][0]["summary"]
    assert verdict.startswith("verdict novel; delta unchanged_never_advances; accepted false"), verdict


def test_a_disabled_extension_is_never_called(ready):
    ready.loopx("extension", "disable", EXTENSION_ID, "--execute")
    payload = ready.recall("goal", "pytest")
    assert payload["status"] == "unavailable"
    assert payload["retrieval_receipt"]["search_performed"] is False


def test_a_broken_configuration_is_config_invalid_in_loopx(ready):
    (ready.state / "config.json").write_text("{broken")
    payload = ready.recall("goal", "pytest")
    assert (payload["status"], payload["reason_code"]) == ("unavailable", "config_invalid")


def test_situation_from_loopx_state_reaches_the_verdict(ready):
    baseline = observation("unchanged")
    ready.loopx_runs(baseline, baseline, baseline)
    reference = ready.ours(
        "situation",
        "from-loopx",
        "--goal-id",
        GOAL,
        "--agent-id",
        AGENT,
        "--spool",
        "--command",
        ROUTE,
        "--file",
        "tests/test_auth.py",
    ).strip()
    document = json.loads(
        ready.ours(
            "situation",
            "from-loopx",
            "--goal-id",
            GOAL,
            "--agent-id",
            AGENT,
            "--format",
            "json",
        )
    )
    # LoopX's own obligation, derived by LoopX from its run history.
    assert document["obligation"]["obligation_id"].startswith("replan-")
    assert [t["kind"] for t in document["obligation"]["triggers"]] == ["typed_progress_repeat"]
    assert len(document["recent_observations"]) == 3
    assert document["scope"] == {"agent_id": AGENT, "project_id": GOAL, "repository_id": REPO_ID}
    summary = ready.ours("situation", "from-loopx", "--goal-id", GOAL, "--agent-id", AGENT, "--command", ROUTE)
    assert "typed_progress_repeat" in summary and ROUTE not in summary and "pytest" not in summary
    payload = ready.recall("goal", reference)
    assert payload["status"] == "completed"
    # Proposing the unchanged observation again over a route that failed before.
    assert _verdict(payload).startswith("verdict repeats_prior_failure; delta unchanged_never_advances")
    wrong = ready.run(
        "obelisk-session-evidence",
        "situation",
        "from-loopx",
        "--goal-id",
        GOAL,
        "--agent-id",
        AGENT,
        "--obligation-id",
        "replan-0000000000000000",
        expect=2,
    )
    assert wrong == ""


def test_a_host_thread_bound_to_another_agent_is_refused_in_loopx(ready):
    binding = {"thread_id": "s-current", "host_surface": "claude-code", "agent_id": "agent-other"}
    Path(ready.environment["LOOPX_REGISTRY"]).write_text(
        json.dumps({"goals": [{"id": GOAL, "coordination": {"thread_agent_bindings": [binding]}}]})
    )
    payload = ready.recall("host-session:claude:s-current", "make lint")
    assert (payload["status"], payload["reason_code"]) == ("unavailable", "cross_agent_denied")
