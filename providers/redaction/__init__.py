"""Secret redaction shared by every provider's answer (the retrieve stage applies it to all)."""
