"""The figures the reliability suite reports (issue 9's note): cases, crashes, leaks, scope, latency.

Tests record into the one `FIGURES` object; `conftest.py` prints it at the end of the run, and
writes it as JSON to `$OSE_RELIABILITY_FIGURES` when that variable names a file.
"""

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

FULL: Final = os.environ.get("OSE_RELIABILITY_FULL") == "1"
"""`make test-reliability`: full example counts and sizes; the default CI run uses smaller ones."""
FIGURES_FILE_VARIABLE: Final = "OSE_RELIABILITY_FIGURES"


@dataclass
class Figures:
    """Counters filled by the tests; every count starts at zero."""

    cases: Counter[str] = field(default_factory=Counter)
    """Cases tried per category."""
    crashes: int = 0
    """Runs that ended in an exception the code under test did not turn into a typed value."""
    leaks: int = 0
    """Places where a canary was found in public output."""
    leak_scans: int = 0
    """Canary scans run."""
    out_of_scope_rows: int = 0
    """Rows outside the requested scope that reached a result."""
    worst_fault_latency_s: float = 0.0
    """Slowest typed answer under a provider fault."""
    worst_fault_case: str = ""
    worst_hostile_latency_s: float = 0.0
    """Slowest pipeline run over hostile terms."""
    worst_hostile_case: str = ""
    peaks_mb: dict[str, float] = field(default_factory=dict)
    """Peak memory per measured case, in MB."""
    notes: dict[str, Any] = field(default_factory=dict)

    def fault_latency(self, case: str, seconds: float) -> None:
        """Keep the slowest typed answer under a fault."""
        if seconds >= self.worst_fault_latency_s:
            self.worst_fault_latency_s, self.worst_fault_case = seconds, case

    def hostile_latency(self, case: str, seconds: float) -> None:
        """Keep the slowest run over hostile input."""
        if seconds >= self.worst_hostile_latency_s:
            self.worst_hostile_latency_s, self.worst_hostile_case = seconds, case

    def as_dict(self) -> dict[str, Any]:
        """Everything, as plain JSON values."""
        return {
            "full_run": FULL,
            "cases": dict(sorted(self.cases.items())),
            "cases_total": sum(self.cases.values()),
            "crashes": self.crashes,
            "leaks": self.leaks,
            "leak_scans": self.leak_scans,
            "out_of_scope_rows_returned": self.out_of_scope_rows,
            "worst_fault_latency_s": round(self.worst_fault_latency_s, 3),
            "worst_fault_case": self.worst_fault_case,
            "worst_hostile_latency_s": round(self.worst_hostile_latency_s, 3),
            "worst_hostile_case": self.worst_hostile_case,
            "peaks_mb": {name: round(value, 1) for name, value in sorted(self.peaks_mb.items())},
            "notes": self.notes,
        }

    def write(self) -> None:
        """Write the figures to `$OSE_RELIABILITY_FIGURES`, when set."""
        target = os.environ.get(FIGURES_FILE_VARIABLE)
        if target:
            Path(target).write_text(json.dumps(self.as_dict(), indent=2) + "\n", encoding="utf-8")


FIGURES: Final = Figures()
