"""The bundled model read as a searcher: a made-up person's history never pushes an earlier
query that relates to nothing in the session to the top of its list, nor more of them than
the export's setting allows."""

import pytest

from mtn_keras.ranking.rules import relates
from mtn_keras.serving.savedmodel import bundled_model, export_settings
from studies.searcher_lists import SESSIONS, UNRELATED, lists, made_up_history


@pytest.mark.slow
def test_no_unrelated_earlier_query_takes_the_first_place(bundled_client):
    pytest.importorskip("tensorflow")
    model = bundled_client
    history = made_up_history()
    found = lists(model, SESSIONS, history)
    for session, items in zip(SESSIONS[:UNRELATED], found[:UNRELATED]):
        first, source = items[0]
        assert not ("history" in source and not relates(first, session, history)), session
        # at most as many unrelated earlier queries as the export's --unrelated-history allows
        loose = [t for t, s in items if "history" in s and not relates(t, session, history)]
        assert len(loose) <= export_settings(bundled_model())["unrelated_history"]
    # where the session continues the person's past, their own queries come back
    continued = [items for items in found[UNRELATED:] if any("history" in s for _, s in items)]
    assert len(continued) >= 4
