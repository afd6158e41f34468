"""A free-text Decision Context query as a scoped lookup (trigger `operator_requested_history`).

LoopX sends `recall-context --query <text>` with scope `goal` or `host-session:<source>:<id>`,
and `prepare-evidence` with its fixed query `current decision evidence` and the profile's scope.
Such a query becomes a typed `replan_situation_v0`:

- scope: the enablement of the asking agent (`asking.py`) for the goal's project (the project
  whose id is the goal id), which also gives the repository identity. An agent not enabled for
  that project is refused (`cross_project_denied`), one enabled for it in several repositories
  too (`scope_ambiguous`): never guessed;
- obligation, recent and proposed observations: when LoopX holds an open Replan obligation for
  the asker on the goal, exactly what `situation from-loopx` reads (`loopx_state.py`: LoopX's
  obligation, the agent's typed observations, its newest one as the proposal); otherwise a
  lookup id digested from (goal, agent, query), as the obligation id and the proposed
  observation's work item, with no triggers. The operator request is set either way, since an
  agent or operator asked explicitly;
- route: what the query stands for, a command, files or hypothesis text (`query_route.py`,
  with examples). The query text itself never leaves the private situation;
- the invoking session: the `host-session` scope, whose earlier history counts
  (`providers/invoking_session.py`).

What the verdict cannot see here: a query is one command, or files, or words, never the whole
route a `situation spool` or `from-loopx` reference carries. Without an open obligation the
semantic delta judges a proposal without evidence ids (`evidence_required` unless history says
otherwise).
"""

import hashlib
from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import EvidenceError
from obelisk_session_evidence.contracts.situation import OperatorRequest, ReplanSituation, RouteProposal
from obelisk_session_evidence.loopx.asking import Asker
from obelisk_session_evidence.loopx.loopx_state import NoLoopXObligation, loopx_situation
from obelisk_session_evidence.loopx.query_route import RESUME
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.providers.recent_failures import ListsRecentFailures


def asking_enablement(enablements: list[Enablement], asking: Asker) -> tuple[Enablement | None, str | None]:
    """The one enablement of the asking agent for the goal's project, or why there is none.

    The goal maps to the project of the same id (`enable --project-id <goal id>`): an agent
    enabled for other projects only is `cross_project_denied`, never answered from them."""
    if asking.agent_id is None:
        return None, "asking_agent_unknown"
    if asking.goal_id is None:
        return None, "asking_goal_unknown"
    own = [e for e in enablements if e.agent_id == asking.agent_id]
    if not own:
        return None, "not_enabled"
    named = [e for e in own if e.project_id == asking.goal_id]
    if not named:
        return None, "cross_project_denied"
    if len(named) > 1:
        return None, "scope_ambiguous"
    return named[0], None


def obligation_lookup(
    *, enablement: Enablement, asking: Asker, query: str, route: RouteProposal, invoking_session: str | None
) -> tuple[ReplanSituation | None, str | None]:
    """`(the lookup over the asker's open LoopX Replan obligation, None)`; `(None, None)` when
    LoopX holds none (the lookup then stands on its own); `(None, "loopx_state_unreadable")` when
    LoopX's state cannot be read here (no `loopx` history, a Node it cannot run): never answered
    as if there were no obligation."""
    if asking.goal_id is None:
        return None, None
    try:
        situation = loopx_situation(
            goal_id=asking.goal_id,
            agent_id=enablement.agent_id,
            enablement=enablement,
            route=route,
            registry=Path(asking.registry) if asking.registry else None,
            runtime_root=Path(asking.runtime_root) if asking.runtime_root else None,
        )
    except NoLoopXObligation:
        return None, None
    except Exception:
        return None, "loopx_state_unreadable"
    update = {"operator_request": OperatorRequest(requested=True), "invoking_session": invoking_session}
    return situation.model_copy(update=update), None


def scoped_situation(
    *, enablement: Enablement, asking: Asker, query: str, route: RouteProposal, invoking_session: str | None
) -> ReplanSituation:
    """The typed situation of one free-text lookup; a resume route (the scope's recent
    unresolved failures, for a query that names no step) makes it a `resume_or_handoff_gap`."""
    resuming = route.action_kind == RESUME
    digest = hashlib.sha256("\0".join([asking.goal_id or "", enablement.agent_id, query]).encode()).hexdigest()[:16]
    return ReplanSituation.model_validate(
        {
            "schema_version": "replan_situation_v0",
            "situation_id": f"loopx-lookup-{digest}",
            "scope": {
                "agent_id": enablement.agent_id,
                "project_id": enablement.project_id,
                "repository_id": enablement.repository_id,
            },
            "obligation": {"obligation_id": f"lookup-{digest}"},
            "proposed": {
                "observation": {"result_class": "advanced", "work_item_id": f"lookup-{digest}"},
                "route": route.model_dump(exclude_defaults=True),
            },
            "coverage": {
                "hypotheses_exhausted": False,
                "prior_session_coverage": "unknown",
                "work_identified": resuming,
                "decision_evidence_missing": resuming,
            },
            "operator_request": {"requested": not resuming},
            "invoking_session": invoking_session,
        }
    )


def resume_route(enablement: Enablement, factory: ProviderFactory) -> tuple[RouteProposal | None, str | None]:
    """For LoopX's `prepare-evidence`, which names no step: `(route, None)` over the scope's most recent unresolved
    failures; `(None, code)` when there are none (`no_unresolved_failures` from a fresh index,
    else the index's freshness) or the provider cannot say (`(None, None)`: no such capability)."""
    try:
        provider = factory(enablement, enablement.provider)
        if not isinstance(provider, ListsRecentFailures):
            return None, None
        failures = provider.recent_failures()
    except EvidenceError as error:
        return None, error.reason_code
    if failures.commands:
        return RouteProposal(action_kind=RESUME, commands=list(failures.commands)), None
    return None, "no_unresolved_failures" if failures.freshness == "fresh" else f"index_{failures.freshness}"
