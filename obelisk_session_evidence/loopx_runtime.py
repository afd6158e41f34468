"""LoopX's TypeScript runtime, for the commands that read LoopX's state (`situation from-loopx`).

LoopX derives an obligation in its TypeScript Effect runtime: a Node daemon it starts on first
use, finds on PATH only, and stops after 5 idle minutes. Around such a command: the project's
provisioned Node (`make node`: `.node/bin/node`, the version LoopX qualifies) goes first on PATH
when the checkout has it; a Node too old or absent is the typed `loopx_runtime_unavailable`
naming the version LoopX needs (never an internal fault); and a runtime this command started is
stopped before it returns, so no daemon outlives a command that does not say it leaves one.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from obelisk_session_evidence.contracts.errors import LoopxRuntimeUnavailable

PROVISIONED_NODE_DIR = Path(__file__).resolve().parents[1] / ".node" / "bin"
"""Where `make node` (make/node.mk) puts Node in a checkout of this project."""
STOP_TIMEOUT_S = 10.0


@contextmanager
def loopx_runtime() -> Iterator[None]:
    """Run the body with LoopX's runtime ready (or raise `LoopxRuntimeUnavailable`), and stop
    the runtime afterwards when it was not running before. Without LoopX it does nothing (the
    body says LoopX is not installed)."""
    try:
        from loopx.control_plane.effect_runtime import (
            EffectRuntimeStartupError,
            collect_effect_runtime_readiness,
            restart_effect_runtime,
        )
    except ImportError:
        yield
        return
    with _provisioned_node_first():
        readiness = collect_effect_runtime_readiness()
        if not readiness["ready"]:
            raise LoopxRuntimeUnavailable(_needs(readiness))
        started_here = _lifecycle_state(readiness) != "running"
        try:
            yield
        except EffectRuntimeStartupError as error:
            raise LoopxRuntimeUnavailable(
                f"LoopX's runtime did not start ({getattr(error, 'diagnostic_code', type(error).__name__)}); "
                + _needs(readiness)
            ) from None
        finally:
            if started_here:
                restart_effect_runtime(timeout=STOP_TIMEOUT_S, wait_for_exit=True)


def _needs(readiness: dict[str, Any]) -> str:
    found = readiness.get("detected_node_version") or "none"
    minimum = readiness.get("minimum_node_version")
    return (
        f"LoopX needs Node >= {minimum} on PATH (found: {found}); run `make node` in this project's"
        f" checkout (it provisions {PROVISIONED_NODE_DIR / 'node'}, used first when present) or put"
        f" a Node >= {minimum} first on PATH"
    )


def _lifecycle_state(readiness: dict[str, Any]) -> object:
    lifecycle = readiness.get("runtime_lifecycle")
    return lifecycle.get("state") if isinstance(lifecycle, dict) else None


@contextmanager
def _provisioned_node_first() -> Iterator[None]:
    """PATH with the provisioned Node's folder first while the body runs (LoopX reads PATH)."""
    if not (PROVISIONED_NODE_DIR / "node").is_file():
        yield
        return
    before = os.environ.get("PATH")
    os.environ["PATH"] = os.pathsep.join([str(PROVISIONED_NODE_DIR), *([before] if before else [])])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = before
