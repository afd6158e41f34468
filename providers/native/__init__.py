"""The native provider: parsers for the agents' own session files, and the index built on them."""
