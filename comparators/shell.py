"""A shell script read as a flat sequence of simple commands, with the operators between them.

The grammar is tree-sitter-bash (chosen on the real corpus: no parse failures on 1,020 real
commands, heredocs included, at ~11 µs a command; bashlex failed on every heredoc; see
docs/shell-grammar.md). The tree is flattened in source order and the operators are kept, so
bash's own precedence (`|` binds before `&&`/`||`, which bind before `;`) is applied by the
reader of the segments, not taken from the tree. Words are unquoted; a `$(cat <<EOF … EOF)`
argument is its heredoc body; a heredoc or here-string feeding a command is its `stdin`.

A script the grammar cannot read (an ERROR or MISSING node) is read by shell-word splitting
instead and marked `fallback`; neither reader ever raises. Work is bounded: longer scripts are
cut at `MAX_SCRIPT_CHARS`, and past `MAX_SEGMENTS` or `MAX_WORDS` the rest is dropped and the
result marked `truncated`.
"""

import re
import shlex
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Final

MAX_SCRIPT_CHARS: Final = 64 * 1024
MAX_SEGMENTS: Final = 256
MAX_WORDS: Final = 512
"""Words kept per simple command (a long `git add` list is still compared by its head)."""
MAX_WORD_PARTS: Final = 256
"""Quoted pieces and expansions read one by one in a word; a longer word is read as written."""
OPERATORS: Final = frozenset({"&&", "||", ";", "&", "|", "|&", ";;"})
_REDIRECTS: Final = frozenset({">", ">>", "<", ">&", "&>", "&>>", ">|", "<>", "<<<", "<&"})
_ENV_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_STATEMENT_SKIPS: Final = frozenset({"comment", "heredoc_body", "heredoc_end", "heredoc_start"})
_GLOB: Final = re.compile(r"(?<!\\)[*?[]")
_WORD_LEVEL: Final = frozenset({"command_substitution", "process_substitution", "string", "raw_string"})


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command of a script."""

    words: tuple[str, ...]
    """The command's words, unquoted, without leading environment assignments."""
    assignments: tuple[str, ...]
    """`NAME=value` words before the command (they change what it runs with)."""
    joined_by: str
    """The operator before it: `""` for the first, else `&&`, `||`, `;`, `|`, `|&` or `&`."""
    stdin: str | None = None
    """The body of a heredoc or here-string it reads, when it has one."""
    in_subshell: bool = False
    """True inside `( … )`: a `cd` there does not outlast the group."""
    here_document: bool = False
    """It reads a here-document or here-string, its own or one a `$(cat <<EOF …)` word expands:
    the shell writes it to a temp file first."""
    globbed: tuple[str, ...] = ()
    """Its words (unquoted, as in `words`) that hold a glob character outside quotes: the shell
    expands them before the command runs (zsh refuses to run it when one matches nothing). Empty
    when shell-word splitting read the script (it keeps no quoting)."""


@dataclass(frozen=True, slots=True)
class ParsedScript:
    """A script's simple commands in order, and how it was read."""

    segments: tuple[Segment, ...]
    fallback: bool
    """True when the grammar could not read it and shell-word splitting did."""
    truncated: bool
    """True when the script or its segments went past the work bounds."""


def parse_script(script: str) -> ParsedScript:
    """The simple commands of `script`; never raises (cached: a decision reads each command
    more than once)."""
    return _parse_cached(script)


@lru_cache(maxsize=512)
def _parse_cached(script: str) -> ParsedScript:
    return _parse(script)


def _parse(script: str) -> ParsedScript:
    truncated = len(script) > MAX_SCRIPT_CHARS
    text = script[:MAX_SCRIPT_CHARS]
    parser = _parser()
    if parser is not None:
        try:
            root = parser.parse(text.encode("utf-8", "surrogatepass")).root_node
        except Exception:
            root = None
        if root is not None and not root.has_error:
            reader = _TreeReader()
            try:
                reader.statement(root, "")
            except RecursionError:
                pass  # nested past Python's stack: read by words instead
            else:
                return ParsedScript(tuple(reader.segments), fallback=False, truncated=truncated or reader.truncated)
    segments, cut = _token_segments(text)
    return ParsedScript(segments, fallback=True, truncated=truncated or cut)


@lru_cache(maxsize=1)
def _parser() -> Any:
    try:
        import tree_sitter_bash
        from tree_sitter import Language, Parser
    except ImportError:
        return None
    return Parser(Language(tree_sitter_bash.language()))


