"""`qualify`: the Stage 0 offline qualification (RFC §9–10) into a report folder."""

from pathlib import Path
from typing import TYPE_CHECKING

import click

from obelisk_session_evidence.cli.common import (
    EXIT_NOT_OK,
    format_option,
    reported_errors,
    text_console,
)
from obelisk_session_evidence.cli.render_qualify import render_qualification
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

if TYPE_CHECKING:
    from obelisk_session_evidence.qualify import Backend


@click.command()
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for report.md, the PNG plots and results.json (created if missing).",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Seed of the generated cases; the same seed gives the same cases and tables.",
)
@click.option(
    "--backend",
    type=click.Choice(["native", "standin"]),
    default="native",
    show_default=True,
    help="native: real session files and the native index; standin: in-memory histories.",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the native backend writes its synthetic sessions and index (default: OUT/native-histories).",
)
@click.option(
    "--per-family",
    type=click.IntRange(min=1),
    help="Smoke run: only the first N cases of each family (the report says how many ran).",
)
@click.option(
    "--real/--no-real",
    "real",
    default=None,
    help="Run the hand-labelled real-transcript set too (default: when the real corpus is present).",
)
@click.option(
    "--replay/--no-replay",
    "replay",
    default=None,
    help="Replay the real corpus and judge by real outcomes, RFC §10's three arms on identical calls "
    "(default: when the real corpus is present and not a --per-family smoke run).",
)
@format_option
@stops_on_signals
def qualify(
    out_dir: Path,
    seed: int,
    backend: "Backend",
    workdir: Path | None,
    per_family: int | None,
    real: bool | None,
    replay: bool | None,
    output_format: str,
) -> None:
    """Run the three arms on the labelled fixtures and write the qualification report.

    Exits 0 when every judging target is met, 2 otherwise; each missed target is named with its
    figure against the target. With the real corpus replayed, its targets (alarms right, dead ends
    caught, judged by what each call really did next) judge; the synthetic arms are coverage.

    Example: obelisk-session-evidence qualify --out qualification/
    """
    from obelisk_session_evidence.qualify import qualify as run_qualification
    from obelisk_session_evidence.qualify.real_cases import corpus_root, load_real_cases, sample_real_cases
    from obelisk_session_evidence.qualify.synthetic import qualification_cases
    from obelisk_session_evidence.tokenizer import load_encoder

    with reported_errors():
        encoder = load_encoder(state_paths().cache_dir / "tiktoken")
        cases = qualification_cases(seed=seed, per_family=per_family)
        real_cases = load_real_cases() if (real if real is not None else corpus_root().is_dir()) else ()
        if per_family is not None:
            real_cases = sample_real_cases(real_cases, per_category=per_family)
        summary = run_qualification(
            out_dir,
            seed=seed,
            backend=backend,
            encoder=encoder,
            workdir=workdir,
            cases=cases,
            real_cases=real_cases,
            real_replay=replay if replay is not None else corpus_root().is_dir() and per_family is None,
        )
    if output_format == "json":
        click.echo(summary.model_dump_json())
    else:
        render_qualification(summary, text_console())
    if not summary.targets_met:
        raise SystemExit(EXIT_NOT_OK)
