"""The template's JavaScript under Node equals what the stand-in interprets, on real rows.

The stand-in never runs JavaScript; the real Obelisk does. So the fixed code is run here under
Node (when present) with `sql()` and `search()` answering exactly what the stand-in's index
answers for the same calls, and its return value must equal the stand-in's interpretation.
"""

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.obelisk_stand_in import STAND_IN, StandIn
from obelisk_session_evidence.providers.obelisk.plan import query_plan
from obelisk_session_evidence.providers.obelisk.template import query_script
from tests.providers.obelisk.conftest import CODEX_ROOT, SPOTTER_ROOT, enablement_for, request_for

HARNESS = Path(__file__).with_name("node_harness.js")
NODE = shutil.which("node")


def _stand_in_modules():
    sys.path.insert(0, str(STAND_IN.parent))
    try:
        spec = importlib.util.spec_from_file_location("stand_in_sandbox", STAND_IN.with_name("sandbox.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(STAND_IN.parent))


@pytest.mark.skipif(NODE is None, reason="node not installed")
@pytest.mark.parametrize(
    ("root", "sources", "terms"),
    [
        (SPOTTER_ROOT, ["claude"], ["node assets/build.js", "Phoenix", "telemetry"]),
        (CODEX_ROOT, ["codex"], ["node_modules/opencode-ai", "opencode"]),
        (SPOTTER_ROOT, ["claude", "codex"], ["Phoenix", 'x"); throw 1; ("\u2028']),
    ],
)
def test_node_runs_the_template_as_the_stand_in_reads_it(
    built: StandIn, tmp_path: Path, root: str, sources: list[str], terms: list[str]
) -> None:
    sandbox = _stand_in_modules()
    home = str(built.home)
    enablement = enablement_for(built.home, roots=[root], sources=sources)
    plan = query_plan(request_for(*terms), enablement=enablement, options={}, home=built.home)
    script = query_script(plan.template_values)
    consts = sandbox._data_block(script)
    options = consts["SEARCH"]
    search_options = {"limit": options["limit"]}
    if options["source"] is not None:
        search_options["source"] = options["source"]
    answers = {
        "sql": [
            [
                consts[f"{name}_SQL"],
                consts[f"{name}_ARGS"],
                sandbox.sql(home, consts[f"{name}_SQL"], consts[f"{name}_ARGS"]),
            ]
            for name in ("STATE", "CALLS")
        ],
        "search": [
            [term, search_options, sandbox.search_hits(home, term, limit=options["limit"], source=options["source"])]
            for term in consts["TERMS"]
        ],
    }
    answers_path, script_path = tmp_path / "answers.json", tmp_path / "query.js"
    answers_path.write_text(json.dumps(answers))
    script_path.write_text(script)
    ran = subprocess.run(
        [NODE, str(HARNESS), str(answers_path), str(script_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    under_node = json.loads(ran.stdout)
    assert under_node == sandbox._template(home, consts)
    assert under_node["calls"] or under_node["hits"]
