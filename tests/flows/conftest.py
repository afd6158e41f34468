"""Flow fixtures: the batch tests' state paths and stand-in provider, shared."""

from tests.batch.conftest import enabled, paths, standin_backend  # noqa: F401 - re-exported fixtures
