"""The shell reader: simple commands in source order, operators, heredocs, bounds, fallback."""

from obelisk_session_evidence.comparators.commands import parse_command
from obelisk_session_evidence.comparators.shell import MAX_SEGMENTS, parse_script


def test_operators_subshells_redirections_and_assignments() -> None:
    script = "cd web && FOO=1 npm test 2>&1 | tail -3; (source .venv/bin/activate && pytest -q) || true"
    segments = parse_script(script).segments
    assert [(s.words[:2], s.joined_by, s.in_subshell) for s in segments] == [
        (("cd", "web"), "", False),
        (("npm", "test"), "&&", False),
        (("tail", "-3"), "|", False),
        (("source", ".venv/bin/activate"), ";", True),
        (("pytest", "-q"), "&&", True),
        (("true",), "||", False),
    ]
    assert segments[1].assignments == ("FOO=1",)


def test_heredoc_feeds_the_command_it_follows() -> None:
    (segment,) = parse_script("python3 <<'PY'\nimport json\nprint(json.dumps({}))\nPY").segments
    assert segment.words == ("python3",) and segment.stdin == "import json\nprint(json.dumps({}))\n"
    (shape,) = parse_command("python3 <<'PY'\nimport json\nprint(json.dumps({}))\nPY").shapes
    assert shape.program == "python -c" and "import:json" in shape.targets


def test_words_with_a_glob_character_outside_quotes() -> None:
    script = "magick public/a.gif[0] 'public/b.gif[0]' info: && ls $HOME/x* \"y?\" c\\*d && gh api repos/x?y=1"
    assert [segment.globbed for segment in parse_script(script).segments] == [
        ("public/a.gif[0]",),
        ("$HOME/x*",),
        ("repos/x?y=1",),
    ]
    assert parse_script("ls 'a*' *.txt | grep x").segments[0].globbed == ("*.txt",)


def test_multi_line_script_and_loops() -> None:
    script = "set -e\nfor f in a b; do\n  ruff check $f\ndone\nmake test"
    programs = [shape.program for shape in parse_command(script).shapes]
    assert programs == ["ruff check", "make"]


def test_subshell_cd_does_not_outlast_the_group() -> None:
    shapes = parse_command("(cd /tmp && ls) && ls src").shapes
    assert [shape.cwd for shape in shapes] == ["<tmp>", ""]


def test_pathological_commands_are_bounded_and_never_raise() -> None:
    nested = parse_script("(" * 5000 + "echo hi" + ")" * 5000)
    assert nested.segments  # read, by one reader or the other
    chain = parse_script("true && " * 400 + "make test")
    assert len(chain.segments) == MAX_SEGMENTS and chain.truncated
    assert parse_command("true && " * 400 + "make test").truncated
    long_word = parse_command("echo " + 'a"b"' * 15000)
    assert len(long_word.shapes) == 1 and not long_word.fallback
    # Inline bodies that make naive patterns backtrack (long identifiers, dotted chains).
    for body in ("import " + "a" * 60000, "a." * 30000 + "(", "a(" * 30000):
        (shape,) = parse_command(f"python3 -c '{body}'").shapes
        assert shape.program == "python -c"
