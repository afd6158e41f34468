"""One isolated LoopX owner for the conformance suite: LoopX's CLI and ours, real processes."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import obelisk_session_evidence.loopx as adapters
from obelisk_session_evidence.contracts.base import TRIGGERS
from tests.conformance.conftest import REPOSITORY, WORKER, loopx_obligation
from tests.providers.native.index.transcripts import ClaudeTranscript

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
            # The operator admits the automatic triggers too (enable's default is Stage 1 only).
            *(arg for trigger in TRIGGERS for arg in ("--trigger", trigger)),
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

    def register_goal(self, **fields: Any) -> None:
        """The goal in LoopX's registry (LoopX's chat server serves registered goals only)."""
        Path(self.environment["LOOPX_REGISTRY"]).write_text(json.dumps({"goals": [{"id": GOAL, **fields}]}))

    @contextmanager
    def chat_server(self) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
        """LoopX's chat server (`loopx chat`) for the goal, as a function that posts one body to
        its Decision Context route and returns the JSON answer; stopped on exit."""
        with socket.socket() as probe:  # a free loopback port (`loopx chat` prints 0 for port 0)
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with (self.root / "chat.log").open("wb") as log:
            server = subprocess.Popen(
                ["loopx", "chat", "--goal-id", GOAL, "--port", str(port), "--no-open"],
                env=self.environment,
                cwd=self.root,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        origin = f"http://127.0.0.1:{port}"

        def post(body: dict[str, Any]) -> dict[str, Any]:
            request = urllib.request.Request(
                f"{origin}/api/chat/decision-context",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", "Origin": origin},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())

        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, (self.root / "chat.log").read_text()[-2000:]
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "loopx chat did not listen within 60 s"
                    time.sleep(0.1)
            yield post
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)

    def stop_loopx_runtime(self) -> None:
        """Stop the TypeScript runtime daemons LoopX started under this home's TMPDIR. LoopX keys a
        daemon by the interpreter path that started it: `loopx` runs as `python3` (its script's
        line), the extension and the worker as this `python`, so each is stopped."""
        loopx_script = shutil.which("loopx", path=self.environment["PATH"])
        assert loopx_script is not None
        loopx_python = Path(loopx_script).read_text(encoding="utf-8").splitlines()[0].removeprefix("#!").strip()
        for interpreter in dict.fromkeys([sys.executable, loopx_python]):
            self.run(
                interpreter,
                "-c",
                (
                    "from loopx.control_plane.effect_runtime import restart_effect_runtime;"
                    "restart_effect_runtime(timeout=10.0, wait_for_exit=True)"
                ),
            )


def public_verdict(payload: dict[str, Any]) -> str:
    receipt = payload["retrieval_receipt"]
    public = json.dumps(receipt)
    assert CONTENT_CANARY not in public and QUERY_CANARY not in public and "pytest" not in public
    assert receipt["raw_content_captured"] is False
    return receipt["results"][0]["summary"]
