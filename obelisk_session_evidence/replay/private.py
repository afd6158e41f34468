"""The owner's private listing of a replay: each listed call's reference with its command and cwd.

Written only to the owner's `--private-out` file (0600), or to the private spool when the listing
is made inside a Prefect task (only the spool digest crosses into Prefect); never public output.
"""

import json
from collections.abc import Sequence
from typing import Any, Final

from obelisk_session_evidence.contracts.replay import MAX_LISTED_CALLS, CallRef, ReplayReport
from obelisk_session_evidence.replay.run import PrivateCall
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import read_spooled, remove_spooled

MAX_LISTING_BYTES: Final = 2 * MAX_LISTED_CALLS * 64 * 1024
"""A part's listing: at most the listed calls of both kinds, each command well under 64 KiB."""


def private_document(calls: Sequence[PrivateCall]) -> bytes:
    """The listing as a JSON array, one object per listed call."""
    return json.dumps([private_entry(call) for call in calls], indent=1).encode("utf-8")


def private_entry(call: PrivateCall) -> dict[str, Any]:
    """One listed call: its public reference's fields, its command and cwd."""
    return {**call.ref.model_dump(mode="json"), "command": call.command, "cwd": call.cwd}


def take_spooled_listing(paths: StatePaths, references: Sequence[str], report: ReplayReport) -> list[PrivateCall]:
    """The listings a flow's tasks spooled, in order, kept to the calls the report lists, and
    removed from the spool once read (the owner's file is their one place)."""
    listed = {ref for scope in report.scopes for ref in (*scope.false_alarms, *scope.missed_dead_ends)}
    calls = []
    for reference in references:
        raw = read_spooled(paths, "replays", reference, max_bytes=MAX_LISTING_BYTES)
        for entry in json.loads(raw):
            command, cwd = entry.pop("command"), entry.pop("cwd")
            ref = CallRef.model_validate(entry)
            if ref in listed:
                calls.append(PrivateCall(ref, command, cwd))
        remove_spooled(paths, "replays", reference)
    return calls
