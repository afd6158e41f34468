"""Torn and corrupt session files: skipped and counted, never fatal, honest freshness, nothing leaked.

Every case puts one damaged unit next to a good session in the agent's Claude root, refreshes,
then runs the full pipeline over the native provider. The good session's failure must still come
back, the damage must be counted (a skip reason, or a failed file), the refresh report, the index
status and the lookup must agree on freshness, and no public output may hold the canary written
into every session.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import zstandard

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, FIXTURE_REPOSITORY, situation
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, EnablementConfig
from obelisk_session_evidence.contracts.index_status import RefreshReport
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.providers.native.index.refresh import refresh_index, refresh_locked
from obelisk_session_evidence.providers.native.index.status import index_status
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect, index_file
from obelisk_session_evidence.providers.native.parsers import _reading, claude
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.reliability.figures import FIGURES, FULL
from tests.reliability.index_dump import index_dump
from tests.reliability.leaks import assert_no_canary
from tests.reliability.pipeline_runs import run_pipeline_measured
from tests.reliability.processes import nobody_ids, run_forked

pytestmark = pytest.mark.reliability

CANARY = "CANARY-TORN-b41d"
GOOD_COMMAND = "pytest tests/test_ledger.py -k balance"
HUGE_LINE_BYTES = 100_000_000 if FULL else 8_000_000
"""The 100 MB line of issue 9 in `make test-reliability`; 8 MB keeps the default run short."""
REFRESH_BOUND_S = 20.0


class Sessions:
    """One agent's Claude root with a good session, in a folder any user may traverse."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.claude = root / "claude"
        self.repo = root / "work" / "ledger"
        self.index = index_file(root / "state" / "index")
        (self.repo / "src").mkdir(parents=True)
        good = ClaudeTranscript(self.claude, "good-session", str(self.repo))
        good.user(f"Check the balance again {CANARY}").bash(GOOD_COMMAND, f"FAILED balance {CANARY}", exit_code=1)
        self.good_path = good.write()
        self.folder = self.good_path.parent

    @property
    def roots(self) -> dict[str, list[Path]]:
        return {"claude": [self.claude]}

    def enablement(self, roots: dict[str, list[Path]]) -> Enablement:
        """The fixture agent, reading exactly `roots` (one folder per source) in the ledger repository."""
        return Enablement(
            surface="replan-history",
            agent_id=FIXTURE_AGENT,
            project_id=FIXTURE_PROJECT,
            repository_id=FIXTURE_REPOSITORY,
            repo_roots=[str(self.repo)],
            sources=list(roots),
            source_roots={source: str(paths[0]) for source, paths in roots.items()},
            enabled_at=datetime(2026, 11, 29, tzinfo=UTC),
        )

    def transcript(self, session_id: str) -> ClaudeTranscript:
        """A further session in the same repository; its text carries the canary."""
        return ClaudeTranscript(self.claude, session_id, str(self.repo))

    def clean_dump(self) -> Any:
        """What a clean in-memory build of the files as they are now holds."""
        connection = connect(MEMORY)
        try:
            refresh_locked(connection, self.roots)
            return index_dump(connection)
        finally:
            connection.close()

    def stored_dump(self) -> Any:
        connection = connect(self.index)
        try:
            return index_dump(connection)
        finally:
            connection.close()


