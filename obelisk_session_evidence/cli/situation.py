"""`situation`: hand LoopX a situation it can name (`spool`)."""

import click
from rich.console import Console

from contracts.json_input import load_contract
from contracts.situation import ReplanSituation
from obelisk_session_evidence.cli.common import format_option, read_document, reported_errors
from obelisk_session_evidence.cli.render_situation import render_spooled, spooled_document
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.spool import spool_document


@click.group()
def situation() -> None:
    """Situations for LoopX's Decision Context.

    Example: obelisk-session-evidence situation spool --situation situation.json
    """


@situation.command()
@click.option("--situation", "situation_source", required=True, metavar="FILE|-",
              help="A replan_situation_v0 JSON document, or - for standard input.")
@format_option
def spool(situation_source: str, output_format: str) -> None:
    """Validate a situation, keep it in the private spool, and print the reference LoopX sends
    as its query (`recall-context --query <reference>`). The reference is a content digest: it
    names the situation without revealing it.

    Example: loopx decision-context recall-context ... --query "$(obelisk-session-evidence
    situation spool --situation situation.json)"
    """
    with reported_errors():
        raw = read_document(situation_source)
        load_contract(ReplanSituation, raw)
        digest = spool_document(state_paths(), "situations", raw)
    if output_format == "json":
        click.echo(spooled_document(digest))
    else:
        render_spooled(digest, Console(soft_wrap=True))
