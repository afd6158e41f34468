"""The owner-local state folder: where it is, its private files, the spool, the config file, the salt."""
