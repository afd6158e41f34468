"""Default and hard bounds on what a lookup may return and what reaches a prompt."""

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from obelisk_session_evidence.contracts.evidence import RequestLimits

DEFAULT_LIMITS: Final = {
    "max_sessions": 20,
    "max_items": 12,
    "max_snippet_chars": 600,
    "max_total_chars": 6000,
    "max_tokens": 2000,
}
HARD_CAPS: Final = {
    "max_sessions": 200,
    "max_items": 50,
    "max_snippet_chars": 2000,
    "max_total_chars": 20000,
    "max_tokens": 8000,
}
"""A situation may lower the defaults or raise them up to these caps, never past them."""


class LimitTally:
    """A request's item, session and character limits, applied to ranked items one at a time.

    The one place these limits are enforced: each provider while it selects items (it asks how
    many characters the next item of a session may have, then cuts its snippet to that), and
    cap-by-tokens before anything reaches a prompt (where a token budget is added on top).
    """

    def __init__(self, limits: "RequestLimits") -> None:
        self.limits = limits
        self.items = 0
        self.chars = 0
        self.sessions: set[object] = set()

    def room(self, session: object) -> int:
        """Characters the next item may have if it belongs to `session`: 0 when it must be left
        out (items full, a new session past `max_sessions`, no characters left)."""
        if not self._countable(session):
            return 0
        return max(0, min(self.limits.max_snippet_chars, self.limits.max_total_chars - self.chars))

    def fits(self, session: object, chars: int) -> bool:
        """True when one more item of `session` with `chars` characters stays within every limit."""
        limits = self.limits
        return (
            self._countable(session)
            and chars <= limits.max_snippet_chars
            and self.chars + chars <= limits.max_total_chars
        )

    def _countable(self, session: object) -> bool:
        """Room for one more item, of a session already drawn from or of a new one."""
        limits = self.limits
        return self.items < limits.max_items and (session in self.sessions or len(self.sessions) < limits.max_sessions)

    def take(self, session: object, chars: int) -> None:
        """Count a kept item of `session` with `chars` characters."""
        self.items += 1
        self.chars += chars
        self.sessions.add(session)
