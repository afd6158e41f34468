"""Fixtures for the Obelisk adapter: the recordings' HOME, the stand-in over it, enablements."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn, install_stand_in
from fixtures.obelisk_stand_in.corpus_home import lay_out_home
from providers.obelisk.discovery import clear_probe_cache


@pytest.fixture(autouse=True)
def forget_probes() -> Iterator[None]:
    """Each test probes afresh (the root conftest already strips `OBELISK_*` variables)."""
    clear_probe_cache()
    yield
    clear_probe_cache()


@pytest.fixture
def corpus_home(tmp_path: Path) -> Path:
    """The real corpus laid out as in the recordings (a fresh copy: tests may change files)."""
    return lay_out_home(tmp_path / "home")


@pytest.fixture
def stand_in(tmp_path: Path, corpus_home: Path) -> StandIn:
    """The stand-in CLI with HOME = `corpus_home`, its index not built yet."""
    return install_stand_in(tmp_path / "stand-in", home=corpus_home)
