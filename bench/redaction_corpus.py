"""Redaction on the real corpus: what the detectors flag, how fast, and what a naive `sk-` pattern would.

Two populations: the text the index stores and snippets are cut from (messages, tool commands and
outputs, summaries, as the parsers emit them), and every raw line of the corpus files (which also
holds fields the index never stores). The corpus holds no live secrets (its publishers sanitised
it), so every finding is a false positive unless it is a credential-shaped test value; the
findings are printed masked (kind, then the first four characters) for a person to judge.

    .venv/bin/python -m bench.redaction_corpus
"""

import re
import time
from collections import Counter

from bench._corpus import REAL_CORPUS, real_outcomes
from obelisk_session_evidence.providers.redaction.redaction import find_secrets

NAIVE_SK = re.compile(r"sk-[A-Za-z0-9_-]{20,}")
"""The naive pattern the issue warns about (no token boundary, no format)."""


def indexed_texts() -> list[str]:
    texts = []
    for _, outcome in real_outcomes():
        texts.extend(m.text for m in outcome.messages)
        texts.extend(c.command_text or "" for c in outcome.tool_calls)
        texts.extend(c.output_excerpt or "" for c in outcome.tool_calls)
        texts.extend(s.text for s in outcome.summaries)
    return [text for text in texts if text]


def raw_lines() -> list[str]:
    return [
        line
        for path in sorted(REAL_CORPUS.rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]


def report(name: str, texts: list[str]) -> None:
    chars = sum(map(len, texts))
    started = time.process_time()
    findings = [(text, finding) for text in texts for finding in find_secrets(text)]
    seconds = time.process_time() - started
    kinds = Counter(finding.kind for _, finding in findings)
    naive = sum(len(NAIVE_SK.findall(text)) for text in texts)
    print(
        f"{name}: texts={len(texts)} chars={chars} findings={len(findings)} per_MB={len(findings) / (chars / 1e6):.2f} "
        f"cpu_s={seconds:.2f} MB_per_s={chars / 1e6 / seconds:.2f} naive_sk_hits={naive}"
    )
    for kind, count in kinds.most_common():
        print(f"  {kind}: {count}")
    for text, finding in findings:
        value = text[finding.start : finding.end]
        print(f"    {finding.kind}: {value[:4]}… ({len(value)} chars)")


if __name__ == "__main__":
    report("indexed text", indexed_texts())
    report("raw corpus lines", raw_lines())
    print(
        "naive sk- matches in raw lines:",
        Counter(m[:24] for line in raw_lines() for m in NAIVE_SK.findall(line)).most_common(5),
    )
