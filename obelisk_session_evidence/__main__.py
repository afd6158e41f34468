"""`python -m obelisk_session_evidence` runs the command line."""

from obelisk_session_evidence.cli import main

main()
