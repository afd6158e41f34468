"""The index schema as named, ordered migrations, each applied once and recorded in `schema_migrations`.

Tokenizer: FTS5 `unicode61 remove_diacritics 2`. It splits paths and flags into word tokens
(`tests/test_auth.py` -> tests, test, auth, py; `-x` -> x) and keeps every token however short, so
a quoted term is matched as a phrase of adjacent tokens: literal enough for commands and paths,
and a paraphrase still shares tokens. `trigram` was rejected: it silently matches nothing for
terms under 3 characters (`-x`, `rm`, `go`; Obelisk issue #76 lost 45% precision on the
fallback), stores roughly three times the postings, and its bm25 scores trigrams, not words.

`entry_text` columns: `command` (tool commands, file tools' names and paths), `body` (messages,
summaries, tool output) and `detail` (stored, not indexed: what a successful file tool read or
wrote, which is file content rather than anything the agent did, and would otherwise make every
code word common).
"""

import sqlite3
import time
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema change: a stable name and the statements that make it."""

    name: str
    statements: tuple[str, ...]


FTS_TOKENIZER: Final = "unicode61 remove_diacritics 2"

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        "0001_initial",
        (
            """CREATE TABLE meta (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            ) WITHOUT ROWID""",
            """CREATE TABLE roots (
                source TEXT NOT NULL,
                path TEXT NOT NULL,
                state TEXT NOT NULL,
                refreshed_at REAL,
                PRIMARY KEY (source, path)
            ) WITHOUT ROWID""",
            """CREATE TABLE files (
                id INTEGER PRIMARY KEY,
                source TEXT NOT NULL,
                root TEXT NOT NULL,
                path TEXT NOT NULL UNIQUE,
                signature TEXT NOT NULL,
                device INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                ctime_ns INTEGER NOT NULL,
                end_offset INTEGER NOT NULL DEFAULT 0,
                tail_digest TEXT,
                resumable INTEGER NOT NULL DEFAULT 0,
                resume_state TEXT,
                format_version TEXT,
                skipped_by_reason TEXT NOT NULL DEFAULT '',
                skipped_total INTEGER NOT NULL DEFAULT 0,
                failure TEXT,
                indexed_at REAL NOT NULL
            )""",
            "CREATE INDEX files_root ON files (source, root)",
            """CREATE TABLE sessions (
                id INTEGER PRIMARY KEY,
                file_id INTEGER NOT NULL,
                source TEXT NOT NULL,
                session_id TEXT NOT NULL,
                parent_session_id TEXT,
                cwd TEXT,
                checkout_root TEXT,
                repository_identity TEXT,
                repository_url_key TEXT,
                git_branch TEXT,
                git_commit TEXT,
                started_at TEXT,
                ended_at TEXT,
                title TEXT,
                UNIQUE (file_id, session_id)
            )""",
            """CREATE TABLE entries (
                id INTEGER PRIMARY KEY,
                file_id INTEGER NOT NULL,
                session_row INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('message', 'tool_call', 'summary')),
                uid TEXT NOT NULL,
                evidence_type TEXT NOT NULL,
                role TEXT,
                tool_name TEXT,
                exit_code INTEGER,
                is_error INTEGER,
                observed_at TEXT,
                observed_epoch REAL,
                UNIQUE (file_id, kind, uid)
            )""",
            f"""CREATE VIRTUAL TABLE entry_text USING fts5 (
                command,
                body,
                detail UNINDEXED,
                tokenize = '{FTS_TOKENIZER}'
            )""",
            "CREATE VIRTUAL TABLE entry_vocab USING fts5vocab (entry_text, 'row')",
        ),
    ),
    Migration(
        "0002_folder_listings",
        (
            """CREATE TABLE folders (
                path TEXT PRIMARY KEY,
                inode INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                listing TEXT NOT NULL
            ) WITHOUT ROWID""",
            "CREATE INDEX files_failed ON files (source, root) WHERE failure IS NOT NULL",
        ),
    ),
    Migration(
        "0003_listing_ctime_prefix_digest_bindings",
        (
            # `cp -a`, `tar` and `rsync` restore a folder's mtime after adding to it; its ctime still moves.
            "ALTER TABLE folders ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT -1",
            # An append is resumed only when every byte before the cursor is unchanged, not only the
            # last few KiB; cursors stored before this check was made are re-read once.
            "ALTER TABLE files RENAME COLUMN tail_digest TO prefix_digest",
            "UPDATE files SET prefix_digest = NULL",
            # Repository bindings computed with git, reused while their files' stats hold (`binding_cache`).
            """CREATE TABLE repository_bindings (
                repo_roots TEXT PRIMARY KEY,
                validity TEXT NOT NULL,
                binding TEXT NOT NULL
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        "0004_call_details",
        (
            # One row per tool call, for compare-route's private prior calls and the call lanes
            # (`query.py`): the program a shell command runs and its first tokens (`fts.program_of`,
            # `fts.command_key`), its session and time; and the files the call named,
            # newline-separated. Calls indexed before this migration have no row until their file
            # is read again.
            """CREATE TABLE call_details (
                entry_id INTEGER PRIMARY KEY,
                session_row INTEGER NOT NULL,
                program TEXT,
                command_key TEXT,
                observed_epoch REAL,
                paths TEXT NOT NULL DEFAULT ''
            )""",
            "CREATE INDEX call_details_command ON call_details (command_key, session_row, observed_epoch)"
            " WHERE command_key IS NOT NULL",
            "CREATE INDEX call_details_program ON call_details (program, session_row, observed_epoch)"
            " WHERE program IS NOT NULL",
            # Per session, the newest run of each command key and program: a call lane walks
            # sessions newest first (one row per session, not per run) and checks each one's scope.
            """CREATE TABLE call_sessions (
                lane TEXT NOT NULL CHECK (lane IN ('command_key', 'program')),
                value TEXT NOT NULL,
                session_row INTEGER NOT NULL,
                newest_epoch REAL NOT NULL,
                PRIMARY KEY (lane, value, session_row)
            ) WITHOUT ROWID""",
            "CREATE INDEX call_sessions_newest ON call_sessions (lane, value, newest_epoch)",
        ),
    ),
    Migration(
        "0005_call_time",
        (
            # The change lane (`lanes.change_lane`) walks calls newest first from a time on.
            "CREATE INDEX call_details_time ON call_details (observed_epoch)",
        ),
    ),
    Migration(
        "0006_session_ids",
        (
            # Every scoped statement asks whether a candidate's session is also held from a file
            # outside the agent's roots (`scoped_sql.elsewhere_sql`): one probe per session.
            "CREATE INDEX sessions_session_id ON sessions (source, session_id)",
        ),
    ),
    Migration(
        "0007_reread_for_failure_lines",
        (
            # Bodies stored before this release hold a long output's head and tail only; the parsers
            # now keep its failure lines too (`parsers._text.kept_middle`). Every file is read again
            # at the next refresh (no stored signature matches, no resume point), the scan included.
            "UPDATE files SET signature = '', resumable = 0",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0008_call_places",
        (
            # The folder a call ran in, where its source records one (Codex `workdir`, a Claude
            # Code line's `cwd`), resolved at refresh like a session's cwd (`repository.py`): a
            # call in another repository's checkout is out of scope (`repository.call_place_sql`).
            "ALTER TABLE call_details ADD COLUMN cwd TEXT",
            "ALTER TABLE call_details ADD COLUMN checkout_root TEXT",
            "ALTER TABLE call_details ADD COLUMN repository_identity TEXT",
            # Calls indexed before carry no place: every file is read again, whole, by the next
            # refresh (no stored signature matches, no cursor resumes, no scan is the same).
            "UPDATE files SET signature = '', prefix_digest = NULL",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0009_escalated_calls",
        (
            # A call that asked to run outside the agent's sandbox (`parsers._text.runs_escalated`):
            # after a sandbox's denial it is another route than the sandboxed run.
            "ALTER TABLE call_details ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0",
            # Calls indexed before do not say: every file is read again, whole, by the next refresh.
            "UPDATE files SET signature = '', prefix_digest = NULL",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0010_merge_search_index",
        (
            # An index read again whole (0007, 0008) keeps every removed row as an FTS5 delete
            # marker that each lookup pays for until segments merge; a refresh now merges after
            # rewriting a fifth of the files (`refresh_writes.REWRITTEN_SHARE`), and this merges
            # the indexes rewritten before it.
            "INSERT INTO entry_text (entry_text) VALUES ('optimize')",
        ),
    ),
    Migration(
        "0011_problem_files_index",
        (
            # Every lookup asks for its roots' failed and damaged files (`status.scope_freshness`,
            # `cursor.has_damaged_files`): found through the few such rows, not all of a root's.
            "CREATE INDEX files_problems ON files (source, root) WHERE failure IS NOT NULL OR skipped_total > 0",
        ),
    ),
    Migration(
        "0012_run_status_readings",
        (
            # A CI status reading (`gh pr checks`, `gh run view`) that exited non-zero because the
            # watched run had not finished is no failure of the call (`failure_causes.RUN_UNFINISHED`):
            # the files holding such calls stored as failures are read again by the next refresh.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE id IN (SELECT e.file_id FROM entries e"
            " JOIN entry_text t ON t.rowid = e.id WHERE e.evidence_type = 'prior_failure' AND (t.command LIKE"
            " '%gh pr checks%' OR t.command LIKE '%gh run view%' OR t.command LIKE '%gh run watch%'))",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0013_files_scan_index",
        (
            # Every lookup reads its roots' unit paths and signatures (`last_scan.as_last_refresh_left`).
            # A `files` row is kilobytes (its resume state), so through `files_root` each of those
            # rows cost a page read of its own; this index holds what the check reads, and it
            # serves every other `(source, root)` lookup `files_root` did.
            "CREATE INDEX files_scan ON files (source, root, path, signature)",
            "DROP INDEX files_root",
        ),
    ),
    Migration(
        "0014_calls_that_did_not_fail",
        (
            # A call the agent skipped for a queued user message never ran (`failure_causes.NOT_RUN`,
            # preloopdev/preloop's Oh My Pi sessions), and a lookup that found no such name answered
            # (`command -v shellcheck`, `failure_causes.SEARCH_PROGRAMS`): the files holding such
            # calls stored as failures are read again by the next refresh.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE id IN (SELECT e.file_id FROM entries e"
            " JOIN entry_text t ON t.rowid = e.id WHERE e.evidence_type = 'prior_failure'"
            " AND (t.body LIKE '%Skipped due to queued user message%' OR t.command LIKE '%command -v%'"
            " OR t.command LIKE '%command -V%' OR t.command LIKE '%which %' OR t.command LIKE '%type %'))",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0015_codex_code_mode_calls",
        (
            # Codex code mode runs the shell from a JavaScript cell (`parsers._code_mode`): a
            # release before stored each cell as one `exec` call, and each of its `wait` polls as a
            # call of its own. The Codex files holding such calls are read again, whole, by the next
            # refresh, which reads the cells' literal commands as shell calls.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT file_id FROM entries WHERE kind = 'tool_call' AND tool_name IN ('exec', 'wait'))",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0016_codex_cell_patches",
        (
            # A code-mode cell's `apply_patch` leaves only a `patch_apply_end` event, under a call id
            # no call has: a release before stored it as an unnamed call, its files unread. The
            # Codex files holding such calls are read again, whole, by the next refresh, which reads
            # the event's files as an `apply_patch` call's (`parsers.codex`).
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT file_id FROM entries WHERE kind = 'tool_call' AND tool_name IS NULL)",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0017_codex_interrupted_processes",
        (
            # A process the agent stopped itself (Ctrl-C written to it, `parsers.codex`) ends with
            # 130, or 1 from a wrapper such as npm: a release before stored that as the call's
            # failure. The Codex files holding a failure with that status or an echoed `^C` are
            # read again, whole, by the next refresh.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id"
            " WHERE e.evidence_type = 'prior_failure' AND (e.exit_code = 130 OR t.body LIKE '%^C%'))",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0018_codex_older_shell_calls",
        (
            # Older Codex wrote a `shell_command` call's status as "Exit code: N" (0.5x-0.7x), a
            # command that failed inside its sandbox as "failed in sandbox …" (0.3x-0.5x), and ran
            # `apply_patch` through its shell tool: a release before read neither status, stored
            # those calls with no outcome, and such a patch as a shell command (its header lines).
            # The Codex files holding a shell call with no outcome or a patch header for a command
            # are read again, whole, by the next refresh (`parsers.codex`); so are those it read
            # nothing of: a legacy rollout (mid-2025, before `session_meta`) writes its items as
            # lines of their own, which a release before skipped.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id WHERE e.kind = 'tool_call'"
            " AND e.tool_name IN ('shell', 'shell_command', 'local_shell', 'exec_command')"
            " AND ((e.exit_code IS NULL AND e.is_error IS NULL) OR t.command LIKE '*** %'))",
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex'"
            " AND id NOT IN (SELECT file_id FROM entries)",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0019_claude_background_tasks",
        (
            # A Bash call run in the background answers at once ("Command running in background with
            # ID: X"): a release before stored that answer as the call's success. The Claude files
            # holding one are read again, whole, by the next refresh, which takes the outcome from
            # the task's completed read, or leaves none (`parsers.claude`).
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'claude' AND id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id WHERE e.kind = 'tool_call'"
            " AND t.body LIKE 'Command running in background with ID: %')",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0020_codex_programs_not_started",
        (
            # Older Codex answers `execution error: …` when it could not start a program it ran
            # without a shell: a release before stored that call with no outcome. The Codex files
            # holding one are read again, whole, by the next refresh, which reads it as a failure.
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id WHERE e.kind = 'tool_call'"
            " AND e.exit_code IS NULL AND e.is_error IS NULL AND t.body LIKE 'execution error: %')",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0021_codex_unclosed_patch_documents",
        (
            # `apply_patch << 'PATCH'` whose delimiter line is missing (the shell reads the patch to
            # the end of the command): a release before stored it as a shell command, the patch's
            # header lines. The Codex files holding a shell call with such a command are read again,
            # whole, by the next refresh, which stores it as an edit (`parsers.codex`).
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE source = 'codex' AND id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id WHERE e.kind = 'tool_call'"
            " AND e.tool_name IN ('shell', 'shell_command', 'local_shell', 'exec_command') AND t.command LIKE '*** %')",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
    Migration(
        "0022_zsh_refused_patterns",
        (
            # zsh refuses a command whose unquoted pattern matches no file ("zsh:1: no matches found:")
            # and runs nothing: a release before read a search's exit 1 then as no match, and a
            # filter's 0 after it as the call's success. The files holding such a call not stored as
            # a failure are read again, whole, by the next refresh (`providers.failure_causes`).
            "UPDATE files SET signature = '', prefix_digest = NULL WHERE id IN"
            " (SELECT e.file_id FROM entries e JOIN entry_text t ON t.rowid = e.id WHERE e.kind = 'tool_call'"
            " AND e.evidence_type != 'prior_failure' AND t.body LIKE '%: no matches found: %')",
            "DELETE FROM meta WHERE key = 'last_complete_scan'",
        ),
    ),
)
"""Append only: a released migration is never edited, a later one changes what it made."""


def pending_migrations(connection: sqlite3.Connection) -> list[Migration]:
    """The migrations not yet recorded in this database, in order."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")} if exists else set()
    return [migration for migration in MIGRATIONS if migration.name not in applied]


def unknown_migrations(connection: sqlite3.Connection) -> list[str]:
    """Migrations recorded in this database that this release does not know (a newer one wrote it)."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    known = {migration.name for migration in MIGRATIONS}
    return [row[0] for row in connection.execute("SELECT name FROM schema_migrations") if row[0] not in known]


def apply_migrations(connection: sqlite3.Connection) -> list[str]:
    """Apply and record every pending migration (call inside `atomic()`); returns their names."""
    connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    applied = []
    for migration in pending_migrations(connection):
        for statement in migration.statements:
            connection.execute(statement)
        connection.execute(
            "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (migration.name, time.time())
        )
        applied.append(migration.name)
    return applied
