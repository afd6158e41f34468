"""The real cases through both providers: the Obelisk adapter (over the stand-in) against the native
index, verdict by verdict. Ids and verdicts only (the cases are public, their history is not printed).

    .venv/bin/python -m bench.obelisk_real_cases [--limit N] [--case ID ...]

Each case's history is laid out as the real arm lays it out (`qualify.real.write_history`): the
agent's home, another agent's home, and its sessions in other repositories. The native index reads
both homes, as in the real arm; the stand-in indexes the agent's home (Obelisk reads one HOME). Both
decide with the default thresholds. Pi cases are left out: the stand-in indexes Claude and Codex
only (the recording build's Pi provider was a stub), so they say nothing about the adapter.
"""

import argparse
import subprocess
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from fixtures.obelisk_stand_in import install_stand_in
from obelisk_session_evidence.contracts.config import AdmissionPolicy, EnablementConfig
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.qualify.arms import run_admitted_retrieval
from obelisk_session_evidence.qualify.real import as_qualification_case, case_provider
from obelisk_session_evidence.qualify.real_cases import load_real_cases
from obelisk_session_evidence.tokenizer import load_encoder

OBELISK_SOURCES = ("claude", "codex")


def compare(case_ids: list[str], limit: int | None, base: Path | None = None) -> list[tuple[str, str, str, str, str]]:
    """(case, expected, native verdict, obelisk verdict, obelisk freshness) per decided case; the
    histories are written under `base` (default: a new temporary folder)."""
    thresholds = RouteThresholds()
    cases = [c for c in load_real_cases() if c.group.source in OBELISK_SOURCES]
    cases = [c for c in cases if not case_ids or c.case_id in case_ids][:limit]
    rows = []
    base = base or Path(tempfile.mkdtemp(prefix="obelisk-real-"))
    encoder = load_encoder(base / "tiktoken")
    for case in cases:
        qualification = as_qualification_case(case)
        if qualification is None:
            continue
        folder = base / case.case_id
        native, policy = case_provider(case, folder)
        native_run, _ = run_admitted_retrieval(
            qualification, provider=native, encoder=encoder, thresholds=thresholds, policy=policy
        )
        stand_in = install_stand_in(folder / "stand-in", home=folder / "home")
        subprocess.run([str(stand_in.executable), "--build"], check=True, capture_output=True)
        (enablement,) = policy.config.enablements if policy.config else ()
        enablement = enablement.model_copy(update={"provider": "obelisk", "enabled_at": datetime.now(UTC)})
        obelisk = ObeliskProvider(
            enablement,
            binary=str(stand_in.executable),
            work_dir=folder / "obelisk-work",
            obelisk_home=folder / "home" / ".obelisk",
            timeout_s=30.0,
        )
        obelisk_policy = AdmissionPolicy(
            config=EnablementConfig(enablements=[enablement]), load_reason_code="config_loaded"
        )
        obelisk_run, _ = run_admitted_retrieval(
            qualification, provider=obelisk, encoder=encoder, thresholds=thresholds, policy=obelisk_policy
        )
        rows.append(
            (
                case.case_id,
                case.expected_verdict,
                native_run.verdict,
                obelisk_run.verdict,
                str(obelisk_run.freshness),
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--case", dest="cases", action="append", default=[])
    options = parser.parse_args()
    rows = compare(options.cases, options.limit)
    differ = [row for row in rows if row[2] != row[3]]
    for case_id, expected, native, obelisk, freshness in differ:
        print(f"differs {case_id}: expected {expected}, native {native}, obelisk {obelisk} ({freshness})")
    right = Counter((row[2] == row[1], row[3] == row[1]) for row in rows)
    print(f"cases {len(rows)}, same verdict {len(rows) - len(differ)}, different {len(differ)}")
    print(f"right: native {right[True, True] + right[True, False]}, obelisk {right[True, True] + right[False, True]}")


if __name__ == "__main__":
    main()
