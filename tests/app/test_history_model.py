"""The app's model, one that reads the searcher's history: its last H queries reach the
history signatures, and what the model read comes back; a model without them ignores it."""

import numpy as np
import pytest

from mtn_keras.data.text import completes, normalise
from mtn_tui.model import LocalModel
from mtn_tui.widgets.query_input import typed_prefix

pytestmark = pytest.mark.slow  # loads a SavedModel

SESSION = ["cheap flights", "lisbon weather"]
HISTORY = ("lisbon zoo", "paris hotels", "rome", "berlin", "madrid", "oslo", "porto trams")


@pytest.fixture(scope="module")
def app_model(fake_model_with_history):
    return LocalModel(fake_model_with_history)


def test_a_history_model_says_so_with_its_size(app_model, fake_model):
    assert app_model.has_history and app_model.history_size == 5
    assert not LocalModel(fake_model).has_history


def test_suggest_reads_the_last_history_queries(app_model):
    shared = app_model.suggestions(SESSION, "", ("Lisbon Zoo!", *HISTORY[1:4]))
    first = shared[0]
    assert (first.text, first.source, first.from_history) == ("lisbon zoo", "history", True)
    assert shared.history == ["lisbon zoo", "paris hotels", "rome", "berlin"]
    np.testing.assert_allclose(shared.history_attention, [1, 0, 0, 0])
    # only the last 5 are read: "lisbon zoo" is the 7th from the end
    beyond = app_model.suggestions(SESSION, "", HISTORY)
    assert beyond.history == list(HISTORY[2:])
    assert not any(item.from_history for item in beyond)
    np.testing.assert_allclose(beyond.history_attention, 0)


def test_complete_reads_the_history_too(app_model):
    found = app_model.suggestions(SESSION, "port", HISTORY)
    assert found[0].text == "porto trams" and found[0].from_history


@pytest.mark.parametrize(
    "typed", ["hotel", "hotel ", "hot", "rome ", "rom", "romeo", "H&R", "h&r ", "zzz", " "]
)
def test_the_fake_completes_by_the_products_rule(app_model, typed):
    """What the fake model puts first from the history is the latest earlier query that
    `mtn_keras.data.text.completes` says completes what was typed (sent as the app sends it,
    typed_prefix): "hotel " takes "hotel deals", not the later "hotels"."""
    earlier = ("hotel deals", "hotels", "romeo", "rome", "h r block")  # the fake reads 5
    prefix = typed_prefix(typed)
    rule = normalise(prefix) + (" " if prefix.strip() and not normalise(prefix[-1]) else "")
    wanted = [query for query in earlier if completes(query, rule)][-1:]
    found = app_model.suggestions(["x"], prefix, earlier)
    picked = [item.text for item in found if item.from_history]
    assert picked == (wanted if rule else []), (typed, rule)


def test_without_history_the_plain_signatures_answer(app_model, fake_model):
    assert app_model.suggestions(SESSION).history == []
    plain = LocalModel(fake_model).suggestions(SESSION, "", HISTORY)
    assert plain.history == [] and plain.history_attention is None
    assert [item.text for item in plain][0] == "lisbon weather near me"
