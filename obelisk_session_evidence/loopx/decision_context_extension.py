"""The Decision Context extension provider: LoopX's `decision_context_advisory_provider_v0`.

LoopX 2.1.1 runs an enabled, doctor-verified extension's entrypoint with one JSON request on
stdin and reads one JSON object from stdout (`loopx/capabilities/decision_context/
extension_provider.py`):

    request   {"schema_version": "decision_context_advisory_retrieve_request_v0",
               "operation": "retrieve", "namespace", "scope_ref", "query", "query_summary",
               "max_results", "timeout_seconds", "observed_at"}
    response  {"schema_version": "decision_context_advisory_retrieve_response_v0", "ok": true,
               "status": "completed" | "unavailable", "reason_code": null | "<token>",
               "items": [{"resource_ref", "summary", "content", "score"}, ...]}

LoopX rejects any other response field, an item field set other than those four, more items
than it asked for (at most 8), a completed answer with a reason code, and an unavailable one
with items or without one. LoopX 2.1.1's request names neither the goal nor the agent
(`asking.py` says where they are read from then); a request that carries `goal_id` and/or
`agent_id` (as a later LoopX may, and its chat server already knows both) is read first, held
to the same rules (LoopX must have started the extension; the invocation and LoopX's host-turn
environment must not name others), and any other field is still refused. `recall.py` says how
the request maps onto a typed situation, and how the verdict travels as the leading item of a
completed answer.

Exit codes follow the LoopX habit: 0 with `ok: true` for every answer, including typed
`unavailable` ones (the host fails open on them); 2 with `ok: false` for a request that breaks
the protocol. `--doctor` (LoopX's readiness probe, whose output LoopX discards) runs the checks
of `obelisk-session-evidence status` for every enabled project and exits 0 only when the
configuration loads, at least one scope is enabled, and every scope can answer (a stale or
incomplete index still answers, typed); otherwise it prints the reason and exits 1, which LoopX
reports as `provider_unavailable` / `probe_nonzero_exit`. Registration: `extension.toml`
beside this module (see the README).
"""

import json
import re
import sys
from collections.abc import Sequence
from typing import Any, Final

from obelisk_session_evidence.contracts.base import OPAQUE_ID_PATTERN
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.json_input import read_at_most
from obelisk_session_evidence.contracts.reason_codes import ProtocolRefusalCode
from obelisk_session_evidence.loopx.asking import Asker
from obelisk_session_evidence.loopx.doctor import doctor_report
from obelisk_session_evidence.loopx.recall import Recall, answer, bounded_max_results
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

REQUEST_SCHEMA: Final = "decision_context_advisory_retrieve_request_v0"
RESPONSE_SCHEMA: Final = "decision_context_advisory_retrieve_response_v0"
REQUEST_FIELDS: Final = frozenset(
    {
        "schema_version",
        "operation",
        "namespace",
        "scope_ref",
        "query",
        "query_summary",
        "max_results",
        "timeout_seconds",
        "observed_at",
    }
)
ASKER_FIELDS: Final[dict[str, ProtocolRefusalCode]] = {"goal_id": "goal_id_invalid", "agent_id": "agent_id_invalid"}
"""Optional: a LoopX that names the asker in the request (its chat server's body carries both)
is preferred to reading LoopX's invocation (`asking.py`); null means not said. Each with the code
that refuses it malformed."""
ASKER_ID: Final = re.compile(OPAQUE_ID_PATTERN)
MAX_REQUEST_BYTES: Final = 1_000_000
"""LoopX's own request cap (`MAX_EXTENSION_REQUEST_BYTES`)."""


class RequestInvalid(InvalidInput):
    """The request breaks the advisory provider protocol; `refusal` names the field, never content."""

    def __init__(self, refusal: ProtocolRefusalCode) -> None:
        super().__init__(refusal)
        self.refusal = refusal


