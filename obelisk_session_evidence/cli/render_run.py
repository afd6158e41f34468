"""Text renderings for people; JSON renderings are the contracts themselves."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision


def render_decision(decision: ReplanEvidenceDecision, console: Console) -> None:
    """A readable summary of a public decision (codes and numbers only)."""
    delta = decision.semantic_delta
    table = Table(title=f"Replan evidence decision · {decision.situation_id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("trigger", decision.trigger or "-")
    table.add_row(
        "admission",
        f"{'admitted' if decision.admission.admitted else 'not admitted'} ({decision.admission.reason_code})",
    )
    table.add_row("retrieval", decision.retrieval.reason_code)
    comparison = decision.comparison
    scores = ", ".join(f"{name} {value}" for name, value in comparison.scores.items()) or "-"
    table.add_row("verdict", f"{comparison.verdict} (novelty: {scores}; matched {comparison.matched_items})")
    table.add_row(
        "semantic delta",
        f"{'accepted' if delta.accepted else 'rejected'}: {', '.join(delta.outcomes) or 'no outcome'}"
        f" [{delta.reason_code}]",
    )
    receipt = decision.receipt
    if receipt is None:
        table.add_row("receipt", "none (no lookup)")
    else:
        counts = ", ".join(f"{kind} {n}" for kind, n in receipt.evidence_type_counts.items() if n)
        table.add_row(
            "receipt",
            f"{receipt.result_count} items ({counts or 'none'}); freshness {receipt.freshness}; "
            f"truncated {str(receipt.truncated).lower()}, omitted {receipt.omitted_count}; "
            f"{receipt.provider_version}",
        )
        if receipt.prior_call_revisions is not None:
            table.add_row("prior call revisions", receipt.prior_call_revisions.describe())
        table.add_row("verdict basis", receipt.describe_verdict_basis())
        table.add_row("result digest", receipt.result_digest)
    console.print(table)
