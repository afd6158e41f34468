"""Reprocess stalled work items in bulk (no Prefect here: `flows/reprocess_stalled.py` maps it)."""
