"""One simple command's words read into its program, flags and targets.

The program keeps its subcommand (`git push`, `npm run test`); flags lose what only changes how
output looks and split when bundled (`-xvs`); targets become repository paths with volatile
parts masked. A commit message is its subject line; an inline script is its signature.
"""

import posixpath
import re
from dataclasses import dataclass, field
from typing import Final

from obelisk_session_evidence.comparators import command_tables as tables
from obelisk_session_evidence.comparators.command_wrappers import basename, skip_flags
from obelisk_session_evidence.comparators.inline_scripts import commit_subject, javascript_signature, python_signature
from obelisk_session_evidence.comparators.paths import looks_like_path, mask_temp_paths, mask_volatile, repository_path

MAX_TARGET_CHARS: Final = 2048
_NUMBER: Final = re.compile(r"-\d+(\.\d+)?")
_COMMIT: Final = re.compile(r"^(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?:$|(?=[:^~.]))")
"""A commit on its own, or before its path or ancestry (`abc1234:path`, `abc1234^`, `abc1234..def5678`)."""
_DIRECTORY_OPTIONS: Final = {
    "git": ("-C",),
    "make": ("-C", "--directory"),
    "gmake": ("-C", "--directory"),
    "pnpm": ("-C", "--dir"),
    "npm": ("--prefix",),
    "yarn": ("--cwd",),
    "bun": ("--cwd",),
}
"""Programs whose option names the folder they run in: `git -C DIR status` runs in DIR, a place."""


def next_cwd(cwd: str | None, target: str, roots: tuple[str, ...]) -> str | None:
    """The cwd after `cd target`: repository-relative inside it, absolute outside it."""
    if target.startswith(("~", "$", "-")):
        return None
    if target.startswith("/"):
        for root in sorted({r.rstrip("/") for r in roots}, key=len, reverse=True):
            if target.rstrip("/") == root:
                return ""
            if target.startswith(root + "/"):
                return posixpath.normpath(target[len(root) + 1 :])
        return mask_temp_paths(posixpath.normpath(target))
    if cwd is None:
        return None
    joined = posixpath.normpath(posixpath.join(cwd or ".", target))
    if cwd.startswith(("/", "<")):
        return joined
    return "" if joined == "." else joined


def directory_option(
    words: list[str], roots: tuple[str, ...], cwd: str | None
) -> tuple[list[str], str | None, tuple[str, ...]]:
    """The words without a `-C DIR` folder option, the cwd it moves the command to, and the options
    it was written with (`-C`)."""
    options = _DIRECTORY_OPTIONS.get(basename(words[0])) if words else None
    if not options:
        return words, cwd, ()
    kept = [words[0]]
    used: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        if basename(words[0]) == "git" and not word.startswith("-") and words[index - 1] not in tables.GIT_VALUE_FLAGS:
            kept.extend(words[index:])  # the subcommand: `git switch -C BRANCH` creates a branch
            break
        name, _, attached = word.partition("=")
        if name in options and (attached or index + 1 < len(words)):
            cwd = next_cwd(cwd, attached or words[index + 1], roots)
            used.append(name)
            index += 1 if attached else 2
            continue
        kept.append(word)
        index += 1
    return kept, cwd, tuple(dict.fromkeys(used))


def program_of(words: list[str], roots: tuple[str, ...], cwd: str | None) -> tuple[str, list[str]]:
    """The program key (with subcommand) and the remaining words."""
    head, rest = words[0], words[1:]
    if "/" in head and not tables.BIN_DIRS.search(head):
        return path_target(head, roots, cwd), rest
    name = tables.PROGRAM_ALIASES.get(basename(head), basename(head))
    if tables.PYTHONS.match(name):
        name = "python"
    base = name.split(" ")[0]
    if base not in tables.SUBCOMMAND_PROGRAMS:
        return name, rest
    if base == "git":
        rest = skip_flags(rest, tables.GIT_VALUE_FLAGS)
    options: list[str] = []
    if base in tables.SCRIPT_RUNNERS:
        options, rest = _runner_options(base, rest)
    if not rest or rest[0].startswith("-"):
        return name, [*options, *rest]
    sub = tables.SUBCOMMAND_ALIASES.get((base, rest[0]), rest[0])
    rest = rest[1:]
    if base in tables.SCRIPT_RUNNERS:
        program, rest = _package_script(name, sub, rest)
        return program, [*options, *rest]
    return f"{name} {sub}", rest


