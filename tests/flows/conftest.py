"""Flow fixtures: the batch tests' state paths and stand-in provider, shared."""

from tests.batch.conftest import enabled, paths, standin_backend

__all__ = ["enabled", "paths", "standin_backend"]  # re-exported fixtures
