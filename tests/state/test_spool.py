"""The private spool under faults and over time (issue 26 item 3, issue 27 item 5): read only a
regular file whose bytes still have their digest, never blocked by a FIFO, expired after the
configured retention, owner-only."""

import json
import os
import stat
import subprocess
import sys
import threading
import time

import pytest

from fixtures.situations import FIXTURE_PROJECT, situation
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.lifecycle.enablement import status
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import (
    SpoolRefused,
    held_count,
    read_spooled,
    spool_document,
    spooled_path,
)

DOCUMENT = json.dumps(situation()).encode()
DEADLINE_S = 20.0
"""How long a read may take before it counts as hung (it takes milliseconds when it does not block)."""


def _refusal(paths: StatePaths, reference: str) -> str | None:
    """The refusal of reading `reference`, read on a thread: a read that blocks fails the test."""
    outcome: list[str | None] = []

    def read() -> None:
        try:
            read_spooled(paths, "situations", reference, max_bytes=1_000_000)
            outcome.append(None)
        except SpoolRefused as refused:
            outcome.append(refused.refusal)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(DEADLINE_S)
    assert not reader.is_alive(), "reading the spooled document blocked"
    return outcome[0]


@pytest.fixture
def spooled(tmp_path):
    paths = StatePaths(tmp_path / "state")
    return paths, spool_document(paths, "situations", DOCUMENT)


def test_a_fifo_in_place_of_a_spooled_document_is_refused_without_blocking(spooled):
    paths, reference = spooled
    path = spooled_path(paths, "situations", reference)
    path.unlink()
    os.mkfifo(path)
    assert _refusal(paths, reference) == "spool_not_regular"


def test_a_symbolic_link_in_place_of_a_spooled_document_is_refused_even_with_the_right_bytes(spooled, tmp_path):
    paths, reference = spooled
    path = spooled_path(paths, "situations", reference)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(DOCUMENT)
    path.unlink()
    path.symlink_to(elsewhere)
    assert _refusal(paths, reference) == "spool_not_regular"


def test_a_spooled_document_whose_bytes_changed_is_refused(spooled):
    paths, reference = spooled
    path = spooled_path(paths, "situations", reference)
    path.write_bytes(DOCUMENT.replace(b"situation-1", b"situation-2"))
    assert _refusal(paths, reference) == "spool_altered"
    assert _refusal(paths, "sha256:" + "0" * 64) == "spool_absent"


def test_spooled_documents_are_owner_only_even_in_a_folder_made_before(tmp_path):
    paths = StatePaths(tmp_path / "state")
    (paths.spool_dir / "situations").mkdir(parents=True, mode=0o755)
    (paths.spool_dir / "situations").chmod(0o755)
    reference = spool_document(paths, "situations", DOCUMENT)
    assert stat.S_IMODE(spooled_path(paths, "situations", reference).stat().st_mode) == 0o600
    assert stat.S_IMODE((paths.spool_dir / "situations").stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.spool_dir.stat().st_mode) == 0o700


def _age(paths: StatePaths, reference: str, hours: float) -> None:
    then = time.time() - hours * 3600
    os.utime(spooled_path(paths, "situations", reference), (then, then))


def test_a_spooled_document_expires_after_a_day_by_default(spooled):
    paths, reference = spooled
    _age(paths, reference, 23)
    assert _refusal(paths, reference) is None
    _age(paths, reference, 25)
    assert _refusal(paths, reference) == "spool_expired"
    assert not spooled_path(paths, "situations", reference).exists()


def test_the_retention_is_configurable(spooled):
    paths, reference = spooled
    write_private(paths.config_file, EnablementConfig(spool_retention_hours=1).model_dump_json().encode())
    _age(paths, reference, 2)
    assert _refusal(paths, reference) == "spool_expired"


_NEXT_PROCESS_SPOOLS = """
import sys
from pathlib import Path
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import spool_document
print(spool_document(StatePaths(Path(sys.argv[1])), "situations", b'{"other": 1}'))
"""


def test_expired_documents_are_swept_when_the_spool_is_next_used(tmp_path):
    paths = StatePaths(tmp_path / "state")
    old = spool_document(paths, "situations", DOCUMENT)
    _age(paths, old, 30)
    spooled = subprocess.run(  # the next process: it has not swept this spool yet
        [sys.executable, "-c", _NEXT_PROCESS_SPOOLS, str(paths.root)], capture_output=True, text=True, check=True
    )
    kept = spooled.stdout.strip()
    assert not spooled_path(paths, "situations", old).exists()
    assert spooled_path(paths, "situations", kept).exists()
    assert held_count(paths, "situations") == 1


def test_spooling_the_same_document_again_starts_its_retention_again(spooled):
    paths, reference = spooled
    _age(paths, reference, 20)
    assert spool_document(paths, "situations", DOCUMENT) == reference
    assert time.time() - spooled_path(paths, "situations", reference).stat().st_mtime < 3600


def test_status_reports_how_many_situations_the_spool_holds(tmp_path):
    paths = StatePaths(tmp_path / "state")
    assert status(FIXTURE_PROJECT, paths=paths).spooled_situations == 0
    spool_document(paths, "situations", DOCUMENT)
    spool_document(paths, "situations", b'{"other": 1}')
    report = status(FIXTURE_PROJECT, paths=paths)
    assert (report.spooled_situations, report.spool_retention_hours) == (2, 24)
