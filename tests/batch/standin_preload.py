"""A Dask worker preload: installs the stand-in provider in each worker process."""

from tests.batch import standin

standin.install()
