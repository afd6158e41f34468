"""Renderings of `situation spool`: the bare reference for people and shells, JSON for machines."""

import json

from rich.console import Console

from obelisk_session_evidence.loopx.recall import SITUATION_REF_PREFIX


def situation_reference(digest: str) -> str:
    """The query LoopX sends for a spooled situation."""
    return SITUATION_REF_PREFIX + digest


def spooled_document(digest: str) -> str:
    """`{"situation_ref": ..., "digest": ...}`: the reference and the spooled bytes' digest."""
    return json.dumps({"situation_ref": situation_reference(digest), "digest": digest})


def render_spooled(digest: str, console: Console) -> None:
    """The reference alone on one line, so `$(...)` captures it."""
    console.print(situation_reference(digest), markup=False, highlight=False)
