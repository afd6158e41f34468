"""Batch fixtures: the state paths of this test, the fixture scope enabled, the stand-in backend."""

import pytest

from obelisk_session_evidence.compose import use_provider_factory
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from tests.batch import standin


@pytest.fixture
def paths(clean_environment) -> StatePaths:
    """This test's state directory, with the fixture scope enabled on the stand-in provider."""
    return state_paths()


@pytest.fixture
def enabled(paths: StatePaths) -> StatePaths:
    """The fixture scope enabled (tests pass the stand-in as their provider factory)."""
    standin.enable_fixture_scope(paths)
    return paths


@pytest.fixture
def standin_backend():
    """For flows run in this process (they take no provider argument): the stand-in answers."""
    standin.install()
    yield
    use_provider_factory(None)
