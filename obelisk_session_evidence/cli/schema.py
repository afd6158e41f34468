"""`schema`: write the JSON Schema of every public contract."""

import json
from pathlib import Path

import click

from obelisk_session_evidence.cli.common import format_option, reported_errors
from obelisk_session_evidence.contracts.schemas import PUBLIC_CONTRACTS, json_schema
from obelisk_session_evidence.contracts.schemas_written import SchemasWritten


@click.command()
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write <contract>.schema.json files into.",
)
@format_option
def schema(out_dir: Path, output_format: str) -> None:
    """Write one JSON Schema per public contract.

    Example: obelisk-session-evidence schema --out schemas/ --format json
    """
    with reported_errors():
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in PUBLIC_CONTRACTS:
            text = json.dumps(json_schema(name), indent=2, sort_keys=True) + "\n"
            (out_dir / f"{name}.schema.json").write_text(text, encoding="utf-8")
            if output_format == "text":
                click.echo(f"wrote {name}.schema.json")
    if output_format == "json":
        written = SchemasWritten(out_dir=str(out_dir.resolve()), written=list(PUBLIC_CONTRACTS))
        click.echo(written.model_dump_json())
