"""The layers of docs/architecture.md, enforced: which way imports may point, one pipeline
definition tied to the real stage signatures, and the package's declared public surface."""

import ast
import inspect
from pathlib import Path

import pytest

import obelisk_session_evidence
from obelisk_session_evidence.stages.pipeline import PIPELINE, STAGE_VALUE_NAMES, PipelineDependencies

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "obelisk_session_evidence"
FOLDER_LAYERS = ("contracts", "stages", "comparators", "providers", "flows")
"""Top-level folders installed as subpackages of the namespace (pyproject's package-dir)."""
MAY_IMPORT = {
    "contracts": {"contracts"},
    "comparators": {"contracts", "comparators"},
    "providers": {"contracts", "providers"},
    "stages": {"contracts", "comparators", "providers", "stages"},
    "obelisk_session_evidence": {"contracts", "comparators", "providers", "stages", "obelisk_session_evidence"},
    "flows": {"contracts", "comparators", "providers", "stages", "obelisk_session_evidence", "flows"},
}
"""Each layer and the project layers it may import; the product never imports fixtures (test data)."""
PREFECT_FREE_OUTSIDE = ("flows", "obelisk_session_evidence/cli")


def _layer_of(module: str) -> str | None:
    """The project layer a module belongs to; `fixtures` for test data; None outside the project."""
    parts = module.split(".")
    if parts[0] == "fixtures" or parts[0] in FOLDER_LAYERS:
        return parts[0]  # a bare top-level name is itself a violation: it is not installed
    if parts[0] != NAMESPACE:
        return None
    return parts[1] if len(parts) > 1 and parts[1] in FOLDER_LAYERS else NAMESPACE


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
    return found


def _is_cli(path: Path) -> bool:
    """The command line sits on top: it may start flows."""
    return path.relative_to(ROOT).as_posix().startswith("obelisk_session_evidence/cli/")


def _files(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_imports_point_down_the_layers(layer):
    wrong = []
    for path in _files(layer):
        allowed = MAY_IMPORT[layer] | ({"flows"} if _is_cli(path) else set())
        for module, line in _imports(path):
            layer_of = _layer_of(module)
            if layer_of is not None and layer_of not in allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert wrong == []


def test_only_flows_and_the_cli_import_flows_or_prefect():
    wrong = []
    for layer in ("contracts", "stages", "comparators", "providers", "obelisk_session_evidence"):
        for path in _files(layer):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(PREFECT_FREE_OUTSIDE):
                continue
            for module, line in _imports(path):
                if _layer_of(module) == "flows" or module.split(".")[0] in ("prefect", "prefect_dask"):
                    wrong.append(f"{relative}:{line} imports {module}")
    assert wrong == []


def test_the_direction_check_sees_a_violation():
    """Negative control: the scan reads real imports (flows imports prefect, providers contracts)."""
    assert any(module == "prefect" for path in _files("flows") for module, _ in _imports(path))
    assert "obelisk_session_evidence.contracts.evidence" in {
        module for module, _ in _imports(ROOT / "providers" / "base.py")
    }


def _names_used(path: Path) -> set[str]:
    """Every name a module imports or reads (`from m import f` and `m.f` alike)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    names |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def test_only_the_composition_root_runs_the_pipeline():
    """Every decision, qualification's included, is composed by `compose.decide`."""
    runners = {
        path.relative_to(ROOT).as_posix()
        for layer in MAY_IMPORT
        for path in _files(layer)
        if "run_pipeline" in _names_used(path)
    }
    assert runners == {"obelisk_session_evidence/compose.py"}


@pytest.mark.parametrize("stage", PIPELINE, ids=lambda stage: stage.name)
def test_pipeline_names_are_the_stage_functions_own_parameters(stage):
    parameters = inspect.signature(stage.function).parameters.values()
    positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    keyword_only = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert tuple(positional) == stage.inputs
    assert tuple(keyword_only) == stage.options
    assert set(stage.inputs) <= STAGE_VALUE_NAMES and stage.output in STAGE_VALUE_NAMES
    assert set(stage.options) <= set(PipelineDependencies.__dataclass_fields__)


def test_every_stage_value_is_produced_once_and_read_after_it_exists():
    produced = {"situation"}
    for stage in PIPELINE:
        assert set(stage.inputs) <= produced, f"{stage.name} reads a value not produced yet"
        assert stage.output not in produced
        produced.add(stage.output)
    assert produced == STAGE_VALUE_NAMES


def test_the_public_surface_is_declared_and_importable():
    assert sorted(obelisk_session_evidence.__all__) == [
        "EvidenceError",
        "PipelineRun",
        "SessionEvidenceContextProvider",
        "__version__",
        "decide",
    ]
    for name in obelisk_session_evidence.__all__:
        assert getattr(obelisk_session_evidence, name) is not None
    assert inspect.signature(obelisk_session_evidence.decide).parameters["provider_factory"].kind is (
        inspect.Parameter.KEYWORD_ONLY
    )
