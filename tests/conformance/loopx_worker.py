"""Ask LoopX itself: one process answers a whole batch, then stops the runtime it started.

Run as a script (never imported by the suite): reads one JSON document from stdin,
`{"cases": [{"obligation": {...}, "progress_observation": {...}}, ...]}`,
and writes `{"results": [...], "runtime": {...}, "seconds": S}` to stdout. Each result is
LoopX's `semantic_delta_from_writeback` answer, or `{"error": <class>, "message": <text>}`
when LoopX refuses the input. Only LoopX is imported here, so the oracle cannot borrow
anything from the code it judges.

LoopX resolves Node with `shutil.which("node")` (so from PATH) and keeps a managed runtime
daemon alive between calls, located through `tempfile.gettempdir()`. The caller gives this
process a private TMPDIR, so the daemon it starts is its own, and this script shuts it down
(waiting for the process to exit) before it returns, whatever happened.

Speed: every runtime request re-fingerprints LoopX's TypeScript sources (a walk and stat of the
whole control plane) unless it runs inside `effect_runtime_request_scope()`, which pins one
revision; the whole batch runs in one scope. Threads do not help: the Node runtime answers one
request at a time.
"""

import json
import sys
import time
from typing import Any


def _answer(case: dict[str, Any]) -> dict[str, Any]:
    from loopx.control_plane.work_items.progress_observation import (
        semantic_delta_from_writeback,
    )

    try:
        return semantic_delta_from_writeback(
            obligation=case["obligation"],
            progress_observation=case["progress_observation"],
            agent_vision=case.get("agent_vision"),
        )
    except (ValueError, TypeError) as error:
        return {"error": type(error).__name__, "message": str(error)}


def main() -> int:
    from loopx.control_plane.effect_runtime import (
        effect_runtime_request_scope,
        restart_effect_runtime,
    )

    cases = json.load(sys.stdin)["cases"]
    started = time.monotonic()
    try:
        with effect_runtime_request_scope():
            results = [_answer(case) for case in cases]
    finally:
        stopped = restart_effect_runtime(timeout=10.0, wait_for_exit=True)
    json.dump(
        {
            "results": results,
            "runtime": stopped.get("previous_runtime_identity"),
            "runtime_stopped": stopped.get("stopped"),
            "seconds": time.monotonic() - started,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
