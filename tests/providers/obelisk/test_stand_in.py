"""The stand-in speaks the documented CLI in both variants (a fixture; this pins its framing)."""

import json
import subprocess

import pytest

import providers.obelisk
from fixtures.obelisk_stand_in import StandIn


@pytest.mark.parametrize(
    ("variant", "argv", "exit_code", "stdout_kind"),
    [
        ("A", ["--version"], 0, "version"),
        ("B", ["-v"], 0, "version"),
        ("A", ["--search", "retry", "--limit", "1", "--compact"], 0, "hits"),
        ("B", ["--search", "retry"], 0, "hits"),
        ("B", ["--search", "retry", "--limit", "1"], 1, "envelope"),
        ("A", ["--search", "retry", "--bogus"], 1, "envelope"),
        ("A", ["--build"], 0, "build"),
        ("B", ["--build"], 0, "build-skipped"),
        ("B", ["--rebuild"], 0, "build"),
        ("A", ["--rebuild"], 1, "usage"),
        ("A", ["--frobnicate"], 1, "usage"),
        ("B", [], 1, "usage"),
        ("A", ["--query", "/nonexistent/query.js"], 1, "envelope"),
    ],
)
def test_stand_in_cli_framing(
    variant: str, argv: list[str], exit_code: int, stdout_kind: str, stand_in: StandIn
) -> None:
    stand_in.control(variant=variant)
    finished = subprocess.run([str(stand_in.executable), *argv], capture_output=True)
    assert finished.returncode == exit_code
    if stdout_kind == "version":
        assert finished.stdout == b"0.2.3\n"
    elif stdout_kind == "hits":
        hits = json.loads(finished.stdout)
        assert hits and set(hits[0]) == {"message", "session", "rank", "context"}
        assert finished.stdout.startswith(b"[\n")
    elif stdout_kind == "envelope":
        assert finished.stdout.count(b"\n") == 1
        assert set(json.loads(finished.stdout)) == {"error", "stack"}
    elif stdout_kind.startswith("build"):
        document = json.loads(finished.stdout)
        assert document["ok"] is True and ("skipped" in document) is stdout_kind.endswith("skipped")
    else:
        assert finished.stdout == b""
        assert b"Usage: obelisk" in finished.stderr
        assert (b"--rebuild" in finished.stderr) is (variant == "B")


def test_obelisk_package_exports() -> None:
    assert providers.obelisk.__all__ == ["ObeliskProvider"]
