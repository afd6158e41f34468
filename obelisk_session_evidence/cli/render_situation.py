"""Renderings of `situation spool`: the bare reference for people and shells, JSON for machines."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.situation_outputs import SituationSpooled
from obelisk_session_evidence.loopx.recall import SITUATION_REF_PREFIX


def situation_reference(digest: str) -> str:
    """The query LoopX sends for a spooled situation."""
    return SITUATION_REF_PREFIX + digest


def spooled_document(digest: str) -> str:
    """`obelisk_session_evidence_situation_spool_v0`: the reference and the spooled bytes' digest."""
    return SituationSpooled(situation_ref=situation_reference(digest), digest=digest).model_dump_json()


def render_spooled(digest: str, console: Console) -> None:
    """The reference alone on one line, so `$(...)` captures it."""
    console.print(situation_reference(digest), markup=False, highlight=False)


def render_situation_summary(situation: ReplanSituation, console: Console) -> None:
    """What a built situation holds, in ids and counts (the route's text stays private)."""
    route = situation.proposed.route
    table = Table(title=f"situation {situation.situation_id}", show_header=False)
    for name, value in (
        ("obligation", situation.obligation.obligation_id),
        ("triggers", ", ".join(t.kind for t in situation.obligation.triggers) or "none"),
        ("recent observations", str(len(situation.recent_observations))),
        ("proposed result", situation.proposed.observation.result_class),
        ("route commands / files", f"{len(route.commands)} / {len(route.files)}"),
        ("route hypothesis / blocker", f"{'yes' if route.hypothesis else 'no'} / {'yes' if route.blocker else 'no'}"),
        ("scope", f"{situation.scope.agent_id} / {situation.scope.project_id} / {situation.scope.repository_id}"),
    ):
        table.add_row(name, value)
    console.print(table)
