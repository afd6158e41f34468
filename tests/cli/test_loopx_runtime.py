"""Commands that run LoopX's TypeScript runtime use the project's provisioned Node, say which
Node LoopX needs when there is none (typed, exit 2), and leave no runtime daemon behind."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from obelisk_session_evidence.loopx_runtime import PROVISIONED_NODE_DIR
from obelisk_session_evidence.state.paths import state_paths
from tests.batch import standin
from tests.reliability.processes import process_alive

pytest.importorskip("loopx.control_plane.effect_runtime")
ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0
FROM_LOOPX = ["situation", "from-loopx", "--goal-id", "project-fixture", "--agent-id", "agent-fixture"]
# The CLI with the provisioned Node's folder replaced (argv[1]: a folder, or "" to keep it).
CLI = """
import sys
from pathlib import Path
import obelisk_session_evidence.loopx_runtime as runtime
if sys.argv[1]:
    runtime.PROVISIONED_NODE_DIR = Path(sys.argv[1])
from obelisk_session_evidence.cli import main
sys.argv = ["obelisk-session-evidence", *sys.argv[2:]]
main()
"""
# Start LoopX's runtime inside loopx_runtime(), print its pid, and return.
PING = """
import glob, json, tempfile
from loopx.control_plane.effect_runtime import effect_runtime_result
from obelisk_session_evidence.loopx_runtime import loopx_runtime
with loopx_runtime():
    effect_runtime_result("runtime.ping", {})
    (info,) = glob.glob(tempfile.gettempdir() + "/loopx-effect-runtime-*/runtime-*.json")
    print(json.load(open(info))["pid"])
"""


def _old_node(folder: Path) -> Path:
    """A `node` that reports a version LoopX refuses."""
    folder.mkdir()
    node = folder / "node"
    node.write_text("#!/bin/sh\necho v18.0.0\n")
    node.chmod(0o755)
    return folder


def _env(tmp_path: Path, path_first: Path) -> dict[str, str]:
    runtime_tmp = tmp_path / "t"
    runtime_tmp.mkdir(exist_ok=True)
    python_dir = Path(sys.executable).parent
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(path_first), str(python_dir), "/usr/bin", "/bin"]),
        "TMPDIR": str(runtime_tmp),  # LoopX's runtime folder: this test's own
        "PYTHONPATH": str(ROOT),
    }


def test_without_a_node_new_enough_the_command_says_which_one_loopx_needs(tmp_path):
    standin.enable_fixture_scope(state_paths())
    env = _env(tmp_path, _old_node(tmp_path / "old"))
    done = subprocess.run(
        [sys.executable, "-c", CLI, str(tmp_path / "none"), *FROM_LOOPX, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stdout)
    assert error["reason_code"] == "loopx_runtime_unavailable"
    assert "LoopX needs Node >= 22.22.3 on PATH (found: 18.0.0)" in error["detail"]


@pytest.mark.skipif(not (PROVISIONED_NODE_DIR / "node").is_file(), reason="no provisioned Node (make node)")
def test_the_provisioned_node_is_used_and_the_runtime_it_started_is_stopped(tmp_path):
    env = _env(tmp_path, _old_node(tmp_path / "old"))  # only the provisioned Node is new enough
    done = subprocess.run([sys.executable, "-c", PING], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    pid = int(done.stdout)
    deadline = time.monotonic() + DEADLINE_S
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(pid), "LoopX's runtime outlived the command that started it"
