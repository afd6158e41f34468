"""How closely a proposed route repeats the retrieved history, per dimension, outcome-aware.

Commands: each proposed simple command against each simple command a prior tool call ran
(`command_similarity`, in the same place: `same_place`). A failure belongs to the simple
command it is attributed to; commands after a failed `&&` never ran and match nothing. A
proposed command that repeats the failing command, or names the same culprit (the ignored
path, the unknown flag), repeats the failure when everything the route runs before it repeats
history too, whatever follows it. After a `command not found`, a command run in another
environment (`source …/activate &&`, `uv run`, a `bin/` path) is another route, as a run outside
the agent's sandbox is for a sandboxed one and the other way round (`RouteProposal.escalated`,
when the route states it); after a failure
about how the command was written (a missing file or an unknown option it passed, a here-document
the shell refused), so is a command that does not pass that argument or read a here-document.
A success whose output a filter cut (`| head -100`) is not the same observation as a run
with another filter (`| tail -50`): only a failure repeats whatever the filter.
A prior failure later followed by a success of the same command was resolved, so it counts as
an attempt, not a dead end. A command that ran only to no outcome (a server the agent stopped, a
call cut off) is an attempt too: `novel` means nothing comparable ran. A prior call changed since
it ran (an edit or a file-changing command later in the history, one at the current revision when
it ran at another, or an edit the route itself makes; which changes count is `_changed_since`'s
rule) is weaker evidence; a command that sees the whole tree (test, build, lint, commit) re-run
after such a change is not a repeat at all.
A run at a commit off the situation's revision line, and the commits landed after a failure on it,
are `comparators.revision_line`'s rule.
Files: how many of the route's files history names. Hypothesis and blocker:
`text_similarity` against the prose of decisions, summaries and failures.
"""

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypedDict

from obelisk_session_evidence.comparators.attribution import GLOB_REFUSED
from obelisk_session_evidence.comparators.cause_changes import ROUTE_MOMENT, Change, cause_touched, observes_only
from obelisk_session_evidence.comparators.changes import TREE_CHANGERS, changed_paths, reformats
from obelisk_session_evidence.comparators.command_similarity import command_similarity, same_place
from obelisk_session_evidence.comparators.commands import CommandShape, cd_roots, parse_command
from obelisk_session_evidence.comparators.history import PriorStep
from obelisk_session_evidence.comparators.paths import looks_like_path, mask_temp_paths, repository_path, same_file
from obelisk_session_evidence.comparators.revision_line import (
    RevisionLine,
    changes_on_line,
    landed_since,
    off_line,
    on_line_first,
    revision_line,
)
from obelisk_session_evidence.comparators.successors import grounded_successors
from obelisk_session_evidence.comparators.text import text_similarity, text_tokens
from obelisk_session_evidence.contracts.prior_calls import FailureCauseKind
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds

EDIT_ACTION_KINDS: Final = frozenset(
    {
        "edit",
        "patch",
        "write",
        "fix",
        "refactor",
        "change",
        "apply_patch",
        "modify",
        "code_change",
        "implement",
        "rewrite",
    }
)
"""`action_kind`s whose route changes the files it names before running its commands."""
_HYPOTHESIS_SOURCES: Final = frozenset({"decision", "summary", "prior_failure"})
ARGUMENT_CAUSES: Final[frozenset[FailureCauseKind]] = frozenset(
    {"path_not_found", "usage_error", "is_a_directory", "git_ignored"}
)
"""Causes that can be about an argument of the failing command (a path, an option)."""
_PRIVILEGE_WRAPPERS: Final = frozenset({"sudo", "doas"})
MAX_ROUTE_UNITS: Final = 256
"""Simple commands of a route compared (a bound on the work: units × prior commands)."""


