"""Reason codes are data: every code the source can emit is declared, once per family."""

import ast
import inspect
from pathlib import Path
from typing import get_args

import pytest

import obelisk_session_evidence.contracts.errors as errors
from obelisk_session_evidence.contracts.reason_codes import DECLARED_CODES, FAMILIES, ErrorCode, codes_of

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("contracts", "stages", "comparators", "providers", "obelisk_session_evidence", "flows")
CODE_FIELDS = frozenset({"reason_code", "load_reason_code", "cause"})
"""Names that carry a reason code, as keyword arguments, assignments or attributes."""
CODE_CALLS = frozenset({"denied", "unavailable", "_unavailable", "at", "_refuse", "RequestInvalid"})
"""Functions whose string arguments are reason codes (`NotAdmitted` via `denied`, ...)."""


def _emitted_codes() -> dict[str, str]:
    """Every string literal the source hands to a reason-code field, with where it is."""
    found: dict[str, str] = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                for literal in _literals_given_to_a_code(node):
                    found.setdefault(literal, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _literals_given_to_a_code(node: ast.AST) -> list[str]:
    values: list[ast.AST] = []
    if isinstance(node, ast.keyword) and node.arg in CODE_FIELDS:
        values.append(node.value)
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(_name_of(target) in CODE_FIELDS for target in targets) and node.value is not None:
            values.append(node.value)
    elif isinstance(node, ast.Call) and _name_of(node.func) in CODE_CALLS:
        values.extend(node.args[-1:])
    elif isinstance(node, ast.Dict):
        # `model_copy(update={"reason_code": "..."})`
        values.extend(
            v
            for k, v in zip(node.keys, node.values, strict=False)
            if isinstance(k, ast.Constant) and k.value in CODE_FIELDS
        )
    return [literal for value in values for literal in _string_literals(value)]


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _string_literals(node: ast.AST) -> list[str]:
    """The constant strings an expression can evaluate to (conditional expressions included)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _string_literals(node.body) + _string_literals(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [literal for value in node.values for literal in _string_literals(value)]
    return []


def test_the_source_emits_only_declared_codes():
    emitted = _emitted_codes()
    assert len(emitted) > 40, "the scan found too few codes to be looking in the right places"
    undeclared = {code: where for code, where in emitted.items() if code not in DECLARED_CODES}
    assert undeclared == {}


def test_every_error_class_has_its_own_declared_code():
    classes = [
        value for value in vars(errors).values() if inspect.isclass(value) and issubclass(value, errors.EvidenceError)
    ]
    codes = [cls.reason_code for cls in classes]
    assert len(codes) == len(set(codes)), "two error classes share a reason code"
    assert set(codes) == set(get_args(ErrorCode))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_family_declares_each_code_once(name):
    declared: list[str] = []

    def collect(family: object) -> None:
        for value in get_args(family):
            collect(value) if get_args(value) else declared.append(value)

    collect(FAMILIES[name])
    nested = {code for value in get_args(FAMILIES[name]) if get_args(value) for code in codes_of(value)}
    direct = [code for code in declared if code not in nested or declared.count(code) > 1]
    assert len(direct) == len(set(direct)), f"{name} repeats a code"
    assert all(code.isidentifier() and code == code.lower() for code in codes_of(FAMILIES[name]))


def test_schemas_list_the_codes():
    from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision

    schema = ReplanEvidenceDecision.model_json_schema()
    admission = schema["$defs"]["AdmissionOutcome"]["properties"]["reason_code"]
    assert set(admission["enum"]) == set(codes_of(FAMILIES["admission"]))
