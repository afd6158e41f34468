"""LoopX itself as the oracle: the real loopx==2.1.1 and a project-local Node >= 22.22.3.

Where the tools are missing the suite skips locally and fails under CI=true, so CI can never
pass without having compared anything. `make test` provisions both (`make/node.mk`, the
`conformance` extra).

LoopX finds Node with `shutil.which("node")`, i.e. on PATH, and serves every semantic call
from a managed daemon it starts on first use and leaves running, located via
`tempfile.gettempdir()`. The worker therefore runs as a subprocess with the provisioned Node
first on PATH and a private TMPDIR, so it never reuses a daemon started elsewhere (possibly
with another Node), and it stops its own daemon before exiting.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixtures.conformance_cases import ConformanceCase, conformance_cases

if TYPE_CHECKING:
    from tests.conformance.loopx_home import LoopxHome

REPOSITORY = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("loopx_worker.py")
PROVISIONED_NODE = REPOSITORY / ".node" / "bin" / "node"
NODE_OVERRIDE_VARIABLE = "LOOPX_CONFORMANCE_NODE"
MINIMUM_NODE = (22, 22, 3)
LOOPX_VERSION = "2.1.1"
WORKER_TIMEOUT_SECONDS = 900

_TIMINGS: dict[str, float] = {}


def require(condition: bool, message: str) -> None:
    """Skip locally when a conformance tool is missing; fail under CI, where it must exist."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"conformance tools missing in CI: {message}", pytrace=False)
    pytest.skip(message)


def node_version(executable: Path) -> tuple[int, int, int] | None:
    """`node --version` as a tuple, or None when it cannot be read."""
    try:
        completed = subprocess.run(
            [str(executable), "--version"], capture_output=True, text=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", completed.stdout.strip())
    return tuple(int(part) for part in match.groups()) if match else None  # type: ignore[return-value]


def conformance_node() -> Path | None:
    """The override, else the provisioned `.node/bin/node`, else `node` on PATH; if new enough."""
    override = os.environ.get(NODE_OVERRIDE_VARIABLE)
    on_path = shutil.which("node")
    candidates = [Path(override)] if override else [PROVISIONED_NODE, *([Path(on_path)] if on_path else [])]
    for candidate in candidates:
        version = node_version(candidate) if candidate.exists() else None
        if version is not None and version >= MINIMUM_NODE:
            return candidate
    return None


def installed_loopx_version() -> str | None:
    """The installed loopx distribution's version, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("loopx")
    except PackageNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class LoopxAnswers:
    """LoopX's answer for every generated case, in case order, and what it cost."""

    cases: list[ConformanceCase]
    """The generated cases."""
    answers: list[dict[str, Any]]
    """`semantic_delta_from_writeback` per case, or `{"error": ..., "message": ...}`."""
    seconds: float
    """Wall time of the whole LoopX batch, Node start included."""
    node_version: str
    """The Node the LoopX runtime ran on."""


def loopx_obligation(document: dict[str, Any]) -> dict[str, Any]:
    """Our obligation document as LoopX's `autonomous_replan_obligation_v0`."""
    return {"schema_version": "autonomous_replan_obligation_v0", **document}


@pytest.fixture(scope="session")
def loopx_tools() -> Path:
    """The Node LoopX will run on; skips (fails in CI) when loopx or Node is missing."""
    require(
        installed_loopx_version() == LOOPX_VERSION,
        f"loopx=={LOOPX_VERSION} is not installed (pip install -e '.[conformance]')",
    )
    node = conformance_node()
    require(
        node is not None,
        "no Node >= 22.22.3 (run `make .node/bin/node`, or set LOOPX_CONFORMANCE_NODE)",
    )
    assert node is not None
    return node


@pytest.fixture(scope="session")
def generated_cases() -> list[ConformanceCase]:
    """Every differential case, in generation order."""
    return conformance_cases()


@pytest.fixture(scope="session")
def loopx_answers(loopx_tools: Path, generated_cases: list[ConformanceCase]) -> Iterator[LoopxAnswers]:
    """LoopX's own answers for every generated case, from one batched worker process."""
    payload = json.dumps(
        {
            "cases": [
                {
                    "obligation": loopx_obligation(case.obligation),
                    "progress_observation": case.observation,
                }
                for case in generated_cases
            ]
        }
    )
    with tempfile.TemporaryDirectory(prefix="loopx-conformance-") as private_tmp:
        environment = {
            **os.environ,
            "PATH": f"{loopx_tools.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "TMPDIR": private_tmp,
        }
        started = time.monotonic()
        completed = subprocess.run(
            [sys.executable, str(WORKER)],
            input=payload,
            capture_output=True,
            text=True,
            env=environment,
            timeout=WORKER_TIMEOUT_SECONDS,
            check=False,
        )
        seconds = time.monotonic() - started
    assert completed.returncode == 0, f"LoopX worker failed:\n{completed.stderr[-4000:]}"
    report = json.loads(completed.stdout)
    assert report["runtime_stopped"], "the LoopX runtime daemon did not stop"
    answers = report["results"]
    assert len(answers) == len(generated_cases)
    _TIMINGS["loopx_cases"] = len(generated_cases)
    _TIMINGS["loopx_seconds"] = seconds
    yield LoopxAnswers(
        cases=generated_cases,
        answers=answers,
        seconds=seconds,
        node_version=str((report.get("runtime") or {}).get("node_version")),
    )


@pytest.fixture
def home(tmp_path: Path, loopx_tools: Path) -> "Iterator[LoopxHome]":
    """An isolated LoopX owner with sessions to index; LoopX's runtime daemon stopped after."""
    from tests.conformance.loopx_home import LoopxHome

    owner = LoopxHome(tmp_path, loopx_tools)
    yield owner
    owner.stop_loopx_runtime()


@pytest.fixture
def ready(home: "LoopxHome") -> "LoopxHome":
    """`home` with history indexed and the extension installed, enabled and doctor-verified."""
    from tests.conformance.loopx_home import EXTENSION_ID

    home.history()
    assert home.install()["doctor"]["status"] == "ready"
    assert home.loopx("extension", "enable", EXTENSION_ID, "--execute")["enabled"] is True
    doctor = home.loopx("extension", "doctor", EXTENSION_ID, "--execute")
    assert (doctor["status"], doctor["verified"]) == ("ready", True)
    return home


def record_timing(name: str, value: float) -> None:
    """Keep a number for the terminal summary (benchmarks print numbers, never assert them)."""
    _TIMINGS[name] = value


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the differential's size and cost."""
    if "loopx_cases" not in _TIMINGS:
        return
    terminalreporter.write_line(
        "LoopX conformance: {cases} differential cases; LoopX batch {loopx:.1f} s; "
        "exact-id step {ours:.1f} s; full pipeline {pipeline:.1f} s".format(
            cases=int(_TIMINGS["loopx_cases"]),
            loopx=_TIMINGS["loopx_seconds"],
            ours=_TIMINGS.get("exact_id_seconds", float("nan")),
            pipeline=_TIMINGS.get("pipeline_seconds", float("nan")),
        )
    )
