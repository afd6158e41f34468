"""Adapters that let LoopX call this project as it calls its own providers.

- `context_provider.SessionEvidenceContextProvider`: LoopX's in-process `ContextProvider`.
- `decision_context_extension`: the executable for Decision Context's extension protocol,
  registered through `extension.toml`.
- `host_session`: the invoking host session never counts as history.

Nothing here imports LoopX at module import time: LoopX is only present in LoopX's process.
"""