@dataclass(frozen=True, slots=True)
class RouteMatch:
    """Similarity (0–100) of the route to history per dimension, and what matched."""

    command_similarity: int | None
    """Lowest, over the route's commands, of each one's best match; None without commands."""
    repeats_failure: bool
    """Every command repeats history and at least one repeats an unresolved failure."""
    repeats_failure_changed_since: bool
    """Every command repeats history and a failure it repeats has a later change that touched its
    cause (none stands): it may have been fixed, or not."""
    repeats_attempt: bool
    """Every command repeats history, none a failure (it was already done)."""
    command_items: frozenset[int]
    """Ranks of prior steps a command matched at or above the threshold."""
    superseded: int
    """Matches set aside or weakened because the files involved changed since."""
    resolved: int
    """Matched failures that a later success of the same command resolved."""
    file_similarity: int | None
    """Share of the route's files that history names; None without files."""
    hypothesis_similarity: int | None
    """Best match of the proposed hypothesis; None without one (or too short)."""
    hypothesis_items: frozenset[int]
    """Ranks of prior steps at or above the hypothesis threshold."""
    blocker_similarity: int | None
    """Best match of the claimed blocker; None without one (or too short)."""
    blocker_items: frozenset[int]
    """Ranks of prior steps at or above the blocker threshold."""
    token_fallbacks: int = 0
    """Commands (proposed and prior) the shell grammar could not read: compared by tokens."""
    truncated: int = 0
    """Commands (proposed and prior) compared in part: cut, or past the work bounds."""
    repeats_failure_off_line: bool = False
    """`repeats_failure_changed_since` only because each failure it rests on ran at a commit off
    the situation's revision line (`comparators.revision_line`)."""
    successor_items: frozenset[int] = frozenset()
    """Ranks of the grounded successors of the failures a failure verdict rests on: what worked
    after each (`comparators.successors`)."""


class _CommandFields(TypedDict):
    """`RouteMatch`'s command fields, as `_command_match` finds them."""

    command_similarity: int | None
    repeats_failure: bool
    repeats_failure_changed_since: bool
    repeats_failure_off_line: bool
    repeats_attempt: bool
    command_items: frozenset[int]
    superseded: int
    resolved: int


@dataclass(slots=True)
class _UnitScore:
    best: int = 0
    """Best similarity to any prior run (the novelty score reads it)."""
    failure: int = 0
    """Similarity of the latest comparable run when it failed and nothing since touched its cause."""
    changed: int = 0
    """Similarity of the latest comparable run when it failed and a later change touched its cause."""
    attempt: int = 0
    """Similarity of the latest comparable run when it ran to an end without failing."""
    off_line: bool = False
    """`changed` because that failure ran off the situation's revision line."""

    @property
    def repeats(self) -> bool:
        """The unit has a comparable prior run."""
        return bool(self.failure or self.changed or self.attempt)


def route_match(
    route: RouteProposal,
    steps: Sequence[PriorStep],
    *,
    thresholds: RouteThresholds,
    revision: Revision | None,
    roots: Sequence[str] = (),
    revision_checks: Sequence[RevisionCheck] = (),
) -> RouteMatch:
    """Score `route` against `steps` on every dimension the route states (`revision_checks`: where
    git placed the revisions the steps ran at)."""
    route_roots = (*roots, *(root for command in route.commands for root in cd_roots(command)))
    start = _start_of(route.cwd, route_roots)
    parsed = [parse_command(command, roots=route_roots, cwd=start) for command in route.commands]
    units = [shape for command in parsed for shape in command.shapes][:MAX_ROUTE_UNITS]
    route_files = [repository_path(path, roots=route_roots) for path in route.files]
    route_edits = route_files if (route.action_kind or "") in EDIT_ACTION_KINDS else []
    command = _command_match(
        units,
        steps,
        route_edits,
        thresholds=thresholds,
        revision=revision,
        roots=route_roots,
        line=revision_line(revision_checks),
        escalated=route.escalated,
        place_known=route.cwd is not None,
    )
    hypothesis, hypothesis_items = _text_match(
        route.hypothesis,
        [s for s in steps if s.evidence_type in _HYPOTHESIS_SOURCES and not s.is_tool_call],
        threshold=thresholds.hypothesis_repeat,
        min_words=thresholds.min_text_words,
    )
    blocker, blocker_items = _text_match(
        route.blocker, steps, threshold=thresholds.blocker_repeat, min_words=thresholds.min_text_words
    )
    calls = [step for step in steps if step.is_tool_call]
    return RouteMatch(
        **command,
        token_fallbacks=sum(c.fallback for c in parsed) + sum(step.fallback for step in calls),
        truncated=sum(c.truncated for c in parsed)
        + sum(step.truncated for step in calls)
        + (sum(len(c.shapes) for c in parsed) > MAX_ROUTE_UNITS),
        file_similarity=_file_similarity(route_files, steps),
        hypothesis_similarity=hypothesis,
        hypothesis_items=hypothesis_items,
        blocker_similarity=blocker,
        blocker_items=blocker_items,
        successor_items=grounded_successors(
            units,
            steps,
            command["command_items"],
            failed=command["repeats_failure"] or command["repeats_failure_changed_since"],
        ),
    )


