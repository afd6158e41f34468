from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obelisk_session_evidence.contracts.stage_values import Retrieved
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.cap_by_tokens import (
    ELLIPSIS,
    cap_by_tokens,
    item_text,
    item_token_count,
    utf8_length,
)
from obelisk_session_evidence.stages.classify_gap import classify_gap
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

snippets = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=900)
limit_values = st.fixed_dictionaries(
    {
        "max_items": st.integers(1, 15),
        "max_sessions": st.integers(1, 6),
        "max_snippet_chars": st.integers(1, 700),
        "max_total_chars": st.integers(1, 5000),
        "max_tokens": st.integers(1, 2500),
    }
)


def _capped(limits, items, encoder):
    situation = situation_model(limits=limits)
    admission = admit(situation, classify_gap(situation), policy=enabled_policy())
    retrieval = Retrieved(result=result_for(admission.request, items))
    return admission, cap_by_tokens(admission, retrieval, encoder=encoder)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limits=limit_values, texts=st.lists(st.tuples(snippets, st.integers(1, 8)), max_size=20))
def test_cap_by_tokens_never_exceeds_a_limit_and_truncation_is_exact(encoder, limits, texts):
    items = [item(text, session=session) for text, session in texts]
    admission, capped = _capped(limits, items, encoder)
    kept, request_limits = capped.result.items, admission.request.limits
    assert len(kept) <= request_limits.max_items
    assert len({i.session_ref for i in kept}) <= request_limits.max_sessions
    assert all(len(i.snippet) <= request_limits.max_snippet_chars for i in kept)
    assert sum(len(i.snippet) for i in kept) <= request_limits.max_total_chars
    exact_tokens = sum(item_token_count(i, encoder) for i in kept)
    if capped.token_count_exact:
        assert capped.token_count == exact_tokens
    else:  # the cap never counted: the items' bytes, an upper bound within the budget
        assert capped.token_count == sum(utf8_length(item_text(i)) for i in kept) >= exact_tokens
    assert exact_tokens <= capped.token_count <= admission.token_budget
    # the kept items are the ranked prefix; every dropped item is counted
    assert [i.message_ref for i in kept] == [i.message_ref for i in items[: len(kept)]]
    assert capped.result.omitted_count == len(items) - len(kept)
    _assert_cut_by_exact_tokens(capped, items, admission, encoder)
    shortened = any(len(i.snippet) > request_limits.max_snippet_chars for i in items[: len(kept)])
    assert capped.result.truncated == (len(kept) < len(items) or shortened)


def test_cap_by_tokens_marks_shortened_snippets(encoder):
    _, capped = _capped({"max_snippet_chars": 10}, [item("x" * 50)], encoder)
    assert capped.result.items[0].snippet == "x" * 9 + ELLIPSIS
    assert capped.result.truncated and capped.result.omitted_count == 0


def test_cap_by_tokens_counts_special_token_text_as_plain_text(encoder):
    _, capped = _capped({}, [item("<|endoftext|> in a transcript")], encoder)
    assert len(capped.result.items) == 1


def _assert_cut_by_exact_tokens(capped, items, admission, encoder):
    """When only the token budget stopped the prefix, the next item's exact tokens cross it."""
    kept, limits = capped.result.items, admission.request.limits
    if len(kept) == len(items) or len(kept) + 1 > limits.max_items:
        return
    following = _as_shortened(items[len(kept)], limits.max_snippet_chars)
    if len({i.session_ref for i in kept} | {following.session_ref}) > limits.max_sessions:
        return
    if sum(len(i.snippet) for i in kept) + len(following.snippet) > limits.max_total_chars:
        return
    with_next = sum(item_token_count(i, encoder) for i in [*kept, following])
    assert with_next > admission.token_budget


def _as_shortened(evidence, max_chars):
    """An item as the cap shortens it (so that its tokens are the ones the cap weighed)."""
    if len(evidence.snippet) <= max_chars:
        return evidence
    return evidence.model_copy(update={"snippet": evidence.snippet[: max_chars - 1] + ELLIPSIS})


class _RefusingEncoder:
    def encode_ordinary(self, text):
        raise AssertionError("the cap counted tokens although the bytes fit the budget")


def test_cap_within_the_byte_budget_never_calls_the_encoder():
    items = [item("pytest tests/test_auth.py -x failed: 3 errors", session=s) for s in (1, 2)]
    admission, capped = _capped({"max_tokens": 2000}, items, _RefusingEncoder())
    assert len(capped.result.items) == 2 and not capped.token_count_exact
    assert capped.token_count == sum(utf8_length(item_text(i)) for i in items)


def test_cap_counts_exactly_once_the_bytes_could_cross_the_budget(encoder):
    items = [item("é" * 300, session=1), item("word " * 100, session=2)]
    limits = {"max_tokens": 400, "max_total_chars": 5000, "max_snippet_chars": 700}
    admission, capped = _capped(limits, items, encoder)
    assert capped.token_count_exact
    assert capped.token_count == sum(item_token_count(i, encoder) for i in capped.result.items)
