"""Ask LoopX itself: one process answers a whole batch, then stops the runtime it started.

Run as a script (never imported by the suite): reads one JSON document from stdin,
`{"cases": [{"obligation": {...}, "progress_observation": {...}}, ...], "threads": N}`,
and writes `{"results": [...], "runtime": {...}, "seconds": S}` to stdout. Each result is
LoopX's `semantic_delta_from_writeback` answer, or `{"error": <class>, "message": <text>}`
when LoopX refuses the input. Only LoopX is imported here, so the oracle cannot borrow
anything from the code it judges.

LoopX resolves Node with `shutil.which("node")` (so from PATH) and keeps a managed runtime
daemon alive between calls, located through `tempfile.gettempdir()`. The caller gives this
process a private TMPDIR, so the daemon it starts is its own, and this script shuts it down
(waiting for the process to exit) before it returns, whatever happened.
"""

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
    from loopx.control_plane.effect_runtime import restart_effect_runtime

    request = json.load(sys.stdin)
    cases = request["cases"]
    started = time.monotonic()
    try:
        # The first call starts the runtime; the rest share it.
        results = [_answer(cases[0])] if cases else []
        with ThreadPoolExecutor(max_workers=int(request.get("threads", 4))) as pool:
            results.extend(pool.map(_answer, cases[1:]))
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
