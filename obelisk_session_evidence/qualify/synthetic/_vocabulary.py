"""The synthetic repository the qualification cases work in: modules, commands, blockers, hypotheses.

Everything is plain data so the generator stays a deterministic function of its seed. Paraphrases
were written the way agents restate things across sessions (reordered, hedged, abbreviated),
not tuned to the comparator: several are hard for a lexical matcher on purpose.
"""

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Module:
    """One unit of the synthetic repository, with its code, test and the commands that check it."""

    name: str
    source: str
    test: str
    ecosystem: str


_PY: Final = (
    "parser",
    "lexer",
    "auth",
    "session",
    "cache",
    "billing",
    "invoice",
    "scheduler",
    "exporter",
    "importer",
    "router",
    "storage",
    "metrics",
    "retry",
    "webhook",
    "search",
)
_TS: Final = ("checkout", "cart", "profile", "navbar", "uploader", "pricing")
_GO: Final = ("queue", "ratelimit", "gateway", "shard")

MODULES: Final[tuple[Module, ...]] = (
    *(Module(n, f"src/app/{n}.py", f"tests/test_{n}.py", "python") for n in _PY),
    *(Module(n, f"web/src/{n}.ts", f"web/src/{n}.test.ts", "node") for n in _TS),
    *(Module(n, f"pkg/{n}/{n}.go", f"pkg/{n}/{n}_test.go", "go") for n in _GO),
)

REPO_ROOT: Final = "/home/dev/code/alpha"
"""The main checkout of the synthetic repository."""
WORKTREE_ROOT: Final = "/home/dev/code/alpha-worktrees/feature-{n}"
"""Worktrees of the same repository (`{n}` is a small number)."""
FOREIGN_REPO_ROOT: Final = "/home/dev/code/beta"
"""Another repository of the same agent: its history must never count."""


def test_command(module: Module) -> str:
    """The canonical command that runs `module`'s tests."""
    if module.ecosystem == "python":
        return f"pytest {module.test} -x"
    if module.ecosystem == "node":
        return f"npx jest {module.test}"
    return f"go test ./pkg/{module.name}/..."


def meaning_flag(module: Module, index: int) -> str:
    """A flag (with value) that changes what the test command does."""
    options = {
        "python": ("-k unicode", "--lf", "-m slow", "--runxfail", "-p no:randomly", "--deselect tests/test_smoke.py"),
        "node": ("--coverage", "-t checkout_total", "--updateSnapshot", "--onlyChanged"),
        "go": ("-race", "-run TestExpire", "-tags integration", "-short"),
    }[module.ecosystem]
    return options[index % len(options)]


SCRIPTS: Final = (
    ("scripts/migrate.py", "--dry-run"),
    ("scripts/replay_events.py", "--input {tmp}/events.json"),
    ("scripts/backfill_invoices.py", "--since {date}"),
    ("scripts/rebuild_index.py", "--shard {n}"),
    ("scripts/export_report.py", "--out {tmp}/report.csv"),
    ("scripts/seed_db.py", "--fixtures tests/fixtures/base.json"),
)
"""Maintenance scripts: `{tmp}`, `{date}` and `{n}` are volatile values."""

TEMP_DIRS: Final = (
    "/tmp/tmpa81kq2",
    "/tmp/tmp4z_0pl9c",
    "/tmp/pytest-of-dev/pytest-12",
    "/var/folders/x1/T/tmpq8",
    "/tmp/run-20260302-0915",
    "/private/tmp/tmpk29dd1",
    "/tmp/tmp7hh2xe",
    "/tmp/tmpx0r3_n",
)

OTHER_COMMANDS: Final[tuple[tuple[str, str], ...]] = (
    ("git push origin {branch}", "git push --force origin {branch}"),
    ("git rebase origin/main", "git rebase -i origin/main"),
    ("docker build -t app:{n} .", "docker build --no-cache -t app:{n} ."),
    ("pip install -e .", "pip install -e . --no-deps"),
    ("npm ci", "npm ci --ignore-scripts"),
    ("alembic upgrade head", "alembic downgrade -1"),
    ("make lint", "make lint FIX=1"),
    ("ruff check src/app", "ruff check --fix src/app"),
)
"""Non-test routes, each with a variant whose flag changes its meaning."""

BACKGROUND_COMMANDS: Final = (
    "git status",
    "git log --oneline -n 20",
    "git diff {source}",
    "ls {folder}",
    "grep -rn TODO {source}",
    "git push origin wip-{name}",
    "git stash list",
)
"""Harmless everyday commands for background sessions; no case ever proposes one."""

