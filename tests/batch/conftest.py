"""Batch fixtures: the state paths of this test, with the stand-in provider and scope enabled."""

import pytest

from obelisk_session_evidence.state import StatePaths, state_paths
from tests.batch import standin


@pytest.fixture
def paths(clean_environment) -> StatePaths:
    """This test's state directory, with the fixture scope enabled on the stand-in provider."""
    return state_paths()


@pytest.fixture
def enabled(paths: StatePaths, monkeypatch: pytest.MonkeyPatch) -> StatePaths:
    """The fixture scope enabled, answered by the stand-in provider."""
    standin.install(monkeypatch=monkeypatch)
    standin.enable_fixture_scope(paths)
    return paths
