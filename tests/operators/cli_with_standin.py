"""`obelisk-session-evidence` with the stand-in provider installed: for subprocess smoke tests.

python -m tests.operators.cli_with_standin run --prefect --situation FILE
"""

from obelisk_session_evidence.cli import main
from tests.batch import standin

if __name__ == "__main__":
    standin.install()
    main()
