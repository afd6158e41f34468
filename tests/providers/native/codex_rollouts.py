"""Codex rollouts written line by line for the parser tests: a `session_meta`, then each item as an
`event_msg` (an event kind) or a `response_item`, a second apart."""

import json
from pathlib import Path
from typing import Any, Final

EVENT_KINDS: Final = frozenset({"exec_command_end", "patch_apply_end"})


def write_rollout(
    folder: Path, session: str, items: list[dict[str, Any]], *, version: str, day: str, cwd: str = "/work/alpha"
) -> Path:
    """The rollout `folder/rollout-<day>T09-00-00-<session>.jsonl` of `items`, by Codex `version`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{day}T09-00-00-{session}.jsonl"
    meta = {"id": session, "timestamp": f"{day}T09:00:00.000Z", "cwd": cwd, "cli_version": version}
    lines = [{"type": "session_meta", "payload": meta}]
    lines += [{"type": "event_msg" if i["type"] in EVENT_KINDS else "response_item", "payload": i} for i in items]
    stamped = (json.dumps({"timestamp": f"{day}T09:00:{second:02d}.000Z", **line}) for second, line in enumerate(lines))
    path.write_text("".join(line + "\n" for line in stamped), encoding="utf-8")
    return path