BLOCKERS: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "the staging database credentials are missing from the vault",
        "vault has no staging DB credentials",
        "the staging database is down for planned maintenance",
    ),
    (
        "the container registry rejects the push with 403 forbidden",
        "docker push denied: the container registry returns 403 forbidden",
        "the container registry is out of storage quota",
    ),
    (
        "the CI runner cannot reach the package index",
        "package index unreachable from the CI runner",
        "the CI runner has no cached wheels for the package index mirror",
    ),
    (
        "STRIPE_API_KEY is not set in the test environment",
        "the test environment lacks STRIPE_API_KEY",
        "the Stripe sandbox account is suspended",
    ),
    (
        "port 5432 is already in use by another postgres instance",
        "another postgres instance already uses port 5432",
        "postgres refuses connections without SSL on port 5432",
    ),
    (
        "the build runner is out of disk space",
        "no disk space left on the build runner",
        "the build runner lost its network mount",
    ),
    (
        "permission denied writing the cache directory under /var/lib/app",
        "cannot write the /var/lib/app cache directory: permission denied",
        "the cache directory under /var/lib/app is on a read-only filesystem",
    ),
    (
        "the upstream geocoding API returns 503 service unavailable",
        "geocoding API upstream is down, answering 503 service unavailable",
        "the upstream geocoding API changed its response schema",
    ),
    (
        "branch protection requires two approving reviews before merge",
        "cannot merge: two approving reviews required by branch protection",
        "branch protection requires signed commits before merge",
    ),
    (
        "migration 0042 fails against the production schema snapshot",
        "the production schema snapshot breaks migration 0042",
        "migration 0042 takes a table lock longer than the deploy window",
    ),
    (
        "the runner ships node 16 but the build requires node 18",
        "build requires node 18, runner only has node 16",
        "the runner's npm cache is corrupted",
    ),
    (
        "the SSO test tenant is locked out after too many login attempts",
        "too many login attempts locked out the SSO test tenant",
        "the SSO test tenant certificate expired",
    ),
    (
        "the feature flag service rate limits the CI token",
        "CI token is rate limited by the feature flag service",
        "the feature flag service lost the checkout flag definitions",
    ),
    (
        "GPU quota is exhausted in the eval project",
        "the eval project has exhausted its GPU quota",
        "the eval project has no service account for the GPU pool",
    ),
)
"""(blocker as first written, the same blocker in other words, a different blocker nearby)."""

HYPOTHESES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "the cache key ignores the locale",
        "locale is not part of the cache key",
        "the cache key ignores the user's timezone",
    ),
    (
        "token expiry compares with <= instead of <",
        "the expiry comparison uses <= where it should use <",
        "token expiry is computed in local time instead of UTC",
    ),
    (
        "the retry loop never backs off between attempts",
        "retry attempts happen without backing off",
        "the retry loop retries requests that are not idempotent",
    ),
    (
        "the parser drops the byte order mark incorrectly",
        "byte order mark handling in the parser drops it incorrectly",
        "the parser mishandles CRLF line endings",
    ),
    (
        "session cookies lack the secure flag",
        "the secure flag is missing on session cookies",
        "session cookies expire before the idle timeout",
    ),
    (
        "invoice totals round each line before summing",
        "each line is rounded before the invoice totals are summed",
        "invoice totals ignore the discount line",
    ),
    (
        "the scheduler uses wall clock time across DST changes",
        "DST changes break the scheduler because it uses wall clock time",
        "the scheduler drops jobs when the queue is full",
    ),
    (
        "the exporter writes CSV fields without quoting commas",
        "commas inside CSV fields are not quoted by the exporter",
        "the exporter writes CSV files in the wrong encoding",
    ),
    (
        "webhook signatures are verified against the parsed body instead of the raw bytes",
        "signature verification of webhooks uses the parsed body, not the raw bytes",
        "webhook deliveries are retried without an idempotency key",
    ),
    (
        "the search tokenizer lowercases after stemming",
        "lowercasing happens after stemming in the search tokenizer",
        "the search tokenizer splits hyphenated words",
    ),
    (
        "the rate limiter shares one bucket across all tenants",
        "all tenants share a single rate limiter bucket",
        "the rate limiter bucket refills too slowly",
    ),
    (
        "the uploader reads the whole file into memory before chunking",
        "before chunking, the uploader loads the entire file into memory",
        "the uploader retries chunks out of order",
    ),
)
"""(hypothesis as first written, the same one in other words, a different one nearby)."""

DECISIONS: Final = (
    "Decision: keep the public API of {module} unchanged and fix it internally.",
    "I'll look at {source} first; the failure points there.",
    "Next: run the {module} tests again after the change.",
    "Summary so far: {module} needs a smaller fix than planned.",
    "Going with the minimal change in {source}.",
    "Reviewed the {module} docs; nothing there explains the failure.",
)
"""Background prose an agent writes while working on a module."""