class _TreeReader:
    """Flattens a tree-sitter-bash tree into `Segment`s in source order."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.truncated = False

    def statement(self, node: Any, joined_by: str, *, in_subshell: bool = False) -> str:
        """Read one statement node; returns the operator that the next statement follows."""
        kind = node.type
        if kind == "command":
            self._command(node, joined_by, in_subshell)
            return ";"
        if kind == "redirected_statement":
            return self._redirected(node, joined_by, in_subshell)
        pending = joined_by
        for child in node.children:
            if child.type in OPERATORS:
                pending = child.type
            elif child.type in _STATEMENT_SKIPS or not child.is_named:
                continue
            elif child.type in _WORD_LEVEL or child.type in ("word", "variable_name", "concatenation"):
                continue  # loop words, case subjects: not commands
            elif child.type == "variable_assignment":
                self._append(Segment(words=(), assignments=(_text(child),), joined_by=pending))
                pending = ";"
            else:
                pending = self.statement(child, pending, in_subshell=in_subshell or kind == "subshell")
                if child.type not in ("list", "pipeline"):
                    pending = ";"
        return pending

    def _redirected(self, node: Any, joined_by: str, in_subshell: bool) -> str:
        body, stdin = None, None
        for child in node.children:
            if child.type == "heredoc_redirect":
                stdin = _heredoc_body(child)
            elif child.type == "herestring_redirect":
                stdin = " ".join(_word(part) for part in child.named_children)
            elif body is None and child.is_named and child.type not in ("file_redirect",):
                body = child
        before = len(self.segments)
        pending = self.statement(body, joined_by, in_subshell=in_subshell) if body is not None else ";"
        if stdin is not None and len(self.segments) > before:
            last = self.segments[-1]
            self.segments[-1] = replace(last, stdin=stdin, here_document=True)
        return pending

    def _command(self, node: Any, joined_by: str, in_subshell: bool) -> None:
        assignments: list[str] = []
        words: list[str] = []
        globbed: list[str] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(_text(child))
            elif child.type == "command_name":
                words.append(_word(child.named_children[0]) if child.named_children else _text(child))
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                continue
            elif child.is_named:
                if len(words) >= MAX_WORDS:
                    self.truncated = True
                    break
                words.append(_word(child))
                if _globbed(child):
                    globbed.append(words[-1])
        here_document = b"<<" in node.text  # a `$(cat <<'EOF' …)` word: its body is a here-document
        self._append(
            Segment(tuple(words), tuple(assignments), joined_by, None, in_subshell, here_document, tuple(globbed))
        )

    def _append(self, segment: Segment) -> None:
        if len(self.segments) >= MAX_SEGMENTS:
            self.truncated = True
            return
        self.segments.append(segment)


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _word(node: Any) -> str:
    """A word's value as the shell would pass it (expansions kept as written)."""
    kind = node.type
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "string":
        return _double_quoted(node)
    if kind == "word":
        return re.sub(r"\\(.)", r"\1", _text(node))
    if kind == "concatenation":
        if node.named_child_count > MAX_WORD_PARTS:
            return _text(node)  # a bound on the work; the raw text still compares equal to itself
        return "".join(_word(child) for child in node.named_children)
    if kind == "command_substitution":
        return _substituted_heredoc(node) or _text(node)
    if kind == "ansi_c_string":
        return _text(node)[2:-1]
    return _text(node)


def _globbed(node: Any) -> bool:
    """The word holds `*`, `?` or `[` outside quotes and unescaped."""
    if node.type == "word":
        return _GLOB.search(_text(node)) is not None
    return node.type == "concatenation" and any(_globbed(child) for child in node.named_children)


def _double_quoted(node: Any) -> str:
    """A `"…"` word: its text between the quotes (newlines kept), substitutions expanded."""
    raw, base = node.text, node.start_byte
    if node.named_child_count > MAX_WORD_PARTS:
        return _unescape_double(raw[1:-1])
    parts: list[str] = []
    position = 1
    for child in node.named_children:
        if child.type == "string_content":
            continue
        parts.append(_unescape_double(raw[position : child.start_byte - base]))
        parts.append(_word(child))
        position = child.end_byte - base
    parts.append(_unescape_double(raw[position : max(position, len(raw) - 1)]))
    return "".join(parts)


def _unescape_double(raw: bytes) -> str:
    return re.sub(r"\\([\\\"$`])", r"\1", raw.decode("utf-8", "replace"))


def _substituted_heredoc(node: Any) -> str | None:
    """The body of `$(cat <<'EOF' … EOF)`: what the substitution expands to."""
    statements = [child for child in node.named_children if child.type != "comment"]
    if len(statements) != 1 or statements[0].type != "redirected_statement":
        return None
    inner = statements[0]
    command = inner.named_children[0] if inner.named_children else None
    if command is None or command.type != "command" or _text(command).strip() != "cat":
        return None
    for child in inner.named_children:
        if child.type == "heredoc_redirect":
            return _heredoc_body(child)
    return None


def _heredoc_body(node: Any) -> str | None:
    for child in node.named_children:
        if child.type == "heredoc_body":
            return _text(child)
    return None


def _token_segments(script: str) -> tuple[tuple[Segment, ...], bool]:
    """Shell-word splitting, for scripts the grammar cannot read; redirections dropped."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = re.findall(r"&&|\|\||[;&|<>]+|[^\s;&|<>]+", script)
    segments: list[Segment] = []
    words: list[str] = []
    joined_by, skip_next, truncated = "", False, False

    def close() -> None:
        nonlocal truncated
        if not words:
            return
        if len(segments) >= MAX_SEGMENTS:
            truncated = True
            return
        index = 0
        while index < len(words) and _ENV_ASSIGNMENT.match(words[index]):
            index += 1
        kept = words[index : index + MAX_WORDS]
        truncated = truncated or len(words) - index > MAX_WORDS
        segments.append(Segment(tuple(kept), tuple(words[:index]), joined_by))

    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in OPERATORS:
            close()
            words, joined_by = [], token
            continue
        if token in _REDIRECTS or (token and token[0] in "<>&" and set(token) <= set("<>&|")):
            if words and words[-1].isdigit():
                words.pop()  # the file descriptor of `2>&1`
            skip_next = True
            continue
        words.append(token)
    close()
    return tuple(segments), truncated
