"""Replay genuine public sessions listed in `bench/replay_histories.json`, per repository, beside the
naive rule: the instrument the verdict is judged by on histories beyond the shared corpus.

The sessions are not in this repository (fetch each at the commit listed): point `--sessions` at
a folder holding them as `<owner>__<repo>/<path>`. Each repository becomes one enablement of its
own recorded checkout folders; Claude sessions are laid out under `~/.claude/projects`, Codex
rollouts under `~/.codex/sessions`, Pi sessions under `~/.pi/agent/sessions`. Prints one line per
repository and the JSON totals.

    python -m bench.replay_real --sessions /path/to/sessions --work /tmp/replay-real [--split held_out]

`--split` names one of the manifest's splits (`develop`, `held_out`, `second_harvest`, `third_harvest`,
`fourth_harvest`, `fifth_harvest`, `fifth_harvest_read`, `sixth_harvest`, `sixth_harvest_read`).
"""

import argparse
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement, EnablementConfig
from obelisk_session_evidence.contracts.sources import source_named
from obelisk_session_evidence.replay import replay_history, replay_one_scope, scopes_to_replay
from obelisk_session_evidence.state.paths import StatePaths

MANIFEST = Path(__file__).with_name("replay_histories.json")


def lay_out(sessions: Path, work: Path, repositories: list[str]) -> StatePaths:
    """Copy the listed sessions under `work/home` and enable one scope per repository."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    home, paths = work / "home", StatePaths(work / "state")
    shutil.rmtree(work, ignore_errors=True)
    paths.root.mkdir(parents=True)
    roots = {
        "claude": home / ".claude" / "projects",
        "codex": home / ".codex" / "sessions",
        "pi": home / ".pi" / "agent" / "sessions",
    }
    groups: dict[str, dict[str, set[str]]] = {}
    for entry in manifest["sessions"]:
        cwd = entry.get("cwd") or ""
        if entry["repository"] not in repositories or not cwd.startswith("/"):
            continue  # a Windows checkout (`D:\\…`) cannot be a repository root here
        owner_repo = entry["repository"].split("/", 1)[1].replace("/", "__")
        source = sessions / owner_repo / entry.get("file", entry["path"])
        if entry["source"] in ("claude", "pi"):
            folder = re.sub(r"[^A-Za-z0-9]", "-", cwd)
            target = roots[entry["source"]] / folder / f"{entry['session_id']}.jsonl"
        else:
            target = roots["codex"] / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{entry['session_id']}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        group = groups.setdefault(entry["repository"], {"roots": set(), "sources": set()})
        group["roots"].add(cwd)
        group["sources"].add(entry["source"])
    enablements = [
        Enablement(
            surface="replan-history",
            agent_id="agent-replay",
            project_id=f"p-{re.sub(r'[^a-z0-9]+', '-', name.lower())}",
            repository_id=f"r-{re.sub(r'[^a-z0-9]+', '-', name.lower())}",
            repo_roots=sorted(group["roots"]),
            historical_repo_roots=sorted(group["roots"]),
            sources=[source_named(source) for source in sorted(group["sources"])],
            source_roots={source_named(source): str(roots[source]) for source in group["sources"]},
            enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
        )
        for name, group in sorted(groups.items())
    ]
    paths.config_file.write_text(EnablementConfig(enablements=enablements).model_dump_json())
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    splits = json.loads(MANIFEST.read_text(encoding="utf-8"))["split"]
    parser.add_argument("--split", choices=sorted(splits), default="held_out")
    arguments = parser.parse_args()
    repositories = splits[arguments.split]
    paths = lay_out(arguments.sessions, arguments.work, repositories)
    runs = []
    for enablement in scopes_to_replay(paths, project_id=None, agent_id=None):
        run = replay_one_scope(paths, enablement)
        found = run.report.figures
        print(
            f"{enablement.repository_id}: {found.calls} calls, {found.dead_ends} dead ends; verdict alarms right"
            f" {found.verdict.alarms_right} caught {found.verdict.dead_ends_caught_rate}; naive alarms right"
            f" {found.naive.alarms_right}; {run.report.calls_per_second} calls/s"
        )
        runs.append(run)
    report = replay_history(runs)
    print(report.total.model_dump_json(indent=1) if report.total else "no calls")


if __name__ == "__main__":
    main()
