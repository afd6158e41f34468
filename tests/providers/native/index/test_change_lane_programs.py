"""The change lane's SQL pre-filter is a superset of what compare-route counts as a change: a
command the comparators say writes files is never filtered out before they see it."""

import pytest

from obelisk_session_evidence.comparators.changes import changed_paths
from obelisk_session_evidence.comparators.commands import parse_command
from obelisk_session_evidence.providers.native.index.fts import command_key, program_of
from obelisk_session_evidence.providers.native.index.lanes import _CHANGES, CHANGER_PROGRAMS

WRITING_COMMANDS = (
    "bunx biome check --write apps/cli/src/commands/grade/index.ts",
    "npx prettier --write src",
    "pnpm exec eslint --fix src",
    "bun run lint:fix 2>&1 | tail -5",
    "yarn lint --fix",
    "bun run build",
    "npm run build:web",
    "make build",
    "cargo build --release",
    "go build ./...",
    "tsc -p tsconfig.build.json",
    "uv run ruff format .",
    "sed -i 's/a/b/' src/a.py",
    "git checkout -- src/a.py",
    "rm -rf tmp/clones/x",
    "npm install",
    "mix format",
)


@pytest.mark.parametrize("command", WRITING_COMMANDS)
def test_every_command_the_comparators_count_as_a_change_passes_the_lane_filter(command: str) -> None:
    assert any(changed_paths(shape) is not None for shape in parse_command(command).shapes)
    assert program_of(command) in CHANGER_PROGRAMS
    assert _CHANGES.search(command_key(command) or "")
