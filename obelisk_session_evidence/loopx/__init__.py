"""Adapters that let LoopX call this project as it calls its own providers.

- `decision_context_extension`: the executable for Decision Context's extension protocol,
  registered through `extension.toml`; `doctor` answers LoopX's readiness probe.
- `context_provider.SessionEvidenceContextProvider`: LoopX's in-process `ContextProvider`.
- `recall`: what both answer (a leading verdict item, then capped items); `asking` says who
  LoopX asks for, `scoped_lookup` turns free text into a typed situation, `query_route` into
  the route it stands for. docs/loopx.md is the integration's guide.
- `loopx_state`: a `replan_situation_v0` from LoopX's own state (`situation from-loopx`).

Nothing here imports LoopX at module import time: LoopX is only present in LoopX's process.
"""
