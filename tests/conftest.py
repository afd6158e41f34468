"""Shared fixtures: a private state dir per test, a clean environment, one encoder per session."""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Prefect reads its home when first configured: point it at a throwaway folder before any import.
_PREFECT_HOME = Path(tempfile.mkdtemp(prefix="ose-prefect-home-"))
os.environ["PREFECT_HOME"] = str(_PREFECT_HOME)
os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(_PREFECT_HOME / "storage")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

_SHARED_CACHE = Path(tempfile.mkdtemp(prefix="ose-tiktoken-"))


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Strip variables that change behaviour; give each test its own state dir and home."""
    for name in list(os.environ):
        if name.startswith("OBELISK_") or name == "TIKTOKEN_CACHE_DIR":
            monkeypatch.delenv(name)
    state = tmp_path / "state"
    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(state))
    # An empty home: the agents' standard session folders (which `enable` looks for) are absent
    # unless a test makes them, whatever the machine running the tests holds.
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))  # beside tmp_path, not in it
    return state


@pytest.fixture(scope="session")
def encoder():
    """The offline o200k_base encoder, loaded once."""
    from obelisk_session_evidence.tokenizer import load_encoder

    return load_encoder(_SHARED_CACHE)


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (startup is slow on 2 cores)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
