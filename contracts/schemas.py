"""The published JSON Schemas: one per public contract, generated from the models.

Field descriptions are the attribute docstrings under each field. They are read here, when a
schema is generated, not when a model is defined: pydantic's `use_attribute_docstrings` reads and
parses every model's source at import, about 20 ms of every process's start.
"""

import ast
import inspect
import textwrap
from functools import cache
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchSpooled, BatchSummary
from obelisk_session_evidence.contracts.config import EnablementConfig
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.error_envelope import ErrorEnvelope
from obelisk_session_evidence.contracts.evidence import (
    HistoricalEvidenceReceipt,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
)
from obelisk_session_evidence.contracts.index_status import IndexStatus, RefreshReport
from obelisk_session_evidence.contracts.lifecycle import (
    DisableOutcome,
    EnableOutcome,
    IndexDropOutcome,
    LifecycleStatus,
)
from obelisk_session_evidence.contracts.operators import ServeOutcome, UiFacts
from obelisk_session_evidence.contracts.qualification import QualificationSummary
from obelisk_session_evidence.contracts.recall_verdict import RecallVerdict
from obelisk_session_evidence.contracts.replay import ReplayReport
from obelisk_session_evidence.contracts.schemas_written import SchemasWritten
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.situation_outputs import SituationSpooled, SituationWritten

PUBLIC_CONTRACTS: Final[dict[str, type[BaseModel]]] = {
    "replan_situation_v0": ReplanSituation,
    "historical_evidence_request_v0": HistoricalEvidenceRequest,
    "historical_evidence_result_v0": HistoricalEvidenceResult,
    "historical_evidence_receipt_v0": HistoricalEvidenceReceipt,
    "replan_evidence_decision_v0": ReplanEvidenceDecision,
    "replan_recall_verdict_v0": RecallVerdict,
    "obelisk_session_evidence_config_v0": EnablementConfig,
    "obelisk_session_evidence_enable_v0": EnableOutcome,
    "obelisk_session_evidence_status_v0": LifecycleStatus,
    "obelisk_session_evidence_disable_v0": DisableOutcome,
    "obelisk_session_evidence_index_drop_v0": IndexDropOutcome,
    "obelisk_session_evidence_index_refresh_v0": RefreshReport,
    "obelisk_session_evidence_index_status_v0": IndexStatus,
    "reprocess_stalled_summary_v0": BatchSummary,
    "reprocess_stalled_item_v0": BatchItemRecord,
    "reprocess_stalled_spool_v0": BatchSpooled,
    "obelisk_session_evidence_qualify_v0": QualificationSummary,
    "obelisk_session_evidence_ui_v0": UiFacts,
    "obelisk_session_evidence_serve_v0": ServeOutcome,
    "obelisk_session_evidence_error_v0": ErrorEnvelope,
    "replay_report_v0": ReplayReport,
    "obelisk_session_evidence_situation_spool_v0": SituationSpooled,
    "obelisk_session_evidence_situation_written_v0": SituationWritten,
    "obelisk_session_evidence_schema_v0": SchemasWritten,
}


def json_schema(name: str) -> dict[str, Any]:
    """The 2020-12 JSON Schema of one public contract, validation mode (what we accept)."""
    schema = PUBLIC_CONTRACTS[name].model_json_schema(mode="validation", schema_generator=DocumentedFields)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:obelisk-session-evidence:{name}",
        **schema,
    }


class DocumentedFields(GenerateJsonSchema):
    """pydantic's generator, with each field's attribute docstring as its description."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        model = schema["cls"]
        properties = json_schema.get("properties", {})
        for name, field in model.model_fields.items():
            documented = properties.get(field.alias or name)
            docstring = _field_docstring(model, name)
            if documented is not None and docstring is not None and field.description is None:
                documented["description"] = docstring
        return json_schema


def _field_docstring(model: type[BaseModel], name: str) -> str | None:
    """The docstring under `name`'s annotation in the nearest class of `model` that declares it."""
    for owner in model.__mro__:
        if name in owner.__dict__.get("__annotations__", {}):
            return attribute_docstrings(owner).get(name)
    return None


@cache
def attribute_docstrings(owner: type) -> dict[str, str]:
    """Annotated attribute -> the string literal right below it, as pydantic reads them."""
    try:
        source = textwrap.dedent(inspect.getsource(owner))
    except (OSError, TypeError):
        return {}
    definition = ast.parse(source).body[0]
    if not isinstance(definition, ast.ClassDef):
        return {}
    body = definition.body
    return {
        statement.target.id: inspect.cleandoc(following.value.value)
        for statement, following in zip(body, body[1:], strict=False)
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and isinstance(following, ast.Expr)
        and isinstance(following.value, ast.Constant)
        and isinstance(following.value.value, str)
    }
