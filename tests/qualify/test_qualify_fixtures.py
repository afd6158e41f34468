"""The Stage 0 fixtures: enough cases, every kind the issue names, stable labels, honest splits."""

from collections import Counter

import pytest

from obelisk_session_evidence.comparators.exact_ids import exact_id_delta
from obelisk_session_evidence.qualify.synthetic import FAMILIES, qualification_cases

CASES = qualification_cases(seed=0)

ISSUE_KINDS = [
    "exact_repeat",
    "paraphrase_flags",
    "paraphrase_temp_path",
    "paraphrase_interpreter",
    "paraphrase_wrapper",
    "different_target",
    "meaning_flag",
    "rerun_after_edit",
    "failure_later_fixed",
    "blocker_repeat",
    "hypothesis_tried",
    "new_route",
    "stale_index",
    "incomplete_index",
    "foreign_agent_failure",
    "foreign_repository_failure",
]


def test_qualification_cases_at_least_300_generated_plus_hand_written() -> None:
    assert sum(not case.hand_written for case in CASES) >= 300
    assert sum(case.hand_written for case in CASES) >= 15


def test_qualification_cases_ids_unique() -> None:
    assert len({case.case_id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("family", ISSUE_KINDS)
def test_qualification_cases_cover_issue_kind_in_both_splits(family: str) -> None:
    splits = Counter(case.split for case in CASES if case.family == family)
    assert splits["train"] > 0 and splits["test"] > 0


def test_qualification_cases_hand_written_all_held_back() -> None:
    assert {case.split for case in CASES if case.hand_written} == {"test"}


def test_qualification_cases_deterministic_for_a_seed() -> None:
    again = qualification_cases(seed=0)
    assert [(c.case_id, c.history, c.situation, c.expected_outcomes) for c in again] == [
        (c.case_id, c.history, c.situation, c.expected_outcomes) for c in CASES
    ]


def test_qualification_cases_seed_changes_histories() -> None:
    other = qualification_cases(seed=1)
    assert [c.history for c in other] != [c.history for c in CASES]


def test_qualification_cases_expected_outcomes_only_narrow_loopx() -> None:
    for case in CASES:
        claimed = exact_id_delta(case.situation.obligation, case.situation.proposed.observation).outcomes
        assert set(case.expected_outcomes) <= set(claimed), case.case_id


def test_qualification_cases_repeats_remove_what_they_claim() -> None:
    for case in CASES:
        if case.repeated_route and case.expected_verdict == "repeats_prior_failure" and case.family == "exact_repeat":
            assert not {"new_probe_family", "new_surface"} & set(case.expected_outcomes)


def test_qualification_cases_foreign_histories_hold_the_same_command() -> None:
    for case in CASES:
        if case.family in ("foreign_agent_failure", "foreign_repository_failure"):
            foreign = [e.text for e in case.history if e.owner != "self" and e.kind == "call"]
            assert case.situation.proposed.route.commands[0] in foreign


def test_qualification_cases_unfresh_cases_hide_some_history() -> None:
    for case in CASES:
        if case.freshness != "fresh" and case.expected_verdict == "novelty_unverified":
            assert any(not event.indexed for event in case.history)


def test_qualification_cases_per_family_samples_every_family() -> None:
    sample = qualification_cases(seed=0, per_family=2)
    assert {case.family for case in sample if not case.hand_written} == {name for name, _, _ in FAMILIES}
    assert Counter(case.family for case in sample if not case.hand_written).most_common(1)[0][1] == 2
