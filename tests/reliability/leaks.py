"""The canary scan of issue 2 over everything public a reliability test produced.

Public outputs (decision and receipt JSON, error strings, captured logs, stdout and stderr, CLI
output) are written as files into one folder and scanned with `tests.privacy`: raw bytes, and every
base64 run decoded. Places are file names chosen here, never the matching text.
"""

from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.privacy import canary_places_in_files
from tests.reliability.figures import FIGURES


def error_texts(error: BaseException) -> list[str]:
    """What an exception shows anywhere: message, repr, args and attributes, along its whole chain."""
    texts, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), repr(current.args), repr(vars(current))]
        current = current.__cause__ or current.__context__
    return texts


def assert_no_canary(
    canary: str,
    folder: Path,
    outputs: Mapping[str, str | bytes | Iterable[str]],
    *,
    also_scan: Iterable[Path] = (),
) -> None:
    """Write each public output into `folder` and fail when the canary is in any of them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in outputs.items():
        if isinstance(value, bytes):
            data = value
        else:
            text = value if isinstance(value, str) else "\n".join(value)
            data = text.encode("utf-8", "surrogatepass")
        (folder / f"{name}.out").write_bytes(data)
    places = canary_places_in_files(canary, folder, *(path for path in also_scan if path.exists()))
    FIGURES.leak_scans += 1
    FIGURES.leaks += len(places)
    assert places == [], f"canary found in public output: {places}"
