"""The decisions' encoder gives tiktoken's o200k_base ids, and a token is never shorter than a byte.

The cap decides cuts on the ranked encoder's counts and skips counting when the UTF-8 bytes fit
the budget; both rest on what is checked here, against tiktoken itself: equal ids on the real
corpus's texts and on adversarial strings, and `tokens <= bytes` (every rank is at least one byte
and the ids decode back to the text's bytes).
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obelisk_session_evidence.stages.cap_by_tokens import utf8_length
from obelisk_session_evidence.tokenizer import (
    RANK_CACHE,
    LazyEncoder,
    RankTable,
    load_encoder,
    load_ranked_encoder,
    load_ranks,
)
from tests.providers.native.conftest import real_files, requires_real_corpus

TEXT_CHARS_PER_FILE = 60_000
"""Real text per corpus file: enough for every source's shapes, quick enough for a unit test."""
ADVERSARIAL = [
    "",
    " ",
    "\r\n\r\n  \n\t\x0b\x0c\u00a0\u2028\u3000",
    "don't DON'T it'S we'LL they'Ve I'M she'D ſ'ſ 'S",
    "ǅungla ǈ Ǌ ᾈ" + "e\u0301\u0301" * 5 + "\u0301abc",
    "1234567890" * 7 + " 3.14159 ١٢٣٤٥ ⅫⅣ",
    "<|endoftext|><|endofprompt|><|fim_prefix|>",
    "日本語のテキスト、中文文本。한국어 텍스트",
    "👩‍👩‍👧‍👦🏳️‍🌈 \U0001f600\U0001f600 \ufeff\u200b\u200d",
    "a\ud800b \udfff \ud83d\ude00 lone and paired surrogates",
    "x" * 5000,
    "/usr/lib/python3.11/site-packages/x.py:12: in test_auth\n    assert 0 == 1\nE   AssertionError",
    "sk-ant-api03-" + "A1b2C3d4" * 12 + " ghp_" + "Z9" * 20,
    "\x00\x01\x7f\x80\x9f control bytes \x1b[31mred\x1b[0m",
    "Привет, мир! Ελληνικά Ümlaut ß ﬁ ﬂ",
    "(((((((())))))))''''''''\"\"\"\"\"``````" + "!?" * 300,
]


@pytest.fixture(scope="module")
def ranked(tmp_path_factory):
    return load_ranked_encoder(tmp_path_factory.mktemp("ranks"))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _corpus_texts():
    """Each real session file's decoded string values (what snippets are cut from), bounded."""
    for path in real_files("*/**/*.json*"):
        taken = 0
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for text in _strings(record):
                if taken >= TEXT_CHARS_PER_FILE:
                    break
                if len(text) >= 8:
                    yield path.name, text[:8000]
                    taken += min(len(text), 8000)


def _assert_byte_bound(reference, text):
    ids = reference.encode_ordinary(text)
    assert len(ids) <= utf8_length(text)
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        assert reference.decode_bytes(ids) == text.encode("utf-8")


@requires_real_corpus
def test_ranked_encoder_equals_tiktoken_on_real_corpus_text(ranked, encoder):
    texts = list(_corpus_texts())
    assert len({name for name, _ in texts}) > 20 and sum(len(t) for _, t in texts) > 1_000_000
    mismatched = [name for name, text in texts if ranked.encode_ordinary(text) != encoder.encode_ordinary(text)]
    assert mismatched == []


@requires_real_corpus
def test_tokens_never_outnumber_utf8_bytes_on_real_corpus_text(encoder):
    for _, text in _corpus_texts():
        _assert_byte_bound(encoder, text)


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_ranked_encoder_equals_tiktoken_and_stays_within_bytes_on_adversarial_text(ranked, encoder, text):
    assert ranked.encode_ordinary(text) == encoder.encode_ordinary(text)
    _assert_byte_bound(encoder, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(), max_size=300))