def response_for(
    request: Any,
    *,
    paths: StatePaths,
    provider_factory: ProviderFactory | None = None,
    asking: Asker | None = None,
) -> dict[str, Any]:
    """The protocol response for one parsed request; raises `RequestInvalid`.

    :param provider_factory: builds the backend (default: the real providers).
    :param asking: who LoopX asks for (default: read from LoopX's invocation, `asking.py`).
    """
    fields = _validated(request)
    outcome = answer(
        paths,
        scope_ref=fields["scope_ref"],
        query=fields["query"],
        max_results=bounded_max_results(fields["max_results"]),
        asking=asking,
        requested=requested_asker(fields),
        provider_factory=provider_factory,
    )
    return render_response(outcome)


def requested_asker(fields: dict[str, Any]) -> Asker | None:
    """The goal and agent the request names (the asker's first source, `asking.established`);
    None when it names neither."""
    goal_id, agent_id = fields.get("goal_id"), fields.get("agent_id")
    return None if goal_id is None and agent_id is None else Asker(goal_id, agent_id)


def render_response(outcome: Recall) -> dict[str, Any]:
    """The exact response envelope LoopX accepts."""
    return {
        "schema_version": RESPONSE_SCHEMA,
        "ok": True,
        "status": outcome.status,
        "reason_code": outcome.reason_code,
        "items": [
            {
                "resource_ref": item.resource_ref,
                "summary": item.summary,
                "content": item.content,
                "score": None,
            }
            for item in outcome.items
        ],
    }


@stops_on_signals
def main(argv: Sequence[str] | None = None) -> int:
    """Answer one request from stdin on stdout; `--doctor` probes readiness."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    paths = state_paths()
    if arguments == ["--doctor"]:
        ready, reason_code = doctor_report(paths)
        sys.stdout.write(f"{'ready' if ready else 'not ready'}: {reason_code}\n")
        return 0 if ready else 1
    if arguments:
        return _refuse("arguments_unsupported")
    raw = read_at_most(sys.stdin.buffer, MAX_REQUEST_BYTES)
    if len(raw) > MAX_REQUEST_BYTES:
        return _refuse("request_too_large")
    try:
        request = json.loads(raw.decode("utf-8"))
        response = response_for(request, paths=paths)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _refuse("request_not_json")
    except RequestInvalid as error:
        return _refuse(error.refusal)
    _emit(response)
    return 0


_TEXT_FIELDS: Final[dict[str, ProtocolRefusalCode]] = {
    "namespace": "namespace_invalid",
    "scope_ref": "scope_ref_invalid",
    "query": "query_invalid",
    "query_summary": "query_summary_invalid",
    "observed_at": "observed_at_invalid",
}
"""The request's text fields, each with the code that refuses it empty or not text."""


def _validated(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict):
        raise RequestInvalid("request_not_object")
    if not REQUEST_FIELDS <= set(request) <= REQUEST_FIELDS | set(ASKER_FIELDS):
        raise RequestInvalid("request_fields_invalid")
    for name, refusal in ASKER_FIELDS.items():
        value = request.get(name)
        if value is not None and (not isinstance(value, str) or ASKER_ID.fullmatch(value) is None):
            raise RequestInvalid(refusal)
    if request["schema_version"] != REQUEST_SCHEMA or request["operation"] != "retrieve":
        raise RequestInvalid("request_schema_invalid")
    for name, refusal in _TEXT_FIELDS.items():
        if not isinstance(request[name], str) or not request[name].strip():
            raise RequestInvalid(refusal)
    max_results = request["max_results"]
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise RequestInvalid("max_results_invalid")
    return request


def _refuse(reason_code: ProtocolRefusalCode) -> int:
    _emit(
        {
            "schema_version": RESPONSE_SCHEMA,
            "ok": False,
            "status": "unavailable",
            "reason_code": reason_code,
            "items": [],
        }
    )
    return 2


def _emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
