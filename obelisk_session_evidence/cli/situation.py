"""`situation`: hand LoopX a situation it can name (`spool`), build one from its state
(`from-loopx`), or by hand without LoopX (`new`)."""

import hashlib
from pathlib import Path

import click
from rich.console import Console

from obelisk_session_evidence.cli.common import format_option, read_document, reported_errors
from obelisk_session_evidence.cli.render_situation import (
    render_situation_summary,
    render_spooled,
    spooled_document,
)
from obelisk_session_evidence.contracts.errors import ScopeRefused
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.situation import ReplanSituation, RouteProposal
from obelisk_session_evidence.contracts.situation_outputs import SituationWritten
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.loopx.loopx_state import loopx_situation
from obelisk_session_evidence.loopx.recall import agent_enablement, spool_denial
from obelisk_session_evidence.loopx_runtime import loopx_runtime
from obelisk_session_evidence.manual_situation import enabled_scope, manual_situation
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import spool_document


@click.group()
def situation() -> None:
    """Situations for LoopX's Decision Context.

    Example: obelisk-session-evidence situation spool --situation situation.json
    """


@situation.command()
@click.option(
    "--situation",
    "situation_source",
    required=True,
    metavar="FILE|-",
    help="A replan_situation_v0 JSON document, or - for standard input.",
)
@format_option
def spool(situation_source: str, output_format: str) -> None:
    """Validate a situation, keep it in the private spool, and print the reference LoopX sends
    as its query (`recall-context --query <reference>`). The reference is a content digest: it
    names the situation without revealing it.

    Example: obelisk-session-evidence situation spool --situation situation.json --format json

    \b
    From LoopX (the reference is the query):
      REF=$(obelisk-session-evidence situation spool --situation situation.json)
      loopx decision-context recall-context ... --query "$REF"
    """
    with reported_errors():
        raw = read_document(situation_source)
        _check_spoolable(load_contract(ReplanSituation, raw))
        digest = spool_document(state_paths(), "situations", raw)
    _print_reference(digest, output_format)


@situation.command("from-loopx")
@click.option("--goal-id", required=True, help="The LoopX goal.")
@click.option("--agent-id", required=True, help="The LoopX agent whose open Replan obligation is read.")
@click.option("--obligation-id", help="Require LoopX's open obligation to have this id.")
@click.option(
    "--proposed-observation",
    "proposed_source",
    metavar="FILE|-",
    help="The typed_progress_observation_v0 the agent proposes (default: its newest one).",
)
@click.option("--command", "commands", multiple=True, help="A shell command the route would run. Repeatable.")
@click.option("--file", "files", multiple=True, help="A file the route would touch. Repeatable.")
@click.option("--hypothesis", help="The hypothesis the route tests, in words.")
@click.option("--blocker", help="The blocker the route claims, in words.")
@click.option(
    "--registry", type=click.Path(dir_okay=False, path_type=Path), help="LoopX's registry (LoopX's default otherwise)."
)
@click.option(
    "--runtime-root",
    type=click.Path(file_okay=False, path_type=Path),
    help="LoopX's runtime root (LoopX's rule otherwise).",
)
@click.option("--spool", "spool_it", is_flag=True, help="Keep the situation privately and print only its reference.")
@format_option
def from_loopx(
    goal_id: str,
    agent_id: str,
    obligation_id: str | None,
    proposed_source: str | None,
    commands: tuple[str, ...],
    files: tuple[str, ...],
    hypothesis: str | None,
    blocker: str | None,
    registry: Path | None,
    runtime_root: Path | None,
    spool_it: bool,
    output_format: str,
) -> None:
    """Build a replan_situation_v0 from LoopX's own state: the agent's open Replan obligation,
    its recent typed observations and the proposed observation, scoped by its enablement here.
    Route fields LoopX does not hold are optional; without them the verdict sees only the typed
    observation (README, LoopX integration). Text output shows ids and counts only; JSON output
    is the private situation document itself; --spool keeps it private and prints its reference.

    Example: obelisk-session-evidence situation from-loopx --goal-id my-goal --agent-id
    codex-main --command "pytest tests/test_auth.py -x" --spool
    """
    with reported_errors():
        proposed = load_contract(TypedProgressObservation, read_document(proposed_source)) if proposed_source else None
        enablement = agent_enablement(state_paths(), goal_id, agent_id)
        with loopx_runtime():
            built = loopx_situation(
                goal_id=goal_id,
                agent_id=agent_id,
                enablement=enablement,
                obligation_id=obligation_id,
                proposed=proposed,
                route=RouteProposal(
                    action_kind="shell" if commands else None,
                    commands=list(commands),
                    files=list(files),
                    hypothesis=hypothesis,
                    blocker=blocker,
                ),
                registry=registry,
                runtime_root=runtime_root,
            )
        raw = built.model_dump_json(exclude_none=True).encode()
        _check_spoolable(built)
        digest = spool_document(state_paths(), "situations", raw) if spool_it else None
    if digest is not None:
        _print_reference(digest, output_format)
    elif output_format == "json":
        click.echo(raw.decode())
    else:
        render_situation_summary(built, Console())


