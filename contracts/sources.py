"""The history sources: the agents whose sessions can be read, and one `SourceSpec` of data each.

`SourceKind` is the one list of names; everything that differs per source and is data (where its
sessions live, how Obelisk and LoopX name and key it) is in its spec, and the rest of the code derives
from `SOURCES` or matches on a source exhaustively (`assert_never`), so a name added here without
its spec fails at import, and one not wired into a behaviour fails its match and the tests
parametrised over `SOURCE_KINDS`. What a source does (its parser, its unit rules) lives in
`providers/native`; docs/extending.md lists every file a new source touches.
"""

from dataclasses import dataclass
from typing import Final, Literal, assert_never, get_args

SourceKind = Literal["claude", "codex", "kimi", "pi", "dsh"]
"""An agent whose sessions are history: LoopX's `host-session:<source>:` names."""
SOURCE_KINDS: Final[tuple[SourceKind, ...]] = get_args(SourceKind)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What distinguishes one source, as data."""

    kind: SourceKind
    title: str
    """How reports name the agent."""
    home_markers: tuple[str, ...]
    """Folder names that mark the agent's own home in a session file's path."""
    data_folder: tuple[str, ...]
    """The agent's folder under the user's home, unless `data_env` names another."""
    data_env: str | None
    """The agent's own environment variable that moves `data_folder`."""
    sessions_folder: tuple[str, ...]
    """Where the sessions are inside the data folder: with it, the default root."""
    obelisk_name: str
    """The name Obelisk writes in `message.source`."""
    obelisk_folder_depth: int | None
    """How many folders under the root Obelisk keys a session by (its folder, not its files), or
    None when it keys each `*.jsonl` file (inferred: providers/obelisk/freshness.py)."""
    host_surface_prefix: str
    """How a LoopX thread-agent binding's `host_surface` for this agent begins."""


def _spec(kind: SourceKind) -> SourceSpec:
    match kind:
        case "claude":
            return SourceSpec(
                kind,
                title="Claude Code",
                home_markers=(".claude",),
                data_folder=(".claude",),
                data_env=None,
                sessions_folder=("projects",),
                obelisk_name="claude",
                obelisk_folder_depth=None,
                host_surface_prefix="claude",
            )
        case "codex":
            return SourceSpec(
                kind,
                title="Codex",
                home_markers=(".codex",),
                data_folder=(".codex",),
                data_env=None,
                sessions_folder=("sessions",),
                obelisk_name="codex",
                obelisk_folder_depth=None,
                host_surface_prefix="codex",
            )
        case "kimi":
            return SourceSpec(
                kind,
                title="Kimi",
                home_markers=(".kimi-code", ".kimi"),
                data_folder=(".kimi-code",),
                data_env="KIMI_CODE_HOME",
                sessions_folder=("sessions",),
                obelisk_name="kimi",
                obelisk_folder_depth=2,
                host_surface_prefix="kimi",
            )
        case "pi":
            return SourceSpec(
                kind,
                title="pi",
                home_markers=(".pi",),
                data_folder=(".pi", "agent", "sessions"),
                data_env="PI_CODING_AGENT_SESSION_DIR",
                sessions_folder=(),
                obelisk_name="pi",
                obelisk_folder_depth=None,
                host_surface_prefix="pi",
            )
        case "dsh":
            return SourceSpec(
                kind,
                title="DSH",
                home_markers=(".dsh",),
                data_folder=(".dsh",),
                data_env=None,
                sessions_folder=("sessions",),
                obelisk_name="deepseek",
                obelisk_folder_depth=None,
                host_surface_prefix="dsh",
            )
        case _:
            assert_never(kind)


SOURCES: Final[dict[SourceKind, SourceSpec]] = {kind: _spec(kind) for kind in SOURCE_KINDS}
"""Every source's spec, in `SOURCE_KINDS` order."""


def source_named(name: str) -> SourceKind | None:
    """`name` as a source (text from outside: a scope ref, a `--root`), or None when it names none."""
    return next((kind for kind in SOURCE_KINDS if kind == name), None)
