"""Tables, percentiles and the machine description the bench report is made of (markdown only)."""

import datetime
import importlib.metadata
import os
import platform
import shutil
import sqlite3
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
PACKAGES: Final = ("prefect", "tiktoken", "rapidfuzz", "pydantic", "detect-secrets")


@dataclass(slots=True)
class Table:
    """One section of the report: a title, column names, rows of cells and notes under it."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        """Append a row; missing trailing cells are blank."""
        texts = tuple("" if cell is None else str(cell) for cell in cells)
        self.rows.append(texts + ("",) * (len(self.columns) - len(texts)))

    def skip(self, what: str, reason: str) -> None:
        """A row for something not measured, with the reason in the second column."""
        self.add(what, f"not run ({reason})")

    def markdown(self) -> str:
        """The table as GitHub markdown, notes as a list under it."""
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def percentile(values: Sequence[float], percent: float) -> float:
    """Nearest-rank percentile (the value at rank ceil(p/100 * n)); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-percent * len(ordered) // 100))
    return ordered[int(rank) - 1]


def ms(seconds: float) -> str:
    """Seconds as milliseconds, to a precision that suits the size."""
    if seconds != seconds:  # NaN
        return "-"
    value = seconds * 1000
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def ratio(numerator: float, denominator: float) -> str:
    """`numerator / denominator` as `12.3×`, or `-` when either is missing."""
    if not denominator or numerator != numerator or denominator != denominator:
        return "-"
    value = numerator / denominator
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


def count(value: float) -> str:
    """An integer with thousands separators."""
    return f"{value:,.0f}"


def machine_description() -> list[tuple[str, str]]:
    """What the numbers were measured on: cores, memory, CPU, load, versions, commit."""
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return [
        ("date", datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        (
            "machine",
            f"{len(os.sched_getaffinity(0))} cores usable ({os.cpu_count()} online), "
            f"{_memory_gib():.1f} GiB RAM, {_cpu_model()}",
        ),
        ("load average at start", " / ".join(f"{value:.1f}" for value in os.getloadavg()) + " (1/5/15 min)"),
        ("os", f"{platform.system()} {platform.release()}"),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("sqlite", f"{sqlite3.sqlite_version} (FTS5)"),
        ("packages", ", ".join(versions)),
        ("ripgrep", rg_version() or "not installed (run `make bench-setup`)"),
        ("commit", _commit()),
    ]


def rg_version() -> str | None:
    """`ripgrep 13.0.0`, or None when `rg` is not on PATH."""
    binary = shutil.which("rg")
    if binary is None:
        return None
    answer = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return answer.stdout.splitlines()[0] if answer.returncode == 0 and answer.stdout else None


def render(title: str, command: str, header: list[tuple[str, str]], tables: list[Table], *, seconds: float) -> str:
    """The whole report: title, how it was made, the machine, then each section's table."""
    lines = [f"# {title}", "", f"Produced by `{command}` in {seconds:.0f} s.", ""]
    lines += [f"- **{name}**: {value}" for name, value in header]
    lines += [f"- **load average at end**: {' / '.join(f'{v:.1f}' for v in os.getloadavg())}", ""]
    return "\n".join(lines) + "\n" + "\n".join(table.markdown() for table in tables)


def _memory_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + uncommitted changes" if dirty else "")
