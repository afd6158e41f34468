"""The fixed template: values embedded as inert JSON literals, the code the same for every value."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import StandIn
from providers.obelisk.template import (
    CODE,
    CODE_MARKER,
    DATA_MARKER,
    DATA_NAMES,
    TEMPLATE_ID,
    TemplateLimits,
    js_literal,
    query_script,
)

LIMITS = TemplateLimits(per_term=25, rows=40, snippet_chars=300, sessions=200, markers=32)
HOSTILE_TERMS = [
    pytest.param('say "hi"', id="double-quote"),
    pytest.param("it's", id="single-quote"),
    pytest.param("run `rm -rf /`", id="backtick"),
    pytest.param("${process.exit(1)}", id="template-substitution"),
    pytest.param("*/ process.exit(1); /*", id="comment-close"),
    pytest.param("line one\nline two\r\n", id="newlines"),
    pytest.param("</script><script>alert(1)</script>", id="script-close"),
    pytest.param("<!-- html comment -->", id="html-comment"),
    pytest.param("a\u2028b\u2029c", id="line-separators"),
    pytest.param("nul\x00byte", id="nul"),
    pytest.param("back\\slash\\u0041", id="backslash-escapes"),
    pytest.param('"]; process.exit(1); const X = ["', id="array-breakout"),
    pytest.param("\ud800 lone surrogate", id="lone-surrogate"),
    pytest.param("emoji 🙂 and ключ", id="non-ascii"),
    pytest.param("x" * (1024 * 1024), id="one-megabyte"),
]


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("plain", '"plain"'),
        ('"', '"\\""'),
        ("</script>", '"\\u003c/script\\u003e"'),
        ("a&b", '"a\\u0026b"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("\x00\n", '"\\u0000\\n"'),
        ("`${x}`", '"`${x}`"'),
        (None, "null"),
        ([1, "a"], '[1,"a"]'),
        ({"k": 2}, '{"k":2}'),
    ],
)
def test_js_literal_escapes(value: object, literal: str) -> None:
    assert js_literal(value) == literal
    assert json.loads(literal) == value


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_js_literal_rejects_non_json_numbers(value: float) -> None:
    with pytest.raises(ValueError):
        js_literal(value)


@pytest.mark.parametrize("term", HOSTILE_TERMS)
def test_js_literal_is_one_printable_ascii_line(term: str) -> None:
    literal = js_literal([term])
    assert all(" " <= char <= "~" for char in literal)
    assert "</" not in literal and "\u2028" not in literal
    assert json.loads(literal) == [term]


def test_query_script_data_block_then_fixed_code() -> None:
    script = query_script(
        terms=("retry",), sources=("claude",), roots=("/r",), after=None, before=None, limits=LIMITS
    )
    lines = script.split("\n")
    start, end = lines.index(DATA_MARKER), lines.index(CODE_MARKER)
    assert [line.split(" ")[1] for line in lines[start + 1 : end]] == list(DATA_NAMES)
    assert "\n".join(lines[end + 1 :]) == CODE
    assert f'const TEMPLATE = "{TEMPLATE_ID}";' in lines


def test_query_script_code_never_calls_console() -> None:
    assert "console" not in CODE


@pytest.mark.parametrize("term", HOSTILE_TERMS)
def test_query_script_values_stay_data(term: str, stand_in: StandIn, tmp_path: Path) -> None:
    script = query_script(
        terms=(term, "retry"),
        sources=("claude",),
        roots=("/r",),
        after="2026-08-01T00:00:00.000Z",
        before=None,
        limits=LIMITS,
    )
    path = tmp_path / "query.js"
    path.write_text(script, encoding="utf-8")
    finished = subprocess.run([str(stand_in.executable), "--query", str(path)], capture_output=True)
    assert finished.returncode == 0
    (report,) = stand_in.queries()
    assert report["data_block_ok"] is True
    assert report["consts"]["TERMS"] == [term, "retry"]
    assert report["consts"]["AFTER"] == "2026-08-01T00:00:00.000Z"
    assert report["code_sha256"] == _benign_code_digest(stand_in, tmp_path)


def test_stand_in_refuses_spliced_code(stand_in: StandIn, tmp_path: Path) -> None:
    script = query_script(
        terms=("retry",), sources=("claude",), roots=("/r",), after=None, before=None, limits=LIMITS
    ).replace('const TERMS = ["retry"];', 'const TERMS = ["retry"]; process.exit(1);')
    path = tmp_path / "query.js"
    path.write_text(script, encoding="utf-8")
    finished = subprocess.run([str(stand_in.executable), "--query", str(path)], capture_output=True)
    assert finished.returncode == 1
    assert json.loads(finished.stdout)["error"].startswith("stand-in refused")
    assert stand_in.queries()[-1]["data_block_ok"] is False


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(
    "terms",
    [("pytest -x tests/unit", "retry"), ("ab",), ("loop itself", "RETRY", "missing term")],
)
def test_query_script_runs_in_node_as_the_stand_in_emulates(
    terms: tuple[str, ...], stand_in: StandIn, repo_root: str, tmp_path: Path
) -> None:
    """The real JavaScript, run by Node on stub helpers of ours, answers as the stand-in does."""
    script = query_script(
        terms=terms,
        sources=("claude", "codex", "deepseek"),
        roots=(repo_root,),
        after="2026-08-01T09:01:30.000Z",
        before=None,
        limits=TemplateLimits(per_term=10, rows=5, snippet_chars=30, sessions=200, markers=32),
    )
    path = tmp_path / "query.js"
    path.write_text(script, encoding="utf-8")
    harness = Path(__file__).with_name("node_harness.js")
    by_node = subprocess.run(
        ["node", str(harness), str(stand_in.data_path), str(path)], capture_output=True, check=True
    )
    by_stand_in = subprocess.run(
        [str(stand_in.executable), "--query", str(path)], capture_output=True
    )
    assert json.loads(by_node.stdout) == json.loads(by_stand_in.stdout)


def _benign_code_digest(stand_in: StandIn, tmp_path: Path) -> str:
    script = query_script(
        terms=("retry",), sources=("codex",), roots=("/x",), after=None, before=None, limits=LIMITS
    )
    path = tmp_path / "benign.js"
    path.write_text(script, encoding="utf-8")
    subprocess.run(
        [str(stand_in.executable), "--query", str(path)], capture_output=True, check=True
    )
    return stand_in.queries()[-1]["code_sha256"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_query_script_prints_lone_surrogates_as_replacement_characters(
    stand_in: StandIn, repo_root: str, tmp_path: Path
) -> None:
    data = json.loads(stand_in.data_path.read_text())
    data["messages"][0]["text"] = "retry \ud83d alone \udc00"
    stand_in.data_path.write_text(json.dumps(data))
    script = query_script(
        terms=("retry",),
        sources=("claude",),
        roots=(repo_root,),
        after=None,
        before=None,
        limits=LIMITS,
    )
    path = tmp_path / "query.js"
    path.write_text(script, encoding="utf-8")
    harness = Path(__file__).with_name("node_harness.js")
    by_node = subprocess.run(
        ["node", str(harness), str(stand_in.data_path), str(path)], capture_output=True, check=True
    )
    assert b"\\ud83d" not in by_node.stdout
    by_stand_in = subprocess.run(
        [str(stand_in.executable), "--query", str(path)], capture_output=True
    )
    assert json.loads(by_node.stdout) == json.loads(by_stand_in.stdout)
    assert json.loads(by_node.stdout)["rows"][0]["text"] == "retry \ufffd alone \ufffd"