@pytest.fixture
def sessions() -> Iterator[Sessions]:
    """A private world under /tmp whose folders `nobody` can traverse (for the unreadable-file case)."""
    root = Path(tempfile.mkdtemp(prefix="ose-reliability-torn-"))
    root.chmod(0o755)
    try:
        yield Sessions(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _record(transcript: ClaudeTranscript) -> list[str]:
    """The pending lines of a transcript (and clear them), for writing damaged variants by hand."""
    lines = list(transcript.lines)
    transcript.lines.clear()
    return lines


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _damaged_lines(sessions: Sessions, name: str) -> tuple[Path, list[str]]:
    """Three records of a further session (a user line, a failed call and its result)."""
    transcript = sessions.transcript(name)
    transcript.user(f"Rebuild the ledger {CANARY}").bash("make ledger", f"boom {CANARY}", exit_code=2)
    return transcript.path, _record(transcript)


# Each case writes its damage and returns what must be counted: ("skipped", reason) or ("failed", n).
def _truncated_last_line(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "torn-tail")
    _write(path, ("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2]).encode())
    return "pending", None


def _invalid_json_mid_file(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "invalid-mid")
    _write(
        path,
        "\n".join([lines[0], '{"type": "user", "message": {"content": "cut ' + CANARY, *lines[1:]]).encode() + b"\n",
    )
    return "skipped", "invalid_json"


def _latin1_bytes(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "latin1")
    text = "\n".join(lines).replace("Rebuild", "R\u00e9build") + "\n"
    _write(path, text.encode("latin-1"))
    return "skipped", "bad_encoding"


def _utf16_file(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "utf16")
    _write(path, ("\n".join(lines) + "\n").encode("utf-16"))
    return "skipped", "invalid_json"


def _utf8_bom(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "bom")
    _write(path, b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    return "skipped", "invalid_json"


def _zero_filled_tail(sessions: Sessions) -> tuple[str, Any]:
    """A crash after the size was extended but before the data landed: a block of NULs, then a line."""
    path, lines = _damaged_lines(sessions, "zeros")
    _write(path, ("\n".join(lines) + "\n").encode() + b"\x00" * 4096 + b"\n")
    return "skipped", "invalid_json"


def _torn_zstd_frame(sessions: Sessions) -> tuple[str, Any]:
    """A DSH file whose writer died mid-frame (DSH sessions live in their own root)."""
    header = {
        "type": "session",
        "version": 0,
        "id": "dsh-torn",
        "createdAt": "2026-03-01T10:00:00.000Z",
        "cwd": str(sessions.repo),
    }
    event = {
        "type": "user/message",
        "seq": 1,
        "time": "2026-03-01T10:00:01.000Z",
        "data": {"id": "u1", "content": f"hello {CANARY}"},
    }
    frame = zstandard.ZstdCompressor().compress((json.dumps(header) + "\n" + json.dumps(event) + "\n").encode())
    torn = zstandard.ZstdCompressor().compress((json.dumps(event) + "\n").encode() * 50)
    _write(sessions.root / "dsh" / "--ledger--" / "dsh-torn" / "session.jsonl.zstd", frame + torn[: len(torn) // 2])
    return "skipped", "torn_frame"


def _symlink_loops(sessions: Sessions) -> tuple[str, Any]:
    (sessions.folder / "loop").symlink_to(sessions.folder)
    (sessions.folder / "up").symlink_to("..")
    (sessions.folder / "self.jsonl").symlink_to("self.jsonl")
    (sessions.folder / "ping.jsonl").symlink_to("pong.jsonl")
    (sessions.folder / "pong.jsonl").symlink_to("ping.jsonl")
    # Inside the root: a link whose target leaves the root is no unit at all (`scan.py`).
    (sessions.folder / "dangling.jsonl").symlink_to(sessions.folder / "nowhere.txt")
    return "failed", 4


def _root_is_a_looping_link(sessions: Sessions) -> tuple[str, Any]:
    """The agent's Codex root is a link to itself (the Claude root still answers)."""
    (sessions.root / "looping-root").symlink_to(sessions.root / "looping-root")
    return "unreadable-root", sessions.root / "looping-root"


def _root_is_a_dangling_link(sessions: Sessions) -> tuple[str, Any]:
    """The agent's Codex root links to a folder that is gone (an unmounted disk, a moved home)."""
    (sessions.root / "dangling-root").symlink_to(sessions.root / "unmounted" / "claude")
    return "unreadable-root", sessions.root / "dangling-root"


def _unreadable_file(sessions: Sessions) -> tuple[str, Any]:
    path, lines = _damaged_lines(sessions, "unreadable")
    _write(path, ("\n".join(lines) + "\n").encode()).chmod(0)
    return "failed", 1


def _fifo(sessions: Sessions) -> tuple[str, Any]:
    """A named pipe where a session file should be: opening it for reading blocks forever."""
    os.mkfifo(sessions.folder / "pipe.jsonl")
    return "failed", 1


def _folder_named_like_a_session(sessions: Sessions) -> tuple[str, Any]:
    (sessions.folder / "odd.jsonl").mkdir()
    return "failed", 1


CASES: dict[str, Callable[[Sessions], tuple[str, Any]]] = {
    "truncated-last-line": _truncated_last_line,
    "invalid-json-mid-file": _invalid_json_mid_file,
    "latin1-bytes": _latin1_bytes,
    "utf16-file": _utf16_file,
    "utf8-bom": _utf8_bom,
    "zero-filled-tail": _zero_filled_tail,
    "torn-zstd-frame": _torn_zstd_frame,
    "symlink-loops": _symlink_loops,
    "root-is-a-looping-link": _root_is_a_looping_link,
    "root-is-a-dangling-link": _root_is_a_dangling_link,
    "unreadable-file": _unreadable_file,
    "fifo": _fifo,
    "folder-named-like-a-session": _folder_named_like_a_session,
}
LINE_DAMAGE = ("invalid-json-mid-file", "latin1-bytes", "utf16-file", "utf8-bom", "zero-filled-tail", "torn-zstd-frame")
"""Cases where damaged lines are skipped and counted but the file as a whole was read."""


def _nothing(report_progress: Callable[..., None]) -> None:
    """Succeeds when the child could drop its privileges."""


def _refresh_in_child(report_progress: Callable[..., None], index: str, roots: dict[str, list[str]]) -> str:
    """Refresh in a child (a blocking open or a dropped privilege cannot touch the test process)."""
    return refresh_index(
        Path(index), {source: [Path(p) for p in paths] for source, paths in roots.items()}, wait_s=10
    ).model_dump_json()


def _refresh(
    sessions: Sessions, roots: dict[str, list[Path]], *, as_nobody: bool = False
) -> tuple[RefreshReport, float]:
    if as_nobody:
        sessions.index.parent.mkdir(parents=True, exist_ok=True)
        uid, gid = nobody_ids()
        os.chown(sessions.index.parent, uid, gid)
    started = time.monotonic()
    status, value = run_forked(
        _refresh_in_child,
        str(sessions.index),
        {s: [str(p) for p in paths] for s, paths in roots.items()},
        timeout_s=REFRESH_BOUND_S,
        as_nobody=as_nobody,
    )
    seconds = time.monotonic() - started
    if status != "ok":
        FIGURES.crashes += 1
    assert status == "ok", f"refresh in a child ended with {status}: {value}"
    return RefreshReport.model_validate_json(value), seconds


def _situation() -> ReplanSituation:
    return load_contract(ReplanSituation, json.dumps(situation(commands=[GOOD_COMMAND], files=[])).encode())


def _roots_for(case: str, sessions: Sessions) -> dict[str, list[Path]]:
    if case == "torn-zstd-frame":
        return {**sessions.roots, "dsh": [sessions.root / "dsh"]}
    if case.startswith("root-is-a"):  # the agent's Codex root is the bad link
        return {**sessions.roots, "codex": [sessions.root / case.removeprefix("root-is-a-").replace("-link", "-root")]}
    return sessions.roots


@pytest.mark.parametrize("case", list(CASES))
def test_refresh_index_counts_damage_and_never_fails(
    case: str, sessions: Sessions, encoder, tmp_path: Path, caplog, capsys
) -> None:
    caplog.set_level("DEBUG")
    kind, expected = CASES[case](sessions)
    roots = _roots_for(case, sessions)
    as_nobody = case == "unreadable-file" and os.geteuid() == 0
    if as_nobody and run_forked(_nothing, timeout_s=10, as_nobody=True)[0] != "ok":
        pytest.skip("running as root without the right to drop privileges: every file is readable")
    report, seconds = _refresh(sessions, roots, as_nobody=as_nobody)
    FIGURES.cases["torn_corrupt_files"] += 1
    FIGURES.notes.setdefault("torn_refresh_worst_s", 0.0)
    FIGURES.notes["torn_refresh_worst_s"] = round(max(FIGURES.notes["torn_refresh_worst_s"], seconds), 3)
    assert seconds < REFRESH_BOUND_S
    status = index_status(sessions.index, roots=roots)
    if kind == "failed":
        assert report.files_failed == expected and status.failures >= 1
    elif kind == "skipped":
        assert status.skipped_by_reason.get(expected, 0) >= 1
    elif kind == "unreadable-root":
        assert (
            report.unreadable_roots == 1
            and {root.path: root.state for root in status.roots}[str(expected)] == "unreadable"
        )
    # The good session still answers, through the whole pipeline.
    enablement = sessions.enablement(roots)
    policy = AdmissionPolicy(config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded")
    run = run_pipeline_measured(
        _situation(), provider=NativeIndexProvider(sessions.index.parent, enablement), policy=policy, encoder=encoder
    )
    assert run.decision.retrieval.reason_code == "retrieved"
    assert any(GOOD_COMMAND in item.snippet for item in run.items)
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            **run.public_outputs(),
            "report": report.model_dump_json(),
            "status": status.model_dump_json(),
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )
    freshness = {"report": report.freshness, "status": status.freshness, "lookup": run.decision.receipt.freshness}
    if kind == "pending":  # a half-written line is not damage yet: the writer may finish it
        assert freshness == {"report": "fresh", "status": "fresh", "lookup": "fresh"}
        _finish_torn_line(sessions)
        assert refresh_index(sessions.index, roots).files_appended == 1
        assert sessions.stored_dump().differences(sessions.clean_dump()) == {}
    else:
        assert freshness == {"report": "incomplete", "status": "incomplete", "lookup": "incomplete"}


@pytest.mark.parametrize("case", LINE_DAMAGE)
def test_refresh_index_skipped_damage_reports_incomplete(case: str, sessions: Sessions, tmp_path: Path) -> None:
    CASES[case](sessions)
    roots = _roots_for(case, sessions)
    report = refresh_index(sessions.index, roots)
    status = index_status(sessions.index, roots=roots)
    assert_no_canary(
        CANARY, tmp_path / "public", {"report": report.model_dump_json(), "status": status.model_dump_json()}
    )
    assert (report.freshness, status.freshness) == ("incomplete", "incomplete")


def _finish_torn_line(sessions: Sessions) -> None:
    _, lines = _damaged_lines(sessions, "torn-tail")
    with open(sessions.transcript("torn-tail").path, "a", encoding="utf-8") as handle:
        handle.write(lines[-1][len(lines[-1]) // 2 :] + "\n")


@pytest.mark.parametrize("change", ["renamed-over", "rewritten-in-place", "truncated-in-place", "deleted"])
def test_refresh_index_file_changed_while_being_read(
    change: str, sessions: Sessions, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog, capsys
) -> None:
    """The file changes under the reader: this refresh keeps what it read, the next one converges."""
    caplog.set_level("DEBUG")
    victim = sessions.transcript("victim")
    for n in range(40):
        victim.user(f"step {n} {CANARY}").bash(f"make step-{n}", f"ok {CANARY}")
    path = victim.write()
    replacement = sessions.transcript("victim")
    replacement.counter = 10_000
    for n in range(5):
        replacement.user(f"replaced {n} {CANARY}").bash(f"make other-{n}", f"changed {CANARY}", exit_code=1)
    new_bytes = "".join(line + "\n" for line in replacement.lines).encode()

    def change_file() -> None:
        if change == "renamed-over":
            _write(path.with_suffix(".new"), new_bytes).replace(path)
        elif change == "rewritten-in-place":
            with open(path, "r+b") as handle:
                handle.write(new_bytes)
                handle.truncate()
        elif change == "truncated-in-place":
            os.truncate(path, path.stat().st_size // 3)
        else:
            path.unlink()

    class ChangedWhileRead(_reading.JsonLines):
        def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
            for count, pair in enumerate(super().__iter__()):
                if count == 10 and self.path == path:
                    change_file()
                yield pair

    # Fault injection: another writer's change must land mid-read (after the 10th record), a race no
    # public seam can time; the reader's iteration is the only place that marks that point.
    monkeypatch.setattr(claude, "JsonLines", ChangedWhileRead)
    first = refresh_index(sessions.index, sessions.roots)
    monkeypatch.undo()
    second = refresh_index(sessions.index, sessions.roots)
    third = refresh_index(sessions.index, sessions.roots)
    FIGURES.cases["torn_corrupt_files"] += 1
    assert first.files_seen == 2 and second.content_changed and not third.content_changed
    assert sessions.stored_dump().differences(sessions.clean_dump()) == {}
    assert third.freshness == "fresh"
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            "reports": [r.model_dump_json() for r in (first, second, third)],
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )


@pytest.mark.parametrize("change", ["replaced", "deleted", "truncated", "grown"])
def test_refresh_index_file_changed_between_listing_and_reading(
    change: str, sessions: Sessions, tmp_path: Path, caplog, capsys
) -> None:
    """A unit listed by the scan changes before its turn comes: counted, and the next refresh converges."""
    caplog.set_level("DEBUG")
    paths = []
    for n in range(3):
        transcript = sessions.transcript(f"later-{n}")
        transcript.user(f"later {n} {CANARY}").bash(f"make later-{n}", f"ok {CANARY}")
        paths.append(transcript.write())
    target = sorted(paths)[-1]

    def progress(done: int, total: int) -> None:
        if done != 1:
            return
        if change == "replaced":
            _write(target.with_suffix(".tmp"), target.read_bytes()[: target.stat().st_size // 2] + b"\n").replace(
                target
            )
        elif change == "deleted":
            target.unlink()
        elif change == "truncated":
            os.truncate(target, 10)
        else:
            with open(target, "ab") as handle:
                handle.write(target.read_bytes())

    first = refresh_index(sessions.index, sessions.roots, progress=progress)
    second = refresh_index(sessions.index, sessions.roots)
    FIGURES.cases["torn_corrupt_files"] += 1
    assert first.files_seen == 4
    assert sessions.stored_dump().differences(sessions.clean_dump()) == {}
    # the replacement ends in a cut line closed by a newline: a damaged line stays `incomplete`
    expected = "incomplete" if change == "replaced" else "fresh"
    assert second.freshness == expected and refresh_index(sessions.index, sessions.roots).content_changed is False
    captured = capsys.readouterr()
    assert_no_canary(
        CANARY,
        tmp_path / "public",
        {
            "reports": [first.model_dump_json(), second.model_dump_json()],
            "log": caplog.text,
            "stdout": captured.out,
            "stderr": captured.err,
        },
    )


_MEASURE = """
import gc, json, sys, time
from pathlib import Path
from obelisk_session_evidence.providers.native.index.refresh import refresh_index

def kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

gc.collect()
try:  # reset the peak (VmHWM) to the current RSS: the imports' own peak must not hide the refresh's
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
except OSError:
    pass
before = kib("VmRSS")
started = time.monotonic()
report = refresh_index(Path(sys.argv[1]), {"claude": [Path(sys.argv[2])]})
seconds = time.monotonic() - started
print(json.dumps({"delta_kib": kib("VmHWM") - before, "seconds": seconds, "report": json.loads(report.model_dump_json())}))
"""


@pytest.mark.parametrize(
    ("shape", "factor"),
    [("tool-output", 3), ("invalid-json", 3), ("message-text", 5)],
)
def test_refresh_index_streams_a_huge_line_with_bounded_memory(
    shape: str, factor: int, sessions: Sessions, tmp_path: Path
) -> None:
    """One line of 100 MB (8 MB by default) between good lines: read once, memory a small multiple of it."""
    path, lines = _damaged_lines(sessions, "huge")
    head = json.loads(lines[0])
    with open(path, "w", encoding="utf-8") as out:
        out.write(lines[0] + "\n")
        if shape == "tool-output":
            out.write(lines[1] + "\n")
            out.write(lines[2][: lines[2].index('"content": "') + len('"content": "')])
            _fill(out, "x", HUGE_LINE_BYTES)
            out.write(lines[2][lines[2].index('", "is_error"') :] + "\n")
        elif shape == "invalid-json":
            out.write('{"type": "user", "message": "')
            _fill(out, "x", HUGE_LINE_BYTES)
            out.write("\n")
        else:
            record = {**head, "uuid": "huge-text", "message": {"role": "user", "content": "@@"}}
            before, after = json.dumps(record).split("@@")
            out.write(before)
            _fill(out, f"word {CANARY} ", HUGE_LINE_BYTES)
            out.write(after + "\n")
        out.write(json.dumps({**head, "uuid": "after-the-huge-line"}) + "\n")
    completed = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(sessions.index), str(sessions.claude)],
        capture_output=True,
        timeout=600,
        check=False,
    )
    FIGURES.cases["torn_corrupt_files"] += 1
    if completed.returncode != 0:
        FIGURES.crashes += 1
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")[-300:].replace(CANARY, "<canary>")
    measured = json.loads(completed.stdout)
    peak_mb = measured["delta_kib"] / 1024
    FIGURES.peaks_mb[f"huge-line-{shape}-{HUGE_LINE_BYTES // 1_000_000}MB"] = peak_mb
    assert peak_mb * 2**20 < factor * HUGE_LINE_BYTES + 64 * 2**20
    report = measured["report"]
    assert report["files_failed"] == 0 and report["messages_written"] >= 2
    if shape == "invalid-json":
        assert report["skipped_records"] == 1
    assert_no_canary(CANARY, tmp_path / "public", {"stdout": completed.stdout, "stderr": completed.stderr})


def _fill(out: Any, unit: str, size: int) -> None:
    chunk = unit * max(1, (1 << 20) // len(unit))
    for _ in range(size // len(chunk)):
        out.write(chunk)
