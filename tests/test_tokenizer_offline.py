"""Token counting never downloads: proved in a fresh process whose sockets all refuse."""

import subprocess
import sys

_GUARDED_LOAD = r"""
import socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args[:1])
    raise OSError("network unreachable (test guard)")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from pathlib import Path
cache = Path(sys.argv[1])
if sys.argv[2] == "seeded":
    from obelisk_session_evidence.tokenizer import load_encoder
    encoder = load_encoder(cache)
else:
    import os, tiktoken
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        tiktoken.get_encoding("o200k_base")
    except Exception:
        pass
    print(f"attempts={len(attempts)}")
    sys.exit(0)
print(f"tokens={len(encoder.encode_ordinary('hello offline world'))} attempts={len(attempts)}")
"""


def _run(tmp_path, mode: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", _GUARDED_LOAD, str(tmp_path / "cache"), mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout.strip()


def test_load_encoder_with_empty_cache_and_no_network_never_connects(tmp_path):
    assert _run(tmp_path, "seeded") == "tokens=3 attempts=0"


def test_guard_negative_control_catches_plain_tiktoken_download(tmp_path):
    attempts = int(_run(tmp_path, "plain").split("=")[1])
    assert attempts >= 1
