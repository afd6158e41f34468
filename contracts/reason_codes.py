"""Every stable reason code, as data: one `Literal` family per field that carries one.

The public schemas list these values, so LoopX and other callers can rely on them; a code the code
emits but this module does not declare fails validation where it is produced
(`tests/contracts/test_reason_codes.py` also finds every literal code in the source and checks it
is declared). Families may share a code when it means the same thing in both places (the
admission and the lifecycle both say `not_enabled`).
"""

from typing import Final, Literal, get_args

ErrorCode = Literal[
    "evidence_error",
    "invalid_input",
    "config_invalid",
    "scope_broadening_not_qualified",
    "private_target_refused",
    "scope_refused",
    "storage_failed",
    "stage_failed",
    "prefect_api_not_configured",
    "prefect_server_failed",
    "dask_unreachable",
    "loopx_runtime_unavailable",
    "provider_error",
    "provider_unavailable",
    "provider_timeout",
    "provider_failed",
    "provider_output_too_large",
    "provider_output_malformed",
    "unsupported_option",
    "index_unavailable",
    "scope_violation",
]
"""`EvidenceError.reason_code` of each class of the one error tree (`contracts/errors.py`)."""

EnvelopeCode = Literal[ErrorCode, "internal_error"]
"""An error envelope's code: one of the tree's, or `internal_error` for an unexpected fault
(named by its type only)."""

StageFailureCode = Literal[ErrorCode, "stage_crashed"]
"""What a failing stage raised: one of the tree's codes, or `stage_crashed` for a bug."""

GapCode = Literal["gap_classified", "prior_session_coverage_known", "work_not_identified", "no_history_gap"]
"""classify-gap: a trigger applies, or why none does."""

DenialCode = Literal[
    GapCode,
    "not_enabled",
    "config_invalid",
    "scope_incomplete",
    "trigger_not_enabled",
    "no_query_terms",
    "cross_agent_denied",
    "cross_project_denied",
    "cross_repository_denied",
]
"""admit: why a lookup is not allowed (a gap code when no trigger applies)."""

AdmissionCode = Literal["admitted", DenialCode]
"""admit: `admitted`, or why not."""

ProviderFaultCode = Literal["provider_crashed", ErrorCode]
"""retrieve: why the provider gave no answer (`provider_crashed` for anything it raised that is
not one of the tree's errors)."""

RetrievalCode = Literal["retrieved", "not_admitted", ProviderFaultCode]
"""retrieve: the provider answered, was not asked, or failed."""

DeltaReasonCode = Literal[
    "semantic_advance",
    "unchanged_never_advances",
    "evidence_required",
    "same_route_new_evidence_only",
    "blocker_id_required",
    "blocker_repeated",
    "coverage_scope_required",
    "terminal_coverage_repeated",
    "coverage_incomplete",
    "no_followup_vision_path_inconsistent",
    "progress_observation_replayed",
    "progress_identity_without_new_evidence",
    "outcomes_not_required",
    "acceptance_hold_widened",
    "route_repeats_prior_failure",
    "route_repeats_failure_after_change",
    "route_repeats_failure_at_other_revision",
    "route_repeats_prior_attempt",
    "blocker_already_evidenced",
    "hypothesis_already_tried",
]
"""A semantic delta's reason: LoopX's exact-id rules, then the six history removals."""

HistoryRuleCode = Literal[
    "route_repeats_prior_failure",
    "route_repeats_failure_after_change",
    "route_repeats_failure_at_other_revision",
    "route_repeats_prior_attempt",
    "blocker_already_evidenced",
    "hypothesis_already_tried",
]
"""The history rule (`stages/compare_route.py`) by which our acceptance differs from the one
LoopX's exact-id rules give the same step: history only removes outcomes, never adds one."""

ComparisonDimension = Literal["command", "file", "hypothesis", "blocker", "combined"]
"""The dimensions a comparison scores (novelty 0–100 each)."""

ThresholdName = Literal["command_repeat", "hypothesis_repeat", "blocker_repeat", "min_text_words"]
"""The thresholds a comparison reports (`contracts.thresholds.RouteThresholds`)."""

ProviderHealthCode = Literal["provider_available", "provider_probe_failed", "provider_status_unknown", ErrorCode]
"""A backend's probe: available, or why not."""

