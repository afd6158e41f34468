"""qualify's plots show what the report says: every bar inside its axes, every point off the
frame, and the only target lines drawn are the targets the report judges."""

from pathlib import Path

import pytest

from obelisk_session_evidence.qualify import qualify
from obelisk_session_evidence.qualify.report import TARGETS
from obelisk_session_evidence.qualify.synthetic import qualification_cases

pytest.importorskip("matplotlib")
SAMPLE = qualification_cases(seed=0, per_family=2)


@pytest.fixture
def figures(tmp_path: Path, encoder, monkeypatch):
    """The three figures as drawn, caught as they are saved."""
    from matplotlib.figure import Figure

    caught = {}
    save = Figure.savefig

    def catch(figure, path, *args, **kwargs):
        caught[Path(path).name] = figure
        return save(figure, path, *args, **kwargs)

    # matplotlib's boundary: the saved PNGs hold pixels only, so the figures are caught as they are saved.
    monkeypatch.setattr(Figure, "savefig", catch)
    qualify(tmp_path / "out", backend="standin", encoder=encoder, cases=SAMPLE)
    return caught


def _target_lines(axis) -> list[float]:
    """The heights of the horizontal dashed or dotted lines (the targets drawn)."""
    return [
        float(line.get_ydata()[0])
        for line in axis.get_lines()
        if line.get_linestyle() in ("--", ":") and len(set(map(float, line.get_ydata()))) == 1
    ]


def test_the_latency_plot_holds_every_bar_and_draws_no_unjudged_target(figures):
    (axis,) = figures["latency.png"].axes
    bottom, top = axis.get_ylim()
    heights = [bar.get_height() for bar in axis.patches]
    assert heights and max(heights) * 2 <= top  # the tallest bar and its label inside the axes
    assert all(height >= bottom for height in heights if height > 0)
    assert _target_lines(axis) == []  # the report judges no stage time
    assert "target <=" not in axis.get_title()


def test_the_threshold_plots_keep_rates_of_0_and_1_off_the_frame_and_draw_the_judged_targets(figures):
    for axis in figures["precision_recall_threshold.png"].axes:
        bottom, top = axis.get_ylim()
        assert bottom < 0 and top > 1
        assert set(_target_lines(axis)) == {
            float(TARGETS[name]) for name in ("precision", "recall", "false_repeat_rate")
        }


def test_the_context_plot_draws_arm_2s_token_target_and_says_it_is_arm_2s(figures):
    (axis,) = figures["context_size.png"].axes
    lines = [line for line in axis.get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in lines] == [float(TARGETS["tokens_p95"])]
    assert lines[0].get_label().startswith("arm 2's target")
