import stat
import threading

from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.salt import digest_salt
from obelisk_session_evidence.tokenizer import CACHE_KEYS, seed_tiktoken_cache


def _concurrently(target, count=8):
    threads = [threading.Thread(target=target) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_digest_salt_concurrent_first_use_agrees_on_one_private_salt(tmp_path):
    paths, salts = StatePaths(tmp_path), []
    _concurrently(lambda: salts.append(digest_salt(paths)))
    assert len(salts) == 8 and len(set(salts)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digest-salt"]
    assert stat.S_IMODE(paths.salt_file.stat().st_mode) == 0o600


def test_seed_tiktoken_cache_concurrent_first_use_leaves_only_the_files(tmp_path):
    _concurrently(lambda: seed_tiktoken_cache(tmp_path / "cache"), count=4)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted(CACHE_KEYS.values())
