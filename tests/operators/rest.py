"""Read what an operator would see, through Prefect's REST API (no client-side caching or models)."""

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx

BUSY_DEADLINE_S = 60.0
"""How long a request the server answered 503 is asked again (`_answered`)."""


class PrefectRest:
    """A tiny REST reader for one Prefect API; it also keeps every raw answer for canary scans."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url.rstrip("/")
        self.answers: list[str] = []

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._answered(lambda: httpx.post(f"{self.api_url}/{path.lstrip('/')}", json=body or {}, timeout=30))

    def get(self, path: str) -> Any:
        return self._answered(lambda: httpx.get(f"{self.api_url}/{path.lstrip('/')}", timeout=30))

    def _answered(self, send: Callable[[], httpx.Response]) -> Any:
        """The request's answer. A 503 is the server's SQLite database locked by another writer
        (docs: stack notes, upstream #18934): asked again, backing off, until `BUSY_DEADLINE_S`, as
        Prefect's own client does; any other error, or a 503 past the deadline, raises."""
        deadline, delay = time.monotonic() + BUSY_DEADLINE_S, 0.1
        answer = send()
        while answer.status_code == httpx.codes.SERVICE_UNAVAILABLE and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(2 * delay, 2.0)
            answer = send()
        answer.raise_for_status()
        self.answers.append(answer.text)
        return answer.json()

    def flow_runs(self, flow_name: str) -> list[dict[str, Any]]:
        """The flow's runs, newest first."""
        return self.post(
            "flow_runs/filter",
            {"flows": {"name": {"any_": [flow_name]}}, "sort": "EXPECTED_START_TIME_DESC", "limit": 200},
        )

    def latest_flow_run(self, flow_name: str) -> dict[str, Any]:
        runs = self.flow_runs(flow_name)
        assert runs, f"no {flow_name} run"
        return runs[0]

    def task_runs(self, flow_run_id: str) -> list[dict[str, Any]]:
        return self.post("task_runs/filter", {"flow_runs": {"id": {"any_": [flow_run_id]}}, "limit": 200})

    def artifacts(self, flow_run_id: str) -> list[dict[str, Any]]:
        return self.post("artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [flow_run_id]}}})

    def logs(self, flow_run_id: str) -> list[dict[str, Any]]:
        return self.post("logs/filter", {"logs": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": 200})

    def read_everything(self) -> None:
        """Fetch every collection an operator can browse, so `answers` covers the whole API."""
        for path in (
            "flows/filter",
            "deployments/filter",
            "work_pools/filter",
            "variables/filter",
            "block_documents/filter",
            "artifacts/latest/filter",
            "artifacts/filter",
        ):
            self.post(path, {})
        for path in ("logs/filter", "task_runs/filter"):
            self._every_page(path)
        for run in self._every_page("flow_runs/filter"):
            self.get(f"flow_run_states/?flow_run_id={run['id']}")
        for run in self._every_page("task_runs/filter"):
            self.get(f"task_run_states/?task_run_id={run['id']}")
        page = self.post("events/filter", {"limit": 50, "filter": {"occurred": {"since": "2000-01-01T00:00:00Z"}}})
        while page.get("next_page"):
            page = self._answered(partial(httpx.get, page["next_page"], timeout=30))

    def _every_page(self, path: str, limit: int = 200) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        while True:
            page = self.post(path, {"limit": limit, "offset": len(rows)})
            rows.extend(page)
            if len(page) < limit:
                return rows

    def holds(self, canary: str) -> bool:
        """True when any answer read so far contains the canary (never says where: no echo)."""
        return any(canary in text for text in self.answers)
