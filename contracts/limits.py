"""Default and hard bounds on what a lookup may return and what reaches a prompt."""

from typing import Final

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