def _start_of(cwd: str | None, roots: Sequence[str]) -> str:
    """Where the route starts, as prior calls' places are written: repository-relative inside a
    root, the absolute (temp-masked) folder outside; the root when unknown."""
    if not cwd:
        return ""
    if cwd.startswith("/") and not any(_inside(cwd, root) for root in roots if root.startswith("/")):
        # Outside every root: the absolute folder, as a prior call's place outside the repository is
        # written (`history._start_cwd`), not `repository_path`'s guess at a file's checkout.
        return mask_temp_paths(posixpath.normpath(cwd))
    relative = repository_path(cwd, roots=roots)
    if relative == ".":
        return ""
    return mask_temp_paths(relative.rstrip("/")) if relative.startswith("/") else relative.strip("/")


def _inside(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root if root == "/" else root + "/")


def _command_match(
    units: list[CommandShape],
    steps: Sequence[PriorStep],
    route_edits: list[str],
    *,
    thresholds: RouteThresholds,
    revision: Revision | None,
    roots: Sequence[str],
    line: RevisionLine,
    escalated: bool | None,
    place_known: bool,
) -> _CommandFields:
    """Each unit against its latest comparable prior run: a failure stands until a change touches its
    cause. A run inside the sandbox and one outside it (`escalated`) are other routes."""
    threshold = thresholds.command_repeat
    scores = [_UnitScore() for _ in units]
    matched: set[int] = set()
    superseded: set[int] = set()
    resolved: set[int] = set()
    calls = [step for step in steps if step.is_tool_call and not _other_sandbox(step, escalated)]
    for position_of, (unit, score) in enumerate(zip(units, scores, strict=True)):
        runs, unsettled = _comparable_runs(
            unit, calls, score, threshold=threshold, roots=roots, place_known=place_known
        )
        runs = _same_arguments(unit, runs)
        if not runs:
            if unsettled:  # it ran before to no outcome (a server stopped, a call cut off): an attempt
                step, position, similarity = max(unsettled, key=lambda run: _moment(run[0]))
                if _same_view(unit, step.shapes[position]):
                    score.attempt = similarity
                    matched.add(step.index)
            continue
        runs = on_line_first(runs, line)
        step, position, similarity, ran = max(runs, key=lambda run: _moment(run[0]))
        if ran:
            resolved.update(other.index for other, _, _, well in runs if not well and other is not step)
            if _same_view(unit, step.shapes[position]):
                score.attempt = similarity
                matched.add(step.index)
            continue
        matched.add(step.index)
        if off_line(step, line):  # it failed on other code: never a current failure
            score.changed, score.off_line = similarity, True
            superseded.add(step.index)
            continue
        ran_before = {shape.text for shape in step.shapes[:position]}
        changes = [
            *_changes_after(step, changes_on_line(steps, line), route_edits, revision),
            *_route_changes(unit for unit in units[:position_of] if unit.text not in ran_before),
            *landed_since(step, line),
        ]
        if cause_touched(step.cause, step.shapes[position], step.output_paths, changes, roots=roots):
            score.changed = similarity
            superseded.add(step.index)
        else:
            score.failure = similarity
    return _command_fields(scores, matched, superseded=len(superseded), resolved=len(resolved))


