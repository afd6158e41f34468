"""`index`: manage the native session index kept under the state directory."""

import sys
from pathlib import Path

import click
from rich.console import Console

from obelisk_session_evidence.cli.common import (
    EXIT_NOT_OK,
    Command,
    fail,
    format_option,
    reported_errors,
    text_console,
)
from obelisk_session_evidence.cli.render_lifecycle import render_index_drop
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS, SourceKind
from obelisk_session_evidence.lifecycle.index_drop import drop_index
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals


@click.group()
def index() -> None:
    """Manage the native session index under the state directory.

    Example: obelisk-session-evidence index drop --yes
    """


@index.command()
@click.option("--yes", is_flag=True, help="Confirm: delete the native index (required).")
@format_option
@stops_on_signals
def drop(yes: bool, output_format: str) -> None:
    """Delete the native index; session files and Obelisk's data are never touched.

    Example: obelisk-session-evidence index drop --yes --format json
    """
    if not yes:
        fail(InvalidInput("index drop deletes the native index; pass --yes to confirm"))
    with reported_errors():
        outcome = drop_index(paths=state_paths())
    if output_format == "json":
        click.echo(outcome.model_dump_json())
    else:
        render_index_drop(outcome, text_console(markup=False, highlight=False))


def _root_options(command: Command) -> Command:
    """`--root SOURCE=PATH` (repeatable): read these folders instead of the agents' defaults."""
    return click.option(
        "--root",
        "root_options",
        multiple=True,
        metavar="SOURCE=PATH",
        help="A session folder for one agent (claude, codex, kimi, pi, dsh); repeatable. "
        "Without it: each agent's standard folder under your home.",
    )(command)


@index.command()
@click.option(
    "--root",
    "root_options",
    multiple=True,
    metavar="SOURCE=PATH",
    help="A session folder for one agent (claude, codex, kimi, pi, dsh); repeatable. "
    "Without it: the session folders of the enabled scopes (each agent's standard folder when "
    "nothing is enabled).",
)
@format_option
@stops_on_signals
def refresh(root_options: tuple[str, ...], output_format: str) -> None:
    """Bring the native index up to date, reading only what changed since the last refresh.

    Example: obelisk-session-evidence index refresh --root claude=/home/me/.claude/projects --format json
    """
    from obelisk_session_evidence.cli.render_index import refresh_progress, render_refresh_report
    from obelisk_session_evidence.providers.native.index import index_file, refresh_index

    with reported_errors():
        paths = state_paths()
        roots = parse_roots(root_options) if root_options else enabled_roots(paths)
        path = index_file(paths.index_dir)
        if output_format == "json":
            report = refresh_index(path, roots)
        else:
            with refresh_progress(Console(stderr=True)) as progress:
                report = refresh_index(path, roots, progress=progress)
    if output_format == "json":
        click.echo(report.model_dump_json())
    else:
        render_refresh_report(report, text_console(markup=False, highlight=False))
    if report.freshness != "fresh":
        sys.exit(EXIT_NOT_OK)


@index.command()
@_root_options
@format_option
@stops_on_signals
def status(root_options: tuple[str, ...], output_format: str) -> None:
    """Show what the native index holds: counts, failures, freshness, revision and size on disk.

    Freshness is judged over the given roots, else over every root the index has read.

    Example: obelisk-session-evidence index status --format json
    """
    from obelisk_session_evidence.cli.render_index import render_index_status
    from obelisk_session_evidence.providers.native.index import index_file, index_status

    with reported_errors():
        roots = parse_roots(root_options) if root_options else None
        report = index_status(index_file(state_paths().index_dir), roots=roots)
    if output_format == "json":
        click.echo(report.model_dump_json())
    else:
        render_index_status(report, text_console(markup=False, highlight=False))


def enabled_roots(paths: StatePaths) -> dict[SourceKind, list[Path]]:
    """The session folders every enabled scope reads (each once); the agents' standard folders
    when nothing is enabled."""
    from obelisk_session_evidence.lifecycle.policy import load_config
    from obelisk_session_evidence.providers.native.index.scope import enablement_roots

    config = load_config(paths)
    if config is None or not config.enablements:
        return parse_roots(())
    roots: dict[SourceKind, list[Path]] = {}
    for enablement in config.enablements:
        for source, folders in enablement_roots(enablement).items():
            roots.setdefault(source, [])
            roots[source] += [folder for folder in folders if folder not in roots[source]]
    return roots


def parse_roots(options: tuple[str, ...]) -> dict[SourceKind, list[Path]]:
    """`SOURCE=PATH` options as roots per source; none given means every agent's default folder."""
    if not options:
        return {source: [path] for source, path in default_roots(Path.home()).items()}
    roots: dict[SourceKind, list[Path]] = {}
    for option in options:
        source, separator, path = option.partition("=")
        if not separator or source not in SOURCE_KINDS or not path:
            raise InvalidInput(f"--root takes SOURCE=PATH with SOURCE one of {', '.join(SOURCE_KINDS)}")
        roots.setdefault(source, []).append(Path(path).expanduser())
    return roots
