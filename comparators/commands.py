"""Command normalisation: the same action written differently has the same `CommandShape`.

A command is shell-split into simple commands (`a && b; c`). Each one loses what does not
change what it does: environment assignments, `cd X &&` prefixes, wrappers (`bash -lc`, `env`,
`timeout`, `uv run`, `npx`, ...), redirections, display filters after a pipe (`| tail -n 30`),
and flags that only change how output looks (`pytest -q`). Interpreter spellings fold
(`python -m pytest` is `pytest`, `npm test` is `npm run test`), combined short flags split
(`-xvs` is `-x -v -s`), flags are a sorted set (their order does not matter), and volatile
tokens (numbers, hashes, UUIDs, timestamps, temp paths) become placeholders.
"""

import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rapidfuzz import fuzz

from comparators.paths import looks_like_path, mask_volatile, repository_path

_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEGMENT_OPERATORS: Final = frozenset({"&&", "||", ";", "&", "|", "|&", ";;"})
_REDIRECTS: Final = frozenset({">", ">>", "<", ">&", "&>", "&>>", ">|", "<>", "<<<", "<&"})
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_PYTHONS: Final = re.compile(r"^(?:python(?:\d(?:\.\d+)?)?|py|pypy\d?)$")
_PYTHON_VALUE_FLAGS: Final = frozenset({"-X", "-W", "-Q"})
_SCRIPT_INTERPRETERS: Final = frozenset({"node", "ruby", "perl", "deno", "bun", "tsx", "ts-node"})
_PLAIN_WRAPPERS: Final = frozenset(
    {"time", "nohup", "command", "exec", "builtin", "caffeinate", "xvfb-run", "stdbuf", "unbuffer"}
)
_RUNNER_WRAPPERS: Final = {
    "uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
    "conda": "run", "mamba": "run", "micromamba": "run", "pixi": "run",
    "bundle": "exec", "pnpm": "exec", "yarn": "exec",
}  # fmt: skip
"""`<tool> <verb> <command>`: wrappers that run another command in an environment."""
_WRAPPER_VALUE_FLAGS: Final = frozenset(
    {"--with", "--python", "-p", "--extra", "--group", "--project", "--directory", "--env-file",
     "--package", "--index", "-n", "--name", "--prefix", "-e", "--environment", "-u", "-s", "-k",
     "--signal", "--kill-after"}
)  # fmt: skip
_NPX_LIKE: Final = frozenset({"npx", "bunx", "pnpx"})
_SETUP_PROGRAMS: Final = frozenset(
    {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", ":", "nvm", "pyenv"}
)
"""Simple commands that only prepare the shell; they are not the action."""
_FILTERS: Final = frozenset(
    {"head", "tail", "grep", "egrep", "fgrep", "rg", "less", "more", "tee", "cat", "sort", "uniq",
     "wc", "cut", "column", "tr", "sed", "awk", "jq", "nl", "fold", "ts", "cat"}
)  # fmt: skip
"""Programs that only filter output when they follow a pipe."""
_BIN_DIRS: Final = re.compile(r"(?:^|/)(?:bin|\.bin|sbin|Scripts)/[^/]+$")
_PROGRAM_ALIASES: Final = {
    "py.test": "pytest", "pip3": "pip", "nodejs": "node", "yarnpkg": "yarn", "docker-compose":
    "docker compose", "python-m-pytest": "pytest", "gmake": "make", "ipython3": "ipython",
}  # fmt: skip
_SUBCOMMAND_PROGRAMS: Final = frozenset(
    {"git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "kubectl", "pip", "uv",
     "poetry", "gh", "dotnet", "helm", "terraform", "brew", "apt", "apt-get", "systemctl",
     "bazel", "nx", "turbo", "deno", "conda", "mvn", "gradle", "rustup", "ruff", "alembic",
     "django-admin", "manage.py", "tox", "nox", "hatch", "pdm", "rye", "pixi"}
)  # fmt: skip
_GIT_VALUE_FLAGS: Final = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_SUBCOMMAND_ALIASES: Final = {
    ("git", "ci"): "commit", ("git", "co"): "checkout", ("git", "st"): "status",
    ("git", "br"): "branch", ("npm", "t"): "test", ("npm", "tst"): "test", ("npm", "i"): "install",
    ("npm", "run-script"): "run", ("npm", "rum"): "run", ("npm", "urn"): "run",
    ("cargo", "t"): "test", ("cargo", "b"): "build", ("cargo", "c"): "check",
    ("pnpm", "i"): "install", ("pip", "uninstall"): "uninstall",
}  # fmt: skip
_SCRIPT_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
_PACKAGE_MANAGER_BUILTINS: Final = frozenset(
    {"install", "ci", "add", "remove", "uninstall", "update", "upgrade", "init", "publish", "pack",
     "link", "unlink", "outdated", "ls", "list", "why", "audit", "config", "exec", "dlx", "create",
     "version", "view", "info", "cache", "login", "logout", "run", "x"}
)  # fmt: skip
_NPM_LIFECYCLE: Final = frozenset({"test", "start", "stop", "restart"})
_SINGLE_DASH_LONG: Final = frozenset(
    {"find", "java", "javac", "gcc", "g++", "clang", "clang++", "cc", "ffmpeg", "xcodebuild",
     "terraform", "go test", "go build", "go vet", "go run", "go install", "go list", "go mod",
     "go get", "go generate", "go", "dig", "ssh-keygen", "openssl", "tar", "qemu-system-x86_64"}
)  # fmt: skip
"""Programs whose `-word` options are single long options, not bundles of letters."""

_COSMETIC_FLAGS: Final[dict[str, dict[str, bool]]] = {
    "*": {"--color": True, "--colour": True, "--no-color": False, "--no-colour": False,
          "--verbose": False, "--quiet": False, "--silent": False, "--progress": False,
          "--no-progress": False, "--no-pager": False, "--ansi": False, "--no-ansi": False},
    "pytest": {"-v": False, "-q": False, "-s": False, "-x": False, "-l": False, "-r": True,
               "--tb": True, "--durations": True, "--no-header": False, "--capture": True,
               "--showlocals": False, "-n": True, "--numprocesses": True, "--exitfirst": False,
               "--maxfail": True, "--disable-warnings": False, "-W": True, "--full-trace": False,
               "--no-summary": False, "--strict-markers": False, "--timeout": True},
    "go test": {"-v": False, "-count": True, "-timeout": True, "-json": False, "-p": True,
                "-parallel": True, "-failfast": False},
    "cargo test": {"-q": False, "-v": False, "-j": True, "--jobs": True, "--message-format": True,
                   "--no-fail-fast": False},
    "cargo build": {"-q": False, "-v": False, "-j": True, "--jobs": True, "--message-format": True},
    "cargo check": {"-q": False, "-v": False, "-j": True, "--jobs": True, "--message-format": True},
    "make": {"-j": True, "--jobs": True, "-s": False, "--no-print-directory": False, "-w": False},
    "jest": {"--verbose": False, "--silent": False, "--colors": False, "--ci": False, "-i": False,
             "--runInBand": False, "--reporters": True},
    "vitest": {"--reporter": True, "--run": False, "--silent": False},
    "mypy": {"--pretty": False, "--no-color-output": False, "--show-error-codes": False,
             "--no-error-summary": False, "--show-column-numbers": False},
    "ruff check": {"-q": False, "--no-cache": False, "--output-format": True,
                   "--show-fixes": False, "-n": False},
    "tsc": {"--pretty": False},
    "npm run": {"-s": False, "--loglevel": True, "--if-present": False},
    "git log": {"--oneline": False, "--no-decorate": False, "--decorate": False, "--stat": False},
    "git status": {"-s": False, "--short": False, "-b": False, "--porcelain": False},
    "git diff": {"--stat": False, "--name-only": False, "--name-status": False},
}  # fmt: skip
"""Flags that change only how output looks, per program; True when the flag takes a value."""
_VALUE_LETTERS: Final[dict[str, frozenset[str]]] = {
    "pytest": frozenset("kmpcnWorv" [:-2] + "o"),
    "make": frozenset("jCfIlo"),
    "git commit": frozenset("mCcFt"),
    "grep": frozenset("efmABCd"),
    "head": frozenset("nc"),
    "tail": frozenset("nc"),
}
"""Short options that take a value (`-kexpr` is `-k expr`), where getopt bundling matters."""
_CHECK_PROGRAMS: Final = frozenset(
    {"pytest", "unittest", "tox", "nox", "jest", "vitest", "mocha", "ava", "rspec", "phpunit",
     "go test", "go build", "go vet", "cargo test", "cargo build", "cargo check", "cargo clippy",
     "mypy", "pyright", "ruff check", "ruff", "flake8", "pylint", "eslint", "tsc", "make", "ctest",
     "bazel test", "bazel build", "dotnet test", "dotnet build", "mvn test", "mvn verify",
     "gradle test", "gradle build", "npm run test", "npm run build", "npm run lint",
     "npm run typecheck", "pnpm run test", "pnpm run build", "yarn run test", "yarn run build",
     "bun run test", "deno test", "swift test", "swift build", "pre-commit", "black", "isort"}
)  # fmt: skip
"""Checks: their outcome depends on the code, so a re-run after an edit is a new observation."""

_TARGET_MATCH_CUTOFF: Final = 97
"""Two targets are the same when `fuzz.ratio` reaches this (absorbs a cut snippet's last char)."""
_MAX_DEPTH: Final = 4


@dataclass(frozen=True, slots=True)
class CommandShape:
    """One simple command in canonical form: what it runs, its options and its targets."""

    program: str
    """Program with its subcommand (`git push`, `npm run test`, `pytest`, `scripts/run.sh`)."""
    flags: tuple[str, ...]
    """Meaningful flags, sorted and deduplicated (`-k`, `--force`)."""
    targets: tuple[str, ...]
    """Positional arguments and flag values, normalised and sorted."""

    @property
    def text(self) -> str:
        """The canonical text: program, flags, then targets."""
        return " ".join((self.program, *self.flags, *self.targets))

    @property
    def is_check(self) -> bool:
        """True for tests, builds, linters and type checks."""
        return self.program in _CHECK_PROGRAMS or (
            self.program.startswith("make") or posixpath.basename(self.program).startswith("test_")
        )

    @property
    def paths(self) -> tuple[str, ...]:
        """Repository paths the command names (its script and path targets)."""
        named = [t for t in self.targets if "/" in t or looks_like_path(t)]
        if "/" in self.program or looks_like_path(self.program):
            named.insert(0, self.program)
        return tuple(t for t in named if not t.startswith("<"))


def command_shapes(command: str, *, roots: Iterable[str] = ()) -> tuple[CommandShape, ...]:
    """The simple commands `command` runs, in order, without setup steps and output filters."""
    all_roots = (*roots, *cd_roots(command))
    return tuple(_shapes(command, all_roots, cwd=None, depth=0))


def normalise_command(command: str, *, roots: Iterable[str] = ()) -> str:
    """The canonical text of `command`: its simple commands' texts joined by ` && `."""
    return " && ".join(shape.text for shape in command_shapes(command, roots=roots))


def cd_roots(command: str) -> tuple[str, ...]:
    """Absolute folders `command` changes into: the checkout it ran in, as a root hint."""
    roots: list[str] = []
    for words, _ in _segments(_tokens(command)):
        words = _without_env(words)
        if len(words) == 2 and words[0] in ("cd", "pushd") and words[1].startswith("/"):
            roots.append(words[1].rstrip("/") or "/")
        elif len(words) >= 3 and words[0] in _SHELLS:
            script = _shell_script(words)
            if script is not None:
                roots.extend(cd_roots(script))
    return tuple(roots)


def command_similarity(proposed: CommandShape, historical: CommandShape) -> int:
    """0–100: 0 for another program, else the lower of flag and target agreement.

    Canonical forms already absorb spelling; what is left is meaning, so a changed flag or
    target must pull the score far down rather than shave a few points off a string ratio.
    """
    if proposed.program != historical.program:
        return 0
    flag_score = _jaccard(set(proposed.flags), set(historical.flags))
    target_score = _target_agreement(proposed.targets, historical.targets)
    return min(flag_score, target_score)


def _target_agreement(proposed: tuple[str, ...], historical: tuple[str, ...]) -> int:
    """100 × targets matched one to one / all distinct targets (`fuzz.ratio`, no processor)."""
    if not proposed and not historical:
        return 100
    remaining = list(historical)
    matched = 0
    for target in proposed:
        for index, candidate in enumerate(remaining):
            if target == candidate or fuzz.ratio(
                target, candidate, processor=None, score_cutoff=_TARGET_MATCH_CUTOFF
            ):
                matched += 1
                del remaining[index]
                break
    union = len(proposed) + len(historical) - matched
    return round(100 * matched / union)


def _jaccard(a: set[str], b: set[str]) -> int:
    if not a and not b:
        return 100
    return round(100 * len(a & b) / len(a | b))


def _tokens(command: str) -> list[str]:
    """Shell words and operators; unbalanced quotes fall back to whitespace words."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return re.findall(r"&&|\|\||[;&|<>]+|[^\s;&|<>]+", command)


def _segments(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """Simple commands, each with whether it follows a pipe; redirections dropped."""
    segments: list[tuple[list[str], bool]] = []
    words: list[str] = []
    piped = after_pipe = False
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in _SEGMENT_OPERATORS:
            if words:
                segments.append((words, after_pipe))
            words, after_pipe = [], token in ("|", "|&")
            piped = piped or after_pipe
            continue
        if token in _REDIRECTS or (token[0] in "<>&" and set(token) <= set("<>&|")):
            if words and words[-1].isdigit():
                words.pop()  # the file descriptor of `2>&1`
            skip_next = token != "<<"
            continue
        words.append(token)
    if words:
        segments.append((words, after_pipe))
    return segments


def _shapes(command: str, roots: tuple[str, ...], *, cwd: str | None, depth: int) -> list[CommandShape]:
    shapes: list[CommandShape] = []
    for words, after_pipe in _segments(_tokens(command)):
        words = _without_env(words)
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) == 2:
            cwd = _next_cwd(cwd, words[1])
            continue
        if after_pipe and _basename(words[0]) in _FILTERS:
            continue
        inner = _unwrap(words)
        if inner is None:
            continue
        if isinstance(inner, str):
            if depth < _MAX_DEPTH:
                shapes.extend(_shapes(inner, roots, cwd=cwd, depth=depth + 1))
            continue
        shape = _shape(inner, roots, cwd)
        if shape is not None:
            shapes.append(shape)
    return shapes


def _next_cwd(cwd: str | None, target: str) -> str | None:
    """Relative `cd` targets prefix later relative paths; absolute ones are roots."""
    if target.startswith(("/", "~", "$", "-")):
        return None
    joined = posixpath.normpath(posixpath.join(cwd or "", target))
    return None if joined in (".", "") else joined


def _without_env(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and _ENV_ASSIGNMENT.match(words[index]):
        index += 1
    return words[index:]


def _shell_script(words: list[str]) -> str | None:
    """The script of `bash -lc 'script'` (any flag bundle holding `c`), else None."""
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-"):
            return None
        if "c" in word[1:] and not word.startswith("--") and index + 1 < len(words):
            return words[index + 1]
    return None


def _skip_flags(words: list[str], value_flags: frozenset[str] = _WRAPPER_VALUE_FLAGS) -> list[str]:
    """Drop a wrapper's own leading options (and their values)."""
    index = 0
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        index += 1
        if word == "--":
            break
        if word in value_flags and "=" not in word:
            index += 1
    return words[index:]


def _unwrap(words: list[str]) -> list[str] | str | None:
    """The wrapped command's words; a `bash -c` script as a string; None for setup steps."""
    for _ in range(8):
        if not words:
            return None
        head = _basename(words[0])
        if head in _SETUP_PROGRAMS:
            return None
        if head == "env":
            words = _without_env(_skip_flags(words[1:]))
        elif head in ("sudo", "doas"):
            words = _skip_flags(words[1:], frozenset({"-u", "-g", "-C"}))
        elif head in _PLAIN_WRAPPERS:
            words = _skip_flags(words[1:])
        elif head == "nice":
            words = _skip_flags(words[1:], frozenset({"-n"}))
        elif head == "timeout":
            words = _skip_flags(words[1:])[1:]  # the duration
        elif head in _RUNNER_WRAPPERS and len(words) > 1 and words[1] == _RUNNER_WRAPPERS[head]:
            words = _skip_flags(words[2:])
        elif head in _NPX_LIKE:
            words = _skip_flags(words[1:], frozenset({"-p", "--package"}))
        elif head in _SHELLS:
            script = _shell_script(words)
            if script is not None:
                return script
            rest = _skip_flags(words[1:], frozenset())
            if not rest:
                return None
            return rest  # `bash run.sh args` runs the script
        elif _PYTHONS.match(head):
            rest = _skip_flags(words[1:], _PYTHON_VALUE_FLAGS | frozenset({"-m", "-c"}))
            consumed = words[1 : len(words) - len(rest)]
            if "-m" in consumed:
                module = consumed[consumed.index("-m") + 1] if consumed.index("-m") + 1 < len(consumed) else None
                return [module, *rest] if module else None
            if "-c" in consumed:
                return ["python -c", *consumed[consumed.index("-c") + 1 :], *rest]
            return rest if rest else ["python"]
        elif head in _SCRIPT_INTERPRETERS and len(words) > 1 and looks_like_path(words[1]):
            words = words[1:]
            return words
        else:
            return words
    return words


def _basename(word: str) -> str:
    return posixpath.basename(word) if "/" in word else word


def _program(words: list[str], roots: tuple[str, ...], cwd: str | None) -> tuple[str, list[str]]:
    """The program key (with subcommand) and the remaining words."""
    head, rest = words[0], words[1:]
    if "/" in head and not _BIN_DIRS.search(head):
        return _path_target(head, roots, cwd), rest
    name = _PROGRAM_ALIASES.get(_basename(head), _basename(head))
    if _PYTHONS.match(name):
        name = "python"
    if name == "python -m":
        name = "python"
    program = name
    if name.split(" ")[0] in _SUBCOMMAND_PROGRAMS:
        base = name.split(" ")[0]
        if base == "git":
            rest = _skip_flags(rest, _GIT_VALUE_FLAGS)
        if rest and not rest[0].startswith("-"):
            sub = _SUBCOMMAND_ALIASES.get((base, rest[0]), rest[0])
            rest = rest[1:]
            if base in _SCRIPT_RUNNERS:
                if sub == "run" and rest and not rest[0].startswith("-"):
                    sub, rest = f"run {rest[0]}", rest[1:]
                elif sub in _NPM_LIFECYCLE or sub not in _PACKAGE_MANAGER_BUILTINS:
                    sub = f"run {sub}"
            program = f"{name} {sub}"
    return program, rest


def _shape(words: list[str], roots: tuple[str, ...], cwd: str | None) -> CommandShape | None:
    program, rest = _program(words, roots, cwd)
    if not program:
        return None
    cosmetic = {**_COSMETIC_FLAGS["*"], **_COSMETIC_FLAGS.get(program, {})}
    single_dash_long = program in _SINGLE_DASH_LONG or program.split(" ")[0] in _SINGLE_DASH_LONG
    value_letters = _VALUE_LETTERS.get(program, frozenset())
    flags: set[str] = set()
    targets: list[str] = []
    index = 0
    only_positional = False
    while index < len(rest):
        word = rest[index]
        index += 1
        if only_positional or not word.startswith("-") or word == "-" or re.fullmatch(r"-\d+(\.\d+)?", word):
            targets.append(_target(word, roots, cwd))
            continue
        if word == "--":
            only_positional = True
            continue
        if word.startswith("--") or single_dash_long:
            name, has_value, value = word.partition("=")
            if name in cosmetic:
                if cosmetic[name] and not has_value:
                    index += 1
                continue
            flags.add(name)
            if has_value:
                targets.append(_target(value, roots, cwd))
            continue
        # A getopt bundle: `-xvs`, `-kexpr`, `-n4`.
        letters = word[1:]
        for position, letter in enumerate(letters):
            flag = f"-{letter}"
            attached = letters[position + 1 :]
            takes_value = letter in value_letters or (flag in cosmetic and cosmetic[flag])
            if not letter.isalpha():
                # `-n4` style: the rest (from a digit on) is the previous letter's value.
                value = letters[position:]
                if flag not in cosmetic and f"-{letters[position - 1]}" not in cosmetic:
                    targets.append(_target(value, roots, cwd))
                break
            if takes_value:
                if flag in cosmetic:
                    if not attached:
                        index += 1
                    break
                flags.add(flag)
                if attached:
                    targets.append(_target(attached, roots, cwd))
                elif index < len(rest):
                    targets.append(_target(rest[index], roots, cwd))
                    index += 1
                break
            if flag not in cosmetic:
                flags.add(flag)
    return CommandShape(program=program, flags=tuple(sorted(flags)), targets=tuple(sorted(targets)))


def _target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    """A positional argument: repository-relative when it is a path; volatile parts masked."""
    if looks_like_path(word) and not word.startswith(("http:", "https:")):
        return mask_volatile(_path_target(word, roots, cwd))
    return mask_volatile(" ".join(word.split()))


def _path_target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    path = repository_path(word, roots=roots)
    if cwd and not word.startswith(("/", "~", "$")) and not path.startswith("<"):
        path = repository_path(posixpath.join(cwd, path))
    return path