IndexHealthCode = Literal[
    "index_fresh",
    "index_stale",
    "index_incomplete",
    "index_not_refreshed",
    "index_absent",
    "index_status_unknown",
    "index_probe_failed",
    "index_freshness_per_lookup",
    ErrorCode,
]
"""An index's health as `status` reports it."""

StatusCode = Literal["healthy", "not_enabled", "config_invalid", ProviderHealthCode, IndexHealthCode]
"""`status`: healthy, or the first reason a scope is not."""

DoctorCode = Literal[StatusCode, "loopx_not_installed", "loopx_version_unsupported"]
"""The LoopX extension's `--doctor`: healthy, a scope's status, or the LoopX beside it is absent
or outside the supported range."""

ConfigLoadCode = Literal["config_loaded", "config_absent", "config_invalid"]
"""How reading `config.json` went (the admission policy's)."""

LifecycleOutcomeCode = Literal["enabled", "disabled", "not_enabled", "index_dropped", "index_absent"]
"""What `enable`, `disable` and `index drop` did."""

SkippedSourceCode = Literal["folder_missing"]
"""Why `enable` (without `--source`) left a session source out."""

BatchItemCode = Literal["decided", StageFailureCode]
"""A batch item's record: decided, or why it failed."""

SpoolRefusalCode = Literal["spool_absent", "spool_expired", "spool_not_regular", "spool_too_large", "spool_altered"]
"""Why a spooled document was not used: none has the digest, it expired, the name is not a regular
file (a link, a FIFO, a folder), it is larger than its reader accepts, or its bytes no longer have
the digest that names them."""

RecallCode = Literal[
    "situation_ref_required",
    "situation_not_found",
    "spool_expired",
    "spool_not_regular",
    "spool_too_large",
    "spool_altered",
    "scope_ref_unsupported",
    "invoking_session_mismatch",
    "asking_agent_unknown",
    "asking_goal_unknown",
    "asking_agent_conflict",
    "scope_ambiguous",
    "host_session_binding_conflict",
    "host_session_binding_unknown",
    "loopx_state_unreadable",
    "pipeline_failed",
    "read_only_provider",
    "index_stale",
    "index_incomplete",
    "index_unknown",
    "no_unresolved_failures",
    AdmissionCode,
    RetrievalCode,
]
"""Why a LoopX recall came back unavailable (`no_unresolved_failures`: why a routeless lookup
came back completed and empty)."""

ProtocolRefusalCode = Literal[
    "arguments_unsupported",
    "request_not_object",
    "request_fields_invalid",
    "request_schema_invalid",
    "request_too_large",
    "request_not_json",
    "namespace_invalid",
    "scope_ref_invalid",
    "query_invalid",
    "query_summary_invalid",
    "observed_at_invalid",
    "max_results_invalid",
    "goal_id_invalid",
    "agent_id_invalid",
]
"""Why the LoopX extension refused a request that breaks the advisory provider protocol."""

FAMILIES: Final = {
    "error": ErrorCode,
    "envelope": EnvelopeCode,
    "stage_failure": StageFailureCode,
    "gap": GapCode,
    "denial": DenialCode,
    "admission": AdmissionCode,
    "provider_fault": ProviderFaultCode,
    "retrieval": RetrievalCode,
    "semantic_delta": DeltaReasonCode,
    "history_rule": HistoryRuleCode,
    "comparison_dimension": ComparisonDimension,
    "threshold": ThresholdName,
    "provider_health": ProviderHealthCode,
    "index_health": IndexHealthCode,
    "status": StatusCode,
    "doctor": DoctorCode,
    "config_load": ConfigLoadCode,
    "lifecycle_outcome": LifecycleOutcomeCode,
    "skipped_source": SkippedSourceCode,
    "batch_item": BatchItemCode,
    "recall": RecallCode,
    "protocol_refusal": ProtocolRefusalCode,
}


def codes_of(family: object) -> tuple[str, ...]:
    """The codes of one family, nested families flattened, in declaration order."""
    codes: list[str] = []
    for value in get_args(family):
        codes.extend(codes_of(value) if get_args(value) else [value])
    return tuple(dict.fromkeys(codes))


DECLARED_CODES: Final = frozenset(code for family in FAMILIES.values() for code in codes_of(family))
"""Every code declared in any family."""
