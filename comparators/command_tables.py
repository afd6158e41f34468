"""The tables command normalisation reads: shell syntax, wrappers, aliases and flag meanings.

Kept apart from `commands.py` so the rules read as code and the vocabulary as data. Each table
says what it holds; extending one (a new wrapper, a new cosmetic flag) needs no code change.
"""

import re
from typing import Final

SEGMENT_OPERATORS: Final = frozenset({"&&", "||", ";", "&", "|", "|&", ";;"})
REDIRECTS: Final = frozenset({">", ">>", "<", ">&", "&>", "&>>", ">|", "<>", "<<<", "<&"})
SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
PYTHONS: Final = re.compile(r"^(?:python(?:\d(?:\.\d+)?)?|py|pypy\d?)$")
PYTHON_VALUE_FLAGS: Final = frozenset({"-X", "-W", "-Q"})
SCRIPT_INTERPRETERS: Final = frozenset({"node", "ruby", "perl", "deno", "bun", "tsx", "ts-node"})
PLAIN_WRAPPERS: Final = frozenset(
    {"time", "nohup", "command", "exec", "builtin", "caffeinate", "xvfb-run", "stdbuf", "unbuffer"}
)
RUNNER_WRAPPERS: Final = {
    "uv": "run",
    "poetry": "run",
    "pipenv": "run",
    "pdm": "run",
    "hatch": "run",
    "rye": "run",
    "conda": "run",
    "mamba": "run",
    "micromamba": "run",
    "pixi": "run",
    "bundle": "exec",
    "pnpm": "exec",
    "yarn": "exec",
}
"""`<tool> <verb> <command>`: wrappers that run another command in an environment."""
WRAPPER_VALUE_FLAGS: Final = frozenset(
    {
        "--with",
        "--python",
        "-p",
        "--extra",
        "--group",
        "--project",
        "--directory",
        "--env-file",
        "--package",
        "--index",
        "-n",
        "--name",
        "--prefix",
        "-e",
        "--environment",
        "-u",
        "-s",
        "-k",
        "--signal",
        "--kill-after",
    }
)
NPX_LIKE: Final = frozenset({"npx", "bunx", "pnpx"})
SETUP_PROGRAMS: Final = frozenset(
    {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", ":", "nvm", "pyenv"}
)
"""Simple commands that only prepare the shell; they are not the action."""
FILTERS: Final = frozenset(
    {
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "less",
        "more",
        "tee",
        "cat",
        "sort",
        "uniq",
        "wc",
        "cut",
        "column",
        "tr",
        "sed",
        "awk",
        "jq",
        "nl",
        "fold",
        "ts",
    }
)
"""Programs that only filter output when they follow a pipe."""
BIN_DIRS: Final = re.compile(r"(?:^|/)(?:bin|\.bin|sbin|Scripts)/[^/]+$")
PROGRAM_ALIASES: Final = {
    "py.test": "pytest",
    "pip3": "pip",
    "nodejs": "node",
    "yarnpkg": "yarn",
    "docker-compose": "docker compose",
    "python-m-pytest": "pytest",
    "gmake": "make",
    "ipython3": "ipython",
}
SUBCOMMAND_PROGRAMS: Final = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "uv",
        "poetry",
        "gh",
        "dotnet",
        "helm",
        "terraform",
        "brew",
        "apt",
        "apt-get",
        "systemctl",
        "bazel",
        "nx",
        "turbo",
        "deno",
        "conda",
        "mvn",
        "gradle",
        "rustup",
        "ruff",
        "alembic",
        "django-admin",
        "manage.py",
        "tox",
        "nox",
        "hatch",
        "pdm",
        "rye",
        "pixi",
        "mix",
        "biome",
    }
)
GIT_VALUE_FLAGS: Final = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
SUBCOMMAND_ALIASES: Final = {
    ("git", "ci"): "commit",
    ("git", "co"): "checkout",
    ("git", "st"): "status",
    ("git", "br"): "branch",
    ("npm", "t"): "test",
    ("npm", "tst"): "test",
    ("npm", "i"): "install",
    ("npm", "run-script"): "run",
    ("npm", "rum"): "run",
    ("npm", "urn"): "run",
    ("cargo", "t"): "test",
    ("cargo", "b"): "build",
    ("cargo", "c"): "check",
    ("pnpm", "i"): "install",
    ("pip", "uninstall"): "uninstall",
}
SCRIPT_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
RUNNER_VALUE_FLAGS: Final[dict[str, frozenset[str]]] = {
    "npm": frozenset({"-w", "--workspace", "--loglevel"}),
    "pnpm": frozenset({"-F", "--filter", "--loglevel", "--reporter"}),
    "yarn": frozenset(),
    "bun": frozenset({"-F", "--filter", "--elide-lines"}),
}
"""A package manager's options that take a value, as its own options before a script or subcommand."""
PACKAGE_MANAGER_BUILTINS: Final = frozenset(
    {
        "install",
        "ci",
        "add",
        "remove",
        "uninstall",
        "update",
        "upgrade",
        "up",
        "dedupe",
        "init",
        "publish",
        "pack",
        "link",
        "unlink",
        "outdated",
        "ls",
        "list",
        "why",
        "audit",
        "config",
        "exec",
        "dlx",
        "create",
        "version",
        "view",
        "info",
        "cache",
        "login",
        "logout",
        "run",
        "x",
    }
)
NPM_LIFECYCLE: Final = frozenset({"test", "start", "stop", "restart"})
SINGLE_DASH_LONG: Final = frozenset(
    {
        "find",
        "java",
        "javac",
        "gcc",
        "g++",
        "clang",
        "clang++",
        "cc",
        "ffmpeg",
        "xcodebuild",
        "terraform",
        "go test",
        "go build",
        "go vet",
        "go run",
        "go install",
        "go list",
        "go mod",
        "go get",
        "go generate",
        "go",
        "dig",
        "ssh-keygen",
        "openssl",
        "tar",
        "qemu-system-x86_64",
    }
)
"""Programs whose `-word` options are single long options, not bundles of letters."""

