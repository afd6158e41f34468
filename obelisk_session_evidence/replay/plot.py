"""A PNG of a replay: per scope, alarms right and dead ends caught for the verdict and the naive
rule, with the targets drawn as lines (matplotlib, loaded only for `--plot`)."""

from pathlib import Path

from obelisk_session_evidence.contracts.replay import ReplayReport


def plot_replay(report: ReplayReport, path: Path) -> None:
    """Write the plot; a scope without judged alarms or dead ends shows no bar, never a zero."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(f"{s.project_id}\n{s.repository_id}", s.figures) for s in report.scopes]
    if report.total is not None and len(rows) > 1:
        rows.append(("all scopes", report.total))
    figure, axes = plt.subplots(1, 2, figsize=(max(6.0, 2.2 * len(rows) + 2), 4.5), sharey=True)
    measures = (
        ("alarms right", "alarms_right", report.targets["alarms_right"]),
        ("dead ends caught", "dead_ends_caught_rate", report.targets["dead_ends_caught"]),
    )
    width = 0.38
    for axis, (title, field, target) in zip(axes, measures, strict=True):
        for offset, (label, pick) in enumerate((("verdict", "verdict"), ("naive rule", "naive"))):
            values = [getattr(getattr(found, pick), field) for _, found in rows]
            positions = [i + (offset - 0.5) * width for i in range(len(rows))]
            shown = [(p, v) for p, v in zip(positions, values, strict=True) if v is not None]
            axis.bar([p for p, _ in shown], [v for _, v in shown], width=width, label=label)
        axis.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target:g}")
        axis.set_title(title)
        axis.set_xticks(range(len(rows)), [label for label, _ in rows], fontsize=7)
        axis.set_ylim(0, 1.05)
    axes[0].legend(fontsize=7, loc="upper left")
    figure.suptitle("replay: verdicts judged by what the next call did")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
