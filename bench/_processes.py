"""The reference processes a cold `run` is paired with: the bare interpreter, and the floor of the stack."""

from typing import Final

BARE_INTERPRETER: Final = ("-I", "-c", "import sqlite3, json")
"""What the cold `run` is compared with: this interpreter started bare, with the two modules it needs."""
STACK_FLOOR: Final = (
    "-I",
    "-c",
    "import json, click\n"
    "from pydantic import BaseModel, ConfigDict\n"
    "class Probe(BaseModel):\n"
    "    model_config = ConfigDict(extra='forbid', strict=True, frozen=True)\n"
    "    situation_id: str\n"
    "print(Probe.model_validate_json(json.dumps({'situation_id': 's'})).model_dump_json())\n",
)
"""The least any `run` pays before its own code: the interpreter, click and pydantic imported, one
closed model built, one document validated and printed. Its ratio to the bare interpreter bounds
what a cold-run target can ask of this stack on this machine."""