COSMETIC_FLAGS: Final[dict[str, dict[str, bool]]] = {
    "*": {
        "--color": True,
        "--colour": True,
        "--no-color": False,
        "--no-colour": False,
        "--verbose": False,
        "--quiet": False,
        "--silent": False,
        "--progress": False,
        "--no-progress": False,
        "--no-pager": False,
        "--ansi": False,
        "--no-ansi": False,
    },
    "pytest": {
        "-v": False,
        "-q": False,
        "-s": False,
        "-x": False,
        "-l": False,
        "-r": True,
        "--tb": True,
        "--durations": True,
        "--no-header": False,
        "--capture": True,
        "--showlocals": False,
        "-n": True,
        "--numprocesses": True,
        "--exitfirst": False,
        "--maxfail": True,
        "--disable-warnings": False,
        "-W": True,
        "--full-trace": False,
        "--no-summary": False,
        "--strict-markers": False,
        "--timeout": True,
    },
    "go test": {
        "-v": False,
        "-count": True,
        "-timeout": True,
        "-json": False,
        "-p": True,
        "-parallel": True,
        "-failfast": False,
    },
    "cargo test": {
        "-q": False,
        "-v": False,
        "-j": True,
        "--jobs": True,
        "--message-format": True,
        "--no-fail-fast": False,
    },
    "cargo build": {"-q": False, "-v": False, "-j": True, "--jobs": True, "--message-format": True},
    "cargo check": {"-q": False, "-v": False, "-j": True, "--jobs": True, "--message-format": True},
    "make": {"-j": True, "--jobs": True, "-s": False, "--no-print-directory": False, "-w": False},
    "jest": {
        "--verbose": False,
        "--silent": False,
        "--colors": False,
        "--ci": False,
        "-i": False,
        "--runInBand": False,
        "--reporters": True,
    },
    "vitest": {"--reporter": True, "--run": False, "--silent": False},
    "mypy": {
        "--pretty": False,
        "--no-color-output": False,
        "--show-error-codes": False,
        "--no-error-summary": False,
        "--show-column-numbers": False,
    },
    "ruff check": {"-q": False, "--no-cache": False, "--output-format": True, "--show-fixes": False, "-n": False},
    "tsc": {"--pretty": False},
    "npm run": {"-s": False, "--loglevel": True, "--if-present": False},
    "git log": {"--oneline": False, "--no-decorate": False, "--decorate": False, "--stat": False},
    "git status": {"-s": False, "--short": False, "-b": False, "--porcelain": False},
    "git diff": {"--stat": False, "--name-only": False, "--name-status": False},
}
"""Flags that change only how output looks, per program; True when the flag takes a value."""
VALUE_LETTERS: Final[dict[str, frozenset[str]]] = {
    "pytest": frozenset("kmpcWo"),
    "make": frozenset("jCfIlo"),
    "git commit": frozenset("mCcFt"),
    "grep": frozenset("efmABCd"),
    "head": frozenset("nc"),
    "tail": frozenset("nc"),
}
"""Short options that take a value (`-kexpr` is `-k expr`), where getopt bundling matters."""
CHECK_PROGRAMS: Final = frozenset(
    {
        "pytest",
        "unittest",
        "tox",
        "nox",
        "jest",
        "vitest",
        "mocha",
        "ava",
        "rspec",
        "phpunit",
        "go test",
        "go build",
        "go vet",
        "cargo test",
        "cargo build",
        "cargo check",
        "cargo clippy",
        "mypy",
        "pyright",
        "ruff check",
        "ruff",
        "flake8",
        "pylint",
        "eslint",
        "tsc",
        "make",
        "ctest",
        "bazel test",
        "bazel build",
        "dotnet test",
        "dotnet build",
        "mvn test",
        "mvn verify",
        "gradle test",
        "gradle build",
        "npm run test",
        "npm run build",
        "npm run lint",
        "npm run typecheck",
        "pnpm run test",
        "pnpm run build",
        "yarn run test",
        "yarn run build",
        "bun run test",
        "deno test",
        "swift test",
        "swift build",
        "pre-commit",
        "black",
        "isort",
    }
)
"""Checks: their outcome depends on the code, so a re-run after an edit is a new observation."""