_Run = tuple[PriorStep, int, int, bool]
"""A comparable prior run of a unit: the step, the shape's position, its similarity, whether it ran well."""
_Unsettled = tuple[PriorStep, int, int]
"""A comparable prior run of a unit that left no outcome: the step, the shape's position, its similarity."""


def _other_sandbox(step: PriorStep, escalated: bool | None) -> bool:
    """The step ran on the other side of the agent's sandbox than the route would (both known)."""
    return escalated is not None and step.escalated is not None and step.escalated != escalated


def _comparable_runs(
    unit: CommandShape,
    calls: Sequence[PriorStep],
    score: _UnitScore,
    *,
    threshold: int,
    roots: Sequence[str],
    place_known: bool,
) -> tuple[list[_Run], list[_Unsettled]]:
    """The prior runs of `unit` at or above the threshold that left an outcome, and those that ran
    to none (stopped, cut off, their failure another command's); `score.best` too. A command that
    never ran (after a failed `&&`, a cancelled call) is neither."""
    runs: list[_Run] = []
    unsettled: list[_Unsettled] = []
    for step in calls:
        similarity, position = _best_shape(unit, step, roots, place_known=place_known)
        if position is None:
            continue
        score.best = max(score.best, similarity)
        if similarity < threshold:
            continue
        ran = _ran_well(step, position, unit)
        if ran is not None:
            runs.append((step, position, similarity, ran))
        elif position not in step.skipped:
            unsettled.append((step, position, similarity))
    return runs, unsettled


def _same_view(unit: CommandShape, shape: CommandShape) -> bool:
    """`unit` would show what `shape` showed: another filter of its output is a new observation."""
    return not (shape.view and shape.view != unit.view)


def _command_fields(scores: list[_UnitScore], matched: set[int], *, superseded: int, resolved: int) -> _CommandFields:
    """The route's command verdict from its units' scores."""
    if not scores:
        return {
            "command_similarity": None,
            "repeats_failure": False,
            "repeats_failure_changed_since": False,
            "repeats_failure_off_line": False,
            "repeats_attempt": False,
            "command_items": frozenset(),
            "superseded": 0,
            "resolved": 0,
        }
    repeats = all(score.repeats for score in scores)
    standing = _standing_prefix(scores) if not repeats else any(score.failure for score in scores)
    changed = repeats and not standing and any(score.changed for score in scores)
    return {
        "command_similarity": min(score.best for score in scores),
        "repeats_failure": standing,
        "repeats_failure_changed_since": changed,
        "repeats_failure_off_line": changed and all(score.off_line for score in scores if score.changed),
        "repeats_attempt": repeats and not standing and not changed,
        "command_items": frozenset(matched) if repeats or standing else frozenset(),
        "superseded": superseded,
        "resolved": resolved,
    }


def _standing_prefix(scores: list[_UnitScore]) -> bool:
    """The route re-runs a standing dead end before anything new: what follows never changes it."""
    for score in scores:
        if score.failure:
            return True
        if not score.repeats:
            return False
    return False


def _ran_well(step: PriorStep, position: int, unit: CommandShape) -> bool | None:
    """Whether the shape at `position` ran without failing (True), failed (False), or never ran or
    left no outcome (None). When its output filter failed (`curl … | jq 'bad'`), the failure is the
    filter's: only a unit with the same filter repeats it."""
    if position in step.skipped:
        return None
    if step.result == "succeeded":
        return True
    if step.result == "failed" and step.failing is not None:
        if position == step.failing:
            return None if step.failed_in_view and unit.view != step.shapes[position].view else False
        return True if position < step.failing else None
    return None