def test_ranked_encoder_equals_tiktoken_on_any_unicode(ranked, encoder, text):
    assert ranked.encode_ordinary(text) == encoder.encode_ordinary(text)
    _assert_byte_bound(encoder, text)


def test_every_o200k_token_is_at_least_one_byte(encoder):
    """The bound's premise: tokens <= bytes because no token is empty."""
    assert min(len(token) for token in encoder._mergeable_ranks) == 1


def test_rank_table_built_fresh_equals_tiktoken_ranks_and_is_reused(tmp_path, encoder):
    table = load_ranks(tmp_path)
    reference = encoder._mergeable_ranks
    assert len(table) == len(reference)
    assert dict(zip(table.tokens(), range(len(table)), strict=False)) == reference
    assert all(table.get(token) == rank for token, rank in reference.items())
    assert table.get(b"\xff\xfe not a token \x00") is None
    with pytest.raises(KeyError):
        table[b"\xff\xfe not a token \x00"]
    cache = tmp_path / RANK_CACHE
    written = cache.stat().st_mtime_ns
    assert len(load_ranks(tmp_path)) == len(table) and cache.stat().st_mtime_ns == written


def test_damaged_rank_table_is_rebuilt(tmp_path, encoder):
    good = RankTable.build(list(encoder._mergeable_ranks))
    flipped = bytearray(good)
    flipped[-5] ^= 0x01  # one bit of one token: the checksum catches it
    for damaged in (b"", b"\x00garbage", good[:1000], good[:-1], bytes(flipped), b"X" + good[1:]):
        (tmp_path / RANK_CACHE).write_bytes(damaged)
        table = load_ranks(tmp_path)
        assert dict(zip(table.tokens(), range(len(table)), strict=False)) == encoder._mergeable_ranks
        assert (tmp_path / RANK_CACHE).read_bytes() == good


def test_lazy_encoder_loads_nothing_until_asked(tmp_path):
    lazy = LazyEncoder(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()
    assert lazy.encode_ordinary("hello offline world") == load_encoder(tmp_path / "ref").encode_ordinary(
        "hello offline world"
    )
    assert (tmp_path / "cache" / RANK_CACHE).exists()


@requires_real_corpus
def test_cap_keeps_the_same_items_with_the_ranked_encoder_as_with_tiktoken(ranked, encoder):
    """Exact counts unchanged where they decide a cut: real snippets capped at several budgets."""
    from obelisk_session_evidence.contracts.stage_values import Retrieved
    from obelisk_session_evidence.stages.admit import admit
    from obelisk_session_evidence.stages.cap_by_tokens import cap_by_tokens
    from obelisk_session_evidence.stages.classify_gap import classify_gap
    from tests.stages.helpers import enabled_policy, item, result_for, situation_model

    texts = [text for _, text in _corpus_texts()]
    cuts = 0
    for budget in (50, 300, 2000, 8000):
        for start in range(0, 600, 12):
            situation = situation_model(limits={"max_tokens": budget, "max_items": 12})
            admission = admit(situation, classify_gap(situation), policy=enabled_policy())
            batch = [item(text, session=1 + n % 4) for n, text in enumerate(texts[start : start + 12])]
            retrieval = Retrieved(result=result_for(admission.request, batch))
            by_ranked = cap_by_tokens(admission, retrieval, encoder=ranked)
            by_tiktoken = cap_by_tokens(admission, retrieval, encoder=encoder)
            assert by_ranked == by_tiktoken
            cuts += by_ranked.token_count_exact and len(by_ranked.result.items) < len(batch)
    assert cuts > 20


def test_concurrent_first_loads_agree_and_leave_only_the_table(tmp_path):
    from tests.state.test_state import _concurrently

    cache, sizes = tmp_path / "cache", []
    _concurrently(lambda: sizes.append(len(load_ranks(cache))), count=3)
    assert len(sizes) == 3 and len(set(sizes)) == 1 and sizes[0] > 199_000
    assert [p.name for p in cache.iterdir()] == [RANK_CACHE]
