"""What can change a command's outcome: which simple commands change files, and which commands
see the whole working tree.

A repeat is a dead end only when nothing that could change its outcome happened since it
failed. Two facts decide that, per simple command (`CommandShape`):

- `changed_paths`: a command that changes files (a formatter or fixer, `sed -i`, `git checkout
  -- …`, `git add`, a package install, a build, `cp`/`mv`/`rm`, …) and which ones. An empty tuple means
  "files it does not name" (`mix format` rewrites whatever it finds): a change somewhere in the
  repository. None means it changes nothing.
- `sees_whole_tree`: checks, builds and commits (tests, linters, type checks, package scripts,
  `git commit` with its hooks) read the whole repository.

Which of those changes count for a given failure is its cause's rule (`cause_changes.py`).
"""

import posixpath
import re
from typing import Final

from obelisk_session_evidence.comparators.commands import CommandShape

FIXER_PROGRAMS: Final[dict[str, frozenset[str] | None]] = {
    "mix format": None,
    "cargo fmt": None,
    "rustfmt": None,
    "gofmt": frozenset({"-w"}),
    "goimports": frozenset({"-w"}),
    "black": None,
    "isort": None,
    "autopep8": frozenset({"-i", "--in-place"}),
    "ruff format": None,
    "ruff check": frozenset({"--fix"}),
    "ruff": frozenset({"--fix"}),
    "prettier": frozenset({"--write", "-w"}),
    "eslint": frozenset({"--fix"}),
    "biome check": frozenset({"--write", "--apply"}),
    "biome format": frozenset({"--write"}),
    "clang-format": frozenset({"-i"}),
    "terraform fmt": None,
    "dart format": None,
}
"""Formatters and fixers, and the flag that makes them write (None: they always do)."""
IN_PLACE_EDITORS: Final[dict[str, frozenset[str]]] = {"sed": frozenset({"-i", "--in-place"}), "perl": frozenset({"-i"})}
"""Programs that edit files in place with a flag: they change what the files do."""
SCRIPT_RUNNERS: Final = ("npm run ", "make", "just", "task")
"""Programs whose target (or subcommand) names a project script."""
_REWRITING_WORDS: Final = frozenset({"fix", "format", "fmt", "write"})
_CHECKING_WORDS: Final = frozenset({"check", "verify", "ci", "diff", "dry", "test", "typecheck"})
_BUILDING_WORDS: Final = frozenset({"build", "compile", "bundle", "dist", "generate", "codegen", "prepare"})
BUILD_PROGRAMS: Final = frozenset(
    {"tsc", "cargo build", "go build", "mix compile", "vite build", "webpack", "rollup", "esbuild", "tsup"}
    | {"gradle build", "mvn package", "mvn install", "dotnet build", "swift build", "zig build", "bazel build"}
)
"""Programs that write build outputs (a type check with `--noEmit` writes nothing)."""
FILE_CHANGERS: Final = frozenset(
    {
        "patch",
        "cp",
        "mv",
        "rm",
        "touch",
        "mkdir",
        "truncate",
        "ln",
        "unzip",
        "tar",
        "git checkout",
        "git restore",
        "git stash",
        "git apply",
        "git am",
        "git reset",
        "git rm",
        "git mv",
        "git add",
        "git merge",
        "git rebase",
        "git pull",
        "git cherry-pick",
        "git revert",
        "git switch",
    }
)
"""Programs that change files or the index by their nature (`git add` changes what a commit sees)."""
HEAD_MOVERS: Final = frozenset(
    {"git switch", "git pull", "git merge", "git rebase", "git cherry-pick", "git revert", "git am", "git stash"}
)
"""Git commands that put another commit's tree in place: the files of every change between."""
_WHOLE_TREE_RESETS: Final = frozenset({"--hard", "--merge", "--keep"})
TREE_CHANGERS: Final = frozenset(
    {
        "pip install",
        "pip uninstall",
        "uv sync",
        "uv add",
        "uv remove",
        "uv pip",
        "poetry install",
        "poetry add",
        "poetry lock",
        "pdm install",
        "pdm add",
        "mix deps.get",
        "mix deps.update",
        "mix deps.compile",
        "mix deps.clean",
        "mix igniter.install",
        "bundle install",
        "cargo add",
        "cargo update",
        "go get",
        "go mod",
        "composer install",
        "composer require",
        "make install",
    }
    | {
        f"{manager} {verb}"
        for manager in ("npm", "pnpm", "yarn", "bun")
        for verb in ("install", "ci", "add", "remove", "uninstall", "update", "upgrade", "up", "link", "dedupe")
    }
)
"""Installs and lock updates: they change what every later check runs with, not named files."""
TREE_COMMANDS: Final = frozenset(
    {
        "git commit",
        "tsgo",
        "vue-tsc",
        "svelte-check",
        "biome check",
        "biome lint",
        "mix test",
        "mix compile",
        "mix credo",
        "mix dialyzer",
        "mix precommit",
        "mix quality",
        "mix check",
        "mix sobelow",
        "mix format",
        "npm test",
        "bun test",
        "deno check",
        "deno lint",
        "rake",
        "bundle exec",
        "gradle check",
        "mvn package",
        "cargo run",
        "go run",
        "npm run",
    }
)
"""Beyond `CommandShape.is_check`: commands whose outcome depends on the whole working tree."""
PROJECT_CONFIG_FILES: Final = frozenset(
    {
        "mix.exs",
        "mix.lock",
        ".formatter.exs",
        ".credo.exs",
        ".dialyzerignore",
        "test_helper.exs",
        "package.json",
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lockb",
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "tox.ini",
        "pytest.ini",
        "conftest.py",
        "requirements.txt",
        "uv.lock",
        "poetry.lock",
        "cargo.toml",
        "cargo.lock",
        "go.mod",
        "go.sum",
        "makefile",
        "gemfile",
        "gemfile.lock",
        "ruff.toml",
        ".pre-commit-config.yaml",
        ".env",
        ".env.test",
    }
)
"""Files every check of a project reads (build and test configuration, dependency manifests)."""
_CONFIG_NAME: Final = re.compile(
    r"^(?:tsconfig[\w.-]*\.json|(?:jest|vitest|vite|babel|webpack|rollup|eslint|prettier|playwright)\.config\.\w+"
    r"|\.eslintrc[\w.]*|\.prettierrc[\w.]*|\.babelrc|\.?biome\.jsonc?|deno\.jsonc?|\.editorconfig|lefthook\.ya?ml"
    r"|\.stylelintrc[\w.]*|\.golangci\.ya?ml|\.rubocop\.yml|\.clang-format|\.flake8|mypy\.ini|\.mypy\.ini)$"
)
CONFIG_FOLDERS: Final = ("config/", "test/support/", "tests/support/", "spec/support/", ".husky/", ".githooks/")
"""Folders of configuration and shared test set-up."""