def _check_spoolable(situation: ReplanSituation) -> None:
    """A spooled situation is bound to its enablement: only an enabled scope is spooled, and only
    for a caller that may ask for it (`loopx.recall.spool_denial`)."""
    denial = spool_denial(state_paths(), situation)
    if denial is not None:
        raise ScopeRefused(denial)


@situation.command("new")
@click.option("--command", "commands", multiple=True, help="A shell command the next step would run. Repeatable.")
@click.option("--file", "files", multiple=True, help="A file the next step would touch. Repeatable.")
@click.option("--hypothesis", help="The hypothesis the next step tests, in words.")
@click.option("--blocker", help="The blocker the next step claims, in words.")
@click.option("--agent-id", metavar="ID", help="The agent (default: the one enabled scope's).")
@click.option("--project-id", metavar="ID", help="The project (default: the one enabled scope's).")
@click.option("--repository-id", metavar="ID", help="The repository (default: the one enabled scope's).")
@click.option("--situation-id", metavar="ID", help="The situation's id (default: manual-<16 random hex>).")
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the situation there (mode 0600) instead of standard output.",
)
@click.option("--spool", "spool_it", is_flag=True, help="Keep the situation privately and print only its reference.")
@format_option
def new(
    commands: tuple[str, ...],
    files: tuple[str, ...],
    hypothesis: str | None,
    blocker: str | None,
    agent_id: str | None,
    project_id: str | None,
    repository_id: str | None,
    situation_id: str | None,
    out_file: Path | None,
    spool_it: bool,
    output_format: str,
) -> None:
    """Build a replan_situation_v0 by hand, without LoopX: the next step you propose (commands,
    files, hypothesis, blocker) for the enabled scope, with LoopX's typed fields at documented
    defaults (an operator's request for history; README, "On your own history"). The document
    goes to standard output (it holds your route: it is private), or to --out, or the spool.

    Example: obelisk-session-evidence situation new --command "pytest tests/test_auth.py -x"
    --file tests/test_auth.py --hypothesis "the token refresh races the logout" --out situation.json
    """
    with reported_errors():
        paths = state_paths()
        scope = enabled_scope(load_config(paths), agent_id=agent_id, project_id=project_id, repository_id=repository_id)
        built = manual_situation(
            scope,
            commands=list(commands),
            files=list(files),
            hypothesis=hypothesis,
            blocker=blocker,
            situation_id=situation_id,
        )
        raw = built.model_dump_json(exclude_none=True).encode()
        if out_file is not None:
            raw += b"\n"
            write_private(out_file.expanduser(), raw)
        digest = None
        if spool_it:
            _check_spoolable(built)
            digest = spool_document(paths, "situations", raw)
    if digest is not None:
        _print_reference(digest, output_format)
    elif out_file is not None:
        _print_written(built, raw, out_file, output_format)
    else:
        click.echo(raw.decode())


def _print_written(built: ReplanSituation, raw: bytes, out_file: Path, output_format: str) -> None:
    if output_format == "json":
        written = SituationWritten(
            situation_id=built.situation_id,
            path=str(out_file.expanduser().resolve()),
            digest="sha256:" + hashlib.sha256(raw).hexdigest(),
        )
        click.echo(written.model_dump_json())
    else:
        click.echo(f"wrote {out_file} (situation {built.situation_id})")
        click.echo(f"next: obelisk-session-evidence run --situation {out_file}")


def _print_reference(digest: str, output_format: str) -> None:
    if output_format == "json":
        click.echo(spooled_document(digest))
    else:
        render_spooled(digest, Console(soft_wrap=True))