def _package_script(name: str, sub: str, rest: list[str]) -> tuple[str, list[str]]:
    """`npm test`, `yarn build`, `pnpm run lint`: a package script is `npm run NAME` whichever
    manager runs it; a manager's own subcommand (`npm install`) stays the manager's."""
    if sub == "run":
        options, words = _runner_options(name, rest)
        if words and not words[0].startswith("-"):
            return f"npm run {words[0]}", [*options, *words[1:]]
        return f"{name} run", rest
    if sub in tables.NPM_LIFECYCLE or sub not in tables.PACKAGE_MANAGER_BUILTINS:
        return f"npm run {sub}", rest
    return f"{name} {sub}", rest


def _runner_options(manager: str, words: list[str]) -> tuple[list[str], list[str]]:
    """A package manager's own leading options (`bun run --filter PKG build`, `pnpm -F PKG test`)
    and the words after them: they choose which package runs the script, so they stay its flags."""
    value_flags = tables.RUNNER_VALUE_FLAGS.get(manager, frozenset())
    index = 0
    while index < len(words) and words[index].startswith("-") and words[index] != "--":
        index += 2 if words[index] in value_flags and index + 1 < len(words) else 1
    return words[:index], words[index:]


def inline_script(program: str, rest: list[str], stdin: str | None) -> tuple[str, tuple[str, ...]] | None:
    """`python -c BODY`, `python - <<EOF`, `node -e BODY`: the program and the body's signature."""
    if program.endswith(" -c") or program.endswith(" -e"):
        body = rest[0] if rest else ""
    elif stdin is not None and (not rest or rest[0] == "-"):
        body = stdin
    else:
        return None
    language = program.split(" ")[0]
    signature = python_signature(body) if language == "python" else javascript_signature(body)
    return f"{language} {'-c' if language == 'python' else '-e'}", signature


def commit_words(rest: list[str], stdin: str | None) -> list[str]:
    """`git commit` words with the message as its subject line (`-m`, `--message`, `-F -`)."""
    words: list[str] = []
    index = 0
    subject_seen = False
    while index < len(rest):
        word = rest[index]
        value, index = _commit_message(word, rest, index + 1, stdin)
        if value is None:
            words.append(word)
        elif not subject_seen:
            words.extend(("-m", commit_subject(value)))
            subject_seen = True  # later `-m` paragraphs are the body
    return words


def _commit_message(word: str, rest: list[str], index: int, stdin: str | None) -> tuple[str | None, int]:
    """The message `word` gives (None for another word), and the index after what it used."""
    if word in ("-m", "--message") and index < len(rest):
        if rest[index].lstrip('"') == "$(cat":
            # Split by word reading (a snippet cut inside the message): the rest is the message.
            return " ".join(["$(cat", *rest[index + 1 :]]), len(rest)
        return rest[index], index + 1
    if word.startswith("--message="):
        return word.partition("=")[2], index
    if word.startswith("-m") and len(word) > 2 and not word.startswith("--"):
        return word[2:], index
    if word in ("-F", "--file") and index < len(rest) and rest[index] == "-" and stdin is not None:
        return stdin, index + 1
    return None, index