def changed_paths(shape: CommandShape) -> tuple[str, ...] | None:
    """The files `shape` changes (`()`: files it does not name); None when it changes none."""
    program = shape.program
    if reformats(shape):
        pass
    elif program in FIXER_PROGRAMS:
        return None  # run without the flag that makes it write: a check
    elif program in IN_PLACE_EDITORS:
        if not IN_PLACE_EDITORS[program] & set(shape.flags):
            return None
    elif program in TREE_CHANGERS or program.startswith("mix deps.") or builds(shape):
        return ()
    elif program not in FILE_CHANGERS or shape.targets[:1] in (("list",), ("show",)):
        return None  # `git stash list` only reads
    if program in HEAD_MOVERS or (program == "git reset" and _WHOLE_TREE_RESETS & set(shape.flags)):
        return ()  # another commit's tree: files it does not name (`origin/main` is a ref, not a file)
    if program == "git checkout" and not any(posixpath.splitext(path)[1] for path in shape.paths):
        return ()  # `git checkout main`, `git checkout -b x origin/main`: a branch, not files
    # Paths outside the repository (`/tmp/…`) change nothing a repository command reads: a command
    # that named only such paths changed nothing here (not "files it does not name").
    if shape.targets and all(target.startswith(("/", "<")) for target in shape.targets):
        return None
    return tuple(path for path in shape.paths if not path.startswith(("/", "<")))


def builds(shape: CommandShape) -> bool:
    """True for a build that writes its outputs (`npm run build`, `cargo build`, `tsc` without
    `--noEmit`): what a test of a workspace package imports, files it does not name."""
    program = shape.program
    if program in BUILD_PROGRAMS:
        return not set(shape.flags) & {"--noEmit", "--no-emit"}
    words = _script_words(shape)
    return bool(words & _BUILDING_WORDS) and not words & _CHECKING_WORDS


def _script_words(shape: CommandShape) -> set[str]:
    """The words of the project script a script runner runs (`npm run lint:fix` -> {lint, fix})."""
    program = shape.program
    if not program.startswith(SCRIPT_RUNNERS):
        return set()
    script = program.removeprefix("npm run ") if program.startswith("npm run ") else " ".join(shape.targets[:1])
    return set(re.split(r"[:_\-\s]", script.lower())) - {""}


def reformats(shape: CommandShape) -> bool:
    """True for a formatter or fixer that writes (`prettier --write`, `npm run lint:fix`): it changes
    how files are written, never what they do."""
    program = shape.program
    if program in FIXER_PROGRAMS:
        writes = FIXER_PROGRAMS[program]
        return writes is None or bool(writes & set(shape.flags))
    words = _script_words(shape)
    if words and {"--fix", "--write"} & set(shape.flags):
        return True  # `yarn lint --fix`
    return bool(words & _REWRITING_WORDS) and not words & _CHECKING_WORDS


def is_project_config(path: str) -> bool:
    """True for a file every check of the project reads (`config/test.exs`, `package.json`)."""
    name = posixpath.basename(path).lower()
    return name in PROJECT_CONFIG_FILES or bool(_CONFIG_NAME.match(name)) or path.startswith(CONFIG_FOLDERS)


def sees_whole_tree(shape: CommandShape) -> bool:
    """True when any change in the repository can change `shape`'s outcome."""
    program = shape.program
    return shape.is_check or program in TREE_COMMANDS or program.startswith(("npm run ", "mix test", "make"))