def _moment(step: PriorStep) -> tuple[float, int]:
    """Order of runs: by time when known (undated ones first), then newer rank first."""
    return (step.observed_at.timestamp() if step.observed_at is not None else float("-inf"), -step.index)


def _changes_after(
    failure: PriorStep, steps: Sequence[PriorStep], route_edits: list[str], revision: Revision | None
) -> list[Change]:
    """What changed after `failure` in its checkout, as the cause rules read it; the route's own edits too."""
    changes = [Change(tuple(route_edits), False, False, (), at=ROUTE_MOMENT)] if route_edits else []
    for other in steps:
        if other.index == failure.index or not other.is_tool_call:
            continue
        if _same_checkout(other, failure) and _happened_after(other, failure, revision):
            changes.append(
                Change(
                    paths=other.changed if other.is_edit else (),
                    unnamed=other.is_edit and not other.changed,
                    installs=other.installs,
                    programs=tuple(shape.program for shape in other.shapes),
                    subjects=tuple(target for shape in other.shapes for target in shape.targets),
                    acts=other.result != "failed" and (other.is_edit or not all(map(observes_only, other.shapes))),
                    reformats=other.reformats,
                    at=other.observed_at.timestamp() if other.observed_at is not None else None,
                )
            )
    return changes


def _route_changes(earlier: Iterable[CommandShape]) -> list[Change]:
    """The route's own earlier commands that act (`git remote set-url … && git fetch`): what they
    do happens before the later command runs, so they are changes to its failure's cause (not
    those the failed call also ran first: `git add -A && git commit` again changes nothing new)."""
    changes = []
    for shape in earlier:
        if observes_only(shape):
            changes.append(Change((), False, False, (shape.program,), acts=False, at=ROUTE_MOMENT))  # time passes
            continue
        written = changed_paths(shape)
        changes.append(
            Change(
                paths=written or (),
                unnamed=written == (),
                installs=shape.program in TREE_CHANGERS,
                programs=(shape.program,),
                subjects=shape.targets,
                reformats=reformats(shape),
                at=ROUTE_MOMENT,
            )
        )
    return changes


def _best_shape(
    unit: CommandShape, step: PriorStep, roots: Sequence[str], *, place_known: bool
) -> tuple[int, int | None]:
    """The best match of `unit` among the shapes `step` ran: (similarity, its index); `place_known`:
    the route said where it runs (else it is taken to run at the top)."""
    best, best_index = 0, None
    for index, shape in enumerate(step.shapes):
        if index in step.skipped or not same_place(unit, shape) or set(unit.runner) != set(shape.runner):
            continue  # another place or environment (`VAR=1`, `uv run`, an activated venv) is another route
        if index == step.failing and _another_route(unit, shape, step):
            continue
        similarity = command_similarity(unit, shape)
        if (
            index == step.failing
            and similarity < 100
            and _names_culprits(unit, shape, step.culprits, roots, place_known=place_known)
        ):
            similarity = 100
        if similarity > best:
            best, best_index = similarity, index
    return best, best_index


def _names_culprits(
    unit: CommandShape, failing: CommandShape, culprits: tuple[str, ...], roots: Sequence[str], *, place_known: bool
) -> bool:
    """True when `unit` runs the failing program with every argument its failure named, and
    adds no flag (`git add -f` is the fix the hint names, not the failure)."""
    if not culprits or unit.program != failing.program or not set(unit.flags) <= set(failing.flags):
        return False
    named = [culprit for culprit in culprits if culprit in failing.flags or _in_targets(culprit, failing.targets)]
    return bool(named) and all(
        c in unit.flags or _names_path(unit, c, failing.cwd, roots, place_known=place_known) for c in named
    )