def flags_and_targets(
    program: str, rest: list[str], roots: tuple[str, ...], cwd: str | None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The meaningful flags (sorted set), the targets (normalised, sorted) and the cosmetic flags
    (sorted set) of `rest`."""
    reader = _OptionReader(
        words=rest,
        cosmetic={
            **tables.COSMETIC_FLAGS["*"],
            **tables.COSMETIC_FLAGS.get(" ".join(program.split(" ")[:2]), {}),
            **tables.COSMETIC_FLAGS.get(program, {}),
        },
        value_letters=tables.VALUE_LETTERS.get(program, frozenset()),
        single_dash_long=program in tables.SINGLE_DASH_LONG or program.split(" ")[0] in tables.SINGLE_DASH_LONG,
    )
    reader.read()
    targets = sorted(
        _target(value, roots, cwd, positional=index not in reader.option_values)
        for index, value in enumerate(reader.values)
    )
    return tuple(sorted(reader.flags)), tuple(targets), tuple(sorted(reader.cosmetic_flags))


@dataclass(slots=True)
class _OptionReader:
    """Reads words as getopt does: `--name[=value]`, bundles (`-xvs`, `-kexpr`, `-n4`), `--`."""

    words: list[str]
    cosmetic: dict[str, bool]
    """Flags that only change how output looks, and whether each takes a value."""
    value_letters: frozenset[str]
    single_dash_long: bool
    """True for programs whose long options take one dash (`find -name`, `java -jar`)."""
    index: int = 0
    flags: set[str] = field(default_factory=set)
    values: list[str] = field(default_factory=list)
    """Positional arguments and flag values, as written."""
    option_values: set[int] = field(default_factory=set)
    """Which of `values` are flag values (`-n 20`): a quantity, never what the command acts on."""
    cosmetic_flags: set[str] = field(default_factory=set)
    """The cosmetic flags it passed (left out of `flags`)."""

    def read(self) -> None:
        while self.index < len(self.words):
            word = self.words[self.index]
            self.index += 1
            if word == "--":
                self.values.extend(self.words[self.index :])
                return
            if not word.startswith("-") or word == "-" or _NUMBER.fullmatch(word):
                self.values.append(word)
            elif word.startswith("--") or self.single_dash_long:
                self._long(word)
            else:
                self._bundle(word[1:])

    def _option_value(self, value: str) -> None:
        self.option_values.add(len(self.values))
        self.values.append(value)

    def _long(self, word: str) -> None:
        name, has_value, value = word.partition("=")
        if name in self.cosmetic:
            self.cosmetic_flags.add(name)
            if self.cosmetic[name] and not has_value:
                self.index += 1
            return
        self.flags.add(name)
        if has_value:
            self._option_value(value)

    def _bundle(self, letters: str) -> None:
        for position, letter in enumerate(letters):
            flag = f"-{letter}"
            if not letter.isalpha():
                # `-n4` style: the rest (from a digit on) is the previous letter's value.
                if flag not in self.cosmetic and f"-{letters[position - 1]}" not in self.cosmetic:
                    self._option_value(letters[position:])
                return
            if letter in self.value_letters or self.cosmetic.get(flag):
                self._valued(flag, letters[position + 1 :])
                return
            if flag in self.cosmetic:
                self.cosmetic_flags.add(flag)
            else:
                self.flags.add(flag)

    def _valued(self, flag: str, attached: str) -> None:
        """A flag that takes a value: attached (`-kexpr`) or the next word (`-k expr`)."""
        if flag in self.cosmetic:
            self.cosmetic_flags.add(flag)
            if not attached:
                self.index += 1
            return
        self.flags.add(flag)
        if attached:
            self._option_value(attached)
        elif self.index < len(self.words):
            self._option_value(self.words[self.index])
            self.index += 1


def _target(word: str, roots: tuple[str, ...], cwd: str | None, *, positional: bool = False) -> str:
    """An argument: repository-relative when it is a path; volatile parts masked.

    A positional commit is what the command acts on (`git show 529270f:deploy.yml`), not a volatile
    part: another commit is another target. Numbers stay masked: of the replayed histories, a
    failed `gh pr checks 20` foretold a failing `gh pr checks 22` as often as a repeat of 20.
    Only its first `MAX_TARGET_CHARS` are compared (a bound on the masking work).
    """
    word = word[:MAX_TARGET_CHARS]
    if positional and _COMMIT.match(word):
        return word
    if looks_like_path(word) and not word.startswith(("http:", "https:")):
        return mask_volatile(path_target(word, roots, cwd))
    return mask_volatile(" ".join(word.split()))


def path_target(word: str, roots: tuple[str, ...], cwd: str | None) -> str:
    """A path argument relative to the repository, resolved against `cwd` when relative."""
    path = repository_path(word, roots=roots)
    if cwd and not word.startswith(("/", "~", "$")) and not path.startswith("<"):
        path = repository_path(posixpath.join(cwd, path))
    return path
