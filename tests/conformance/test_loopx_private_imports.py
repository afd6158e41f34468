"""Issue 30 §4: every LoopX module the product imports is listed in docs/loopx.md with why, and
resolves, with the parameters the code passes, in the pinned LoopX."""

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from tests.conformance.conftest import LOOPX_VERSION, REPOSITORY, installed_loopx_version, require

pytestmark = pytest.mark.conformance

PRODUCT = ("obelisk_session_evidence", "contracts", "stages", "comparators", "providers", "flows")
DOCUMENTED = re.compile(r"^\| `(loopx(?:\.\w+)+):(\w+)` \|", re.MULTILINE)
USED_PARAMETERS = {
    "autonomous_replan_obligation_from_runs": {"latest_runs", "agent_todos", "agent_id"},
    "load_registry": {"path"},
    "registry_goals": {"registry"},
    "collect_accepted_bindings": {"goals"},
    "default_registry_path": set(),
    "collect_effect_runtime_readiness": set(),
    "restart_effect_runtime": {"timeout", "wait_for_exit"},
    "EffectRuntimeStartupError": set(),
    "ContextProviderItem": {"resource_ref", "summary", "content", "score"},
    "ContextProviderRetrieval": {
        "provider",
        "namespace",
        "status",
        "query_summary",
        "observed_at",
        "search_performed",
        "read_performed",
        "items",
        "reason_code",
        "provider_version",
        "latency_ms",
        "requested_limit",
        "visibility",
        "target_scope_kind",
        "actor_binding_verified",
    },
    "ContextProviderSync": {
        "provider",
        "namespace",
        "status",
        "observed_at",
        "requested_count",
        "completed_count",
        "reason_code",
        "provider_version",
    },
}
"""The keyword parameters the product passes to each imported callable."""


def _imported() -> set[tuple[str, str]]:
    found = set()
    for folder in PRODUCT:
        for path in (REPOSITORY / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "loopx":
                    found |= {(node.module, alias.name) for alias in node.names}
                if isinstance(node, ast.Import):
                    assert not any(alias.name.split(".")[0] == "loopx" for alias in node.names), path
    return found


def test_every_loopx_import_is_documented_and_resolves_in_the_pinned_loopx():
    require(installed_loopx_version() == LOOPX_VERSION, f"loopx=={LOOPX_VERSION} is not installed")
    documented = set(DOCUMENTED.findall(Path(REPOSITORY / "docs" / "loopx.md").read_text(encoding="utf-8")))
    assert _imported() == documented
    for module, name in sorted(documented):
        symbol = getattr(importlib.import_module(module), name)
        parameters = set(inspect.signature(symbol).parameters)
        assert USED_PARAMETERS[name] <= parameters, (module, name, USED_PARAMETERS[name] - parameters)