def _names_path(
    unit: CommandShape, culprit: str, failing_cwd: str | None, roots: Sequence[str], *, place_known: bool
) -> bool:
    """True when `unit` names the path the failure's output named. Run in a folder of the
    repository, the failing command's output names it from there: `unit` must name that path, not
    one sharing its ending (`packages/cli/x.json` from `packages/cli` is `packages/cli/packages/cli/x.json`,
    which a command run at the top and given `packages/cli/x.json` does not name); so from the top, when
    `unit`'s place is known too (`ship/.specify/x.md` is not `.specify/x.md`: the same path written from
    another folder is only a guess for a route that does not say where it runs). An absolute path
    inside a known root is exact too, for a `unit` whose place is known (`ls <root>/registry` does
    not name `<root>/apps/registry/registry`)."""
    relative = looks_like_path(culprit) and not culprit.startswith("/")
    resolved = None
    inside = failing_cwd is not None and not failing_cwd.startswith(("/", "<"))
    if relative and inside and (failing_cwd or culprit.startswith("../") or place_known):
        # From the top, a path climbing out (`../../docs/a.md`) names that place only, not `docs/a.md`.
        resolved = repository_path(posixpath.join(failing_cwd or "", culprit))
    elif (
        culprit.startswith("/")
        and unit.cwd is not None
        and any(_inside(culprit, r) for r in roots if r.startswith("/"))
    ):
        resolved = repository_path(culprit, roots=roots)
    if resolved is not None:
        resolved = resolved.rstrip("/")
        return any(target == resolved or target.startswith(resolved + "/") for target in unit.targets)
    return _in_targets(culprit, unit.targets)


def _another_route(unit: CommandShape, failing: CommandShape, step: PriorStep) -> bool:
    """True when the failure was about how the failing command was written and `unit` is written
    otherwise, whatever else it shares: the shell could not write a here-document and `unit`
    reads none (`git commit -m "$(cat <<'EOF' …)"` refused, `git commit -m "…"`); the failure names
    arguments the failing command passed (the missing file it was given, the option it did not
    know) and `unit` passes none of them (`cat b.json` after `cat a.json: No such file`); the shell
    could not execute a file and `unit` runs it through an interpreter."""
    if step.cause is None:
        return False
    if step.cause.kind == "here_document_refused":
        return failing.here_document and not unit.here_document
    if step.cause.kind == "permission_denied" and _executed(failing, step.cause.subjects):
        return not _executed(unit, step.cause.subjects)  # `python3 x.py` after `./x.py` was refused
    if step.cause.kind == "permission_denied" and _elevated(unit) != _elevated(failing):
        return True  # `sudo mkdir -p /srv/x` after `mkdir -p /srv/x` was denied
    if step.cause.kind == "command_not_found" and _looked_up(failing) in step.cause.subjects:
        return _looked_up(unit) != _looked_up(failing)  # `python3 -m x` after `python: command not found`
    if unmatched := _unmatched_globs(failing, step):
        return not any(word in unit.globbed for word in unmatched)  # `'a.gif[0]'` after `a.gif[0]`
    named = _named_arguments(step, failing)
    return bool(named) and not any(_passes(unit, word) for word in named)


def _named_arguments(step: PriorStep, failing: CommandShape) -> list[str]:
    """The arguments `failing` passed that its failure was about (`ARGUMENT_CAUSES`)."""
    if step.cause is None or step.cause.kind not in ARGUMENT_CAUSES:
        return []
    return [word for word in (*step.cause.subjects, *step.culprits) if _passes(failing, word)]


def _same_arguments(unit: CommandShape, runs: list[_Run]) -> list[_Run]:
    """`runs` without the successes that did not pass an argument a comparable failure was about
    and `unit` passes: those ran another route (`entire status` passing does not resolve `entire
    status --no-pager` refused for its flag, which a cosmetic flag leaves out of their identity)."""
    named = {
        word
        for step, position, _, ran in runs
        if not ran
        for word in _named_arguments(step, step.shapes[position])
        if _passes(unit, word)
    }
    return [run for run in runs if not run[3] or all(_passes(run[0].shapes[run[1]], word) for word in named)]


