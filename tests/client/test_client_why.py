"""An empty list says why, in one sentence, in the client's answer: the same
sentence from a model in this process and over REST, decided from the input and the model's
answer (mtn_keras/client/reasons.py); a list that holds suggestions says "" and is the plain
list it always was."""

import math

import pytest

import mtn_keras
from mtn_keras.client.suggester import Suggester

SETTINGS = {"ranking": {"threshold": 0.0009762592380866408, "history_threshold": 0.00619115959}}
NOTHING = "The session holds no query with words and nothing was typed."
UNSURE = "Nothing the model was confident enough of passed its filters."


def nothing_typed(typed, why):
    """`why` after the clause that says `typed` holds no word."""
    return f"“{typed}” holds no word, so it is read as nothing typed, and {why[0].lower()}{why[1:]}"


class Answering:
    """A backend that answers `texts` for every session ("" an empty slot, scored -inf)."""

    signatures = {"complete": {"suggestions", "scores"}, "complete_with_history": {"history"}}

    def __init__(self, texts, settings=None):
        self.texts, self.settings = texts, settings or {}

    def run(self, name, inputs):
        scores = [-math.inf if not text else -1.0 for text in self.texts]
        return {
            "suggestions": [self.texts] * len(inputs["session"]),
            "scores": [scores] * len(inputs["session"]),
        }


def model(*texts, settings=None, explicit_shown=False):
    return Suggester(Answering(list(texts) or ["", ""], settings), "there", explicit_shown)


@pytest.mark.parametrize(
    "session, prefix, why",
    [
        ([], "", NOTHING),
        (["!!", " ", "¿…?"], "  ", NOTHING),  # queries with no word once normalised
        (
            [],
            "!",
            "“!” holds no word, so it is read as nothing typed, and the session holds no query "
            "with words.",
        ),
        (["cheap flights"], " — ", nothing_typed("—", UNSURE)),
        (["cheap flights"], " Labradood ", "No known query starts like “Labradood”."),
        ([], "hotel d", "No known query starts like “hotel d”."),
        (["cheap flights"], "", UNSURE),
    ],
)
def test_each_reason_from_what_was_asked(session, prefix, why):
    assert model().complete(session, prefix).why == why


@pytest.mark.parametrize(
    "texts, explicit_shown, why",
    [
        (["nude pics", ""], False, "The model's one suggestion was withheld as sexually explicit."),
        (
            ["nude pics", "xxx videos"],
            False,
            "The model's 2 suggestions were all withheld as sexually explicit.",
        ),
        (["teen porn", ""], True, "The model's one suggestion was withheld as unsafe."),
        (
            ["nude pics", "teen porn"],
            False,
            "The model's 2 suggestions were all withheld as sexually explicit or unsafe.",
        ),
    ],
)
def test_suggestions_withheld_by_the_safety_rule_are_counted_not_named(texts, explicit_shown, why):
    got = model(*texts, explicit_shown=explicit_shown)
    assert got.suggest(["weather"]).why == why
    assert got.complete(["weather"], "nude").why == why  # typed words: the model did answer
    assert got.complete(["weather"], "?").why == nothing_typed("?", why)
    assert "nude" not in why and "porn" not in why


def test_the_threshold_is_named_when_export_json_gives_it():
    ranked = model(settings=SETTINGS)
    assert ranked.suggest(["weather"]).why == (
        "Nothing the model was confident enough of passed its filters (its threshold: 0.000976)."
    )
    assert ranked.suggest(["weather"], ["", "!"]).why.endswith("(its threshold: 0.000976).")
    assert ranked.suggest(["weather"], ["weather boston"]).why == (
        "Nothing the model was confident enough of passed its filters (its threshold: "
        "0.000976; 0.00619 for your history's queries)."
    )
    for settings in ({"ranking": None}, {"ranking": {"threshold": "high"}}, {}):
        assert model(settings=settings).suggest(["weather"]).why == UNSURE


def test_a_list_with_suggestions_says_nothing_and_is_the_plain_list():
    got = model("rome hotels", "", settings=SETTINGS).suggest(["cheap flights"])
    assert got.why == ""
    assert isinstance(got, mtn_keras.Answer) and isinstance(got, list)
    assert got == [mtn_keras.Suggestion("rome hotels", -1.0)] and len(got) == 1
    assert got[0].text == "rome hotels" and [s.text for s in got] == ["rome hotels"]
    empty = model().suggest([])
    assert empty == [] and not empty and len(empty) == 0 and empty.why == NOTHING


def test_each_session_of_a_batch_says_its_own_why():
    got = model().complete([["cheap flights"], [], ["weather"]], ["hotel", "", "!"])
    assert [answer.why for answer in got] == [
        "No known query starts like “hotel”.",
        NOTHING,
        nothing_typed("!", UNSURE),
    ]
    assert model("rome").suggest([["a"], []])[1].why == ""


WHY_CASES = [  # (session, prefix): the tiny export answers none for each
    ([], ""),
    (["", "!!"], "!"),
    (["cheap flights"], "zzqx"),
]


@pytest.mark.slow
def test_the_tiny_model_says_why_alike_in_this_process_and_over_rest(exported, serve):
    url, server = serve(exported, "tiny")
    try:
        here, there = mtn_keras.load(str(exported)), mtn_keras.load(url)
        sessions, prefixes = [case[0] for case in WHY_CASES], [case[1] for case in WHY_CASES]
        found = here.complete(sessions, prefixes)
        assert [answer.why for answer in found] == [
            NOTHING,
            "“!” holds no word, so it is read as nothing typed, and the session holds no query "
            "with words.",
            "No known query starts like “zzqx”.",
        ]
        assert found == [[], [], []]
        assert [a.why for a in there.complete(sessions, prefixes)] == [a.why for a in found]
        for session, prefix in WHY_CASES:
            assert there.complete(session, prefix).why == here.complete(session, prefix).why
        answered = here.suggest(["cheap flights"])
        assert answered and answered.why == "" and there.suggest(["cheap flights"]).why == ""
    finally:
        server.terminate()
        server.wait(30)
