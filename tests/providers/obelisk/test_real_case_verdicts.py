"""Real cases (qualify/real_cases) through both providers give the same verdict: the adapter finds
what the native index finds. The whole set runs in `python -m bench.obelisk_real_cases`; these
cases each needed one part of the adapter (named beside them)."""

from pathlib import Path

import pytest

from bench.obelisk_real_cases import compare
from fixtures.shared import REAL_CORPUS

CASES = {
    "sp-gqc-review-test-edit2": "the edit after the failure, named by its absolute path",
    "sp-4te-source-chain-exact": "a multi-line command call_shape cannot read: its words, not its text",
    "cx-npm-test-red-exact": "a Codex run still running when it answered: its write_stdin's exit",
    "sp-gqc-push-again-bare": "`git push` after `git push 2>&1` failed: the program and subcommand",
}


@pytest.mark.skipif(not REAL_CORPUS.is_dir(), reason="the real corpus is not beside the checkout")
def test_the_adapter_gives_the_native_verdicts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SESSION_EVIDENCE_REAL_CORPUS", str(REAL_CORPUS))
    rows = compare(list(CASES), None, tmp_path)
    assert sorted(row[0] for row in rows) == sorted(CASES)
    assert [(case, native, obelisk) for case, _, native, obelisk, _ in rows if native != obelisk] == []
    assert all(freshness == "fresh" for *_, freshness in rows)