def _unmatched_globs(failing: CommandShape, step: PriorStep) -> list[str]:
    """The unquoted patterns of `failing` that the shell matched to nothing (`zsh: no matches found:
    P`): the command never ran, and the same words quoted are passed as they are."""
    if step.cause is None or step.cause.kind != "path_not_found" or not GLOB_REFUSED.search(step.text):
        return []
    named = {posixpath.basename(subject) for subject in step.cause.subjects}
    return [word for word in failing.globbed if posixpath.basename(word) in named]


def _elevated(shape: CommandShape) -> bool:
    """The shell ran `shape` through a privilege wrapper (`sudo`, `doas`): as another user."""
    return shape.head in _PRIVILEGE_WRAPPERS


def _looked_up(shape: CommandShape) -> str:
    """The program name the shell looked up for `shape` (`python3`, `pytest`; a path's last part)."""
    return posixpath.basename(shape.head)


def _executed(shape: CommandShape, files: Sequence[str]) -> bool:
    """`shape` ran one of `files` itself (the shell looked up its path, not an interpreter), as the
    shell refused to when the file had no execute permission."""
    return "/" in shape.head and any(posixpath.basename(file) == posixpath.basename(shape.head) for file in files)


def _passes(shape: CommandShape, argument: str) -> bool:
    """`shape` passes `argument`: as a flag (a value the failure cut at a space: its first word; an
    option naming its folder too: `git -C DIR`; a cosmetic one: `--no-pager`), or as a target, the
    same path written from another folder (`cli/a.json`, `packages/cli/a.json`)."""
    written = (*shape.flags, *shape.place_options, *shape.cosmetic_flags)
    if any(flag == argument or flag.startswith(argument + " ") for flag in written):
        return True
    path = repository_path(argument).rstrip("/")
    return any(target in (argument, path) or _written_from_elsewhere(target, path) for target in shape.targets)


def _written_from_elsewhere(one: str, other: str) -> bool:
    """One path ends with the other, at least a folder and a name (`cli/a.json`, `packages/cli/a.json`):
    a bare name (`package.json`) is any folder's."""
    shorter, longer = sorted((one, other), key=len)
    return "/" in shorter.strip("/") and longer.endswith("/" + shorter)


def _in_targets(culprit: str, targets: tuple[str, ...]) -> bool:
    path = repository_path(culprit).rstrip("/")
    return any(target == culprit or same_file(target, path) or target.startswith(path + "/") for target in targets)


def _same_checkout(change: PriorStep, step: PriorStep) -> bool:
    """False when both checkouts are known and differ (an edit in another worktree)."""
    return change.checkout is None or step.checkout is None or change.checkout == step.checkout


def _happened_after(later: PriorStep, earlier: PriorStep, revision: Revision | None) -> bool:
    if later.observed_at is not None and earlier.observed_at is not None:
        return later.observed_at > earlier.observed_at
    if revision is None or later.revision_ref is None or earlier.revision_ref is None:
        return False
    return later.revision_ref == revision.current and earlier.revision_ref != revision.current


def _file_similarity(route_files: list[str], steps: Sequence[PriorStep]) -> int | None:
    if not route_files:
        return None
    seen = [path for step in steps for path in step.files]
    known = sum(any(same_file(path, other) for other in seen) for path in route_files)
    return round(100 * known / len(route_files))


def _text_match(
    text: str | None, steps: Sequence[PriorStep], *, threshold: int, min_words: int
) -> tuple[int | None, frozenset[int]]:
    if not text:
        return None, frozenset()
    needle = text_tokens(text)
    if len(set(needle)) < min_words:
        return None, frozenset()
    best = 0
    matched: set[int] = set()
    for step in steps:
        if not step.text:
            continue
        similarity = text_similarity(needle, step.text)
        best = max(best, similarity)
        if similarity >= threshold:
            matched.add(step.index)
    return best, frozenset(matched)
