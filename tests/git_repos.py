"""Real git repositories for tests: commits at given times, branches, nothing from the user's config."""

import os
import subprocess
from datetime import datetime
from pathlib import Path

GIT_ENVIRONMENT = {
    "PATH": os.environ.get("PATH") or os.defpath,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


class GitRepo:
    """A work tree under `root`, on branch `main`."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str, at: datetime | None = None) -> str:
        """Run git in the work tree; its stdout, stripped."""
        dates = {"GIT_AUTHOR_DATE": at.isoformat(), "GIT_COMMITTER_DATE": at.isoformat()} if at else {}
        done = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env={**GIT_ENVIRONMENT, **dates},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.strip()

    def commit(self, files: dict[str, str], *, at: datetime, message: str = "change") -> str:
        """Write `files` (repository path: text), commit them all at `at`; the new commit's id."""
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "--message", message, at=at)
        return self.git("rev-parse", "HEAD")

    def switch(self, branch: str, *, create: bool = False, start: str | None = None) -> None:
        """Check out `branch` (created at `start`, or here, when `create`)."""
        self.git("switch", "--quiet", *(["--create", branch] if create else [branch]), *([start] if start else []))
