"""The bundled default model: the app loads it and it answers on a fresh clone."""

import json

import numpy as np
import pytest

from mtn_keras.base.quiet import import_tensorflow
from mtn_tui.model import DEFAULT_MODEL

# Made-up sessions, right-aligned as the app and `suggest` send them, and a typed prefix each.
SESSIONS = [
    ["", "", "", "cheap flights", "cheap flights to rome"],
    ["", "", "", "", "weather boston"],
    ["hotel deals", "rome hotels", "rome museums", "vatican tickets", "colosseum tours"],
    ["", "", "", "!!", "pizza near me"],
    ["", "", "", "", "?"],
]
PREFIXES = ["hotel", "weather bos", "rome ", "", "pasta"]


@pytest.mark.slow
def test_the_default_model_is_bundled_and_answers(bundled_app_model):
    info = json.loads((DEFAULT_MODEL / "export.json").read_text())
    app_model = bundled_app_model
    session = ["weather forecast", "weather boston"]
    found = app_model.suggestions(session)
    # Ranked: only what passes the filters and the confidence threshold, at most k;
    # completions are not held to the threshold.
    assert info["ranking"]["threshold"] > 0 and 1 <= len(found) <= info["k"] == 5
    assert all(item.source in ("model", "log", "model+log", "popular") for item in found)
    # best first; the log's popular queries after the ranked suggestions
    kinds = [item.source == "popular" for item in found]
    assert kinds == sorted(kinds)
    for popular in (False, True):
        scores = [item.score for item, kind in zip(found, kinds) if kind == popular]
        assert scores == sorted(scores, reverse=True)
    assert all(item.text and "<unk>" not in item.text for item in found)
    # ("weather bos" finds only the last query itself since the beam writes what people type)
    typed = app_model.suggestions(session, "weather ch")
    assert typed and all(item.text.startswith("weather ch") for item in typed)
    attention = app_model.attention(session + ["???"])
    assert attention.queries == tuple(session)  # the query without words is dropped
    assert attention.weights.shape[-2:] == (2, 2)
    np.testing.assert_allclose(attention.weights.sum(-1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_the_default_model_reads_what_was_typed_by_one_rule(bundled_app_model):
    """Through the bundled SavedModel: a whole typed word completes itself ("hotel" gives
    "hotel ..." too, not only "hotels"), a finished word is whole for the log's candidates
    too, and a prefix without words answers as `suggest`."""
    app_model = bundled_app_model
    # (after "cheap flights" the bundle ranks five "hotels ..." above any "hotel ...")
    hotel = app_model.suggestions(["las vegas"], "hotel")
    assert any(item.text.split()[0] == "hotel" for item in hotel), hotel
    we = app_model.suggestions(["weather boston"], "we ")
    assert we and all(item.text.split()[0] == "we" for item in we), we
    session = ["cheap flights to paris", "paris hotels"]
    plain = [(item.text, item.score) for item in app_model.suggestions(session)]
    assert (
        plain and [(item.text, item.score) for item in app_model.suggestions(session, " ")] == plain
    )


@pytest.mark.slow
def test_the_apps_calls_without_history_answer_as_suggest_and_complete_do(
    bundled_app_model, bundled_savedmodel
):
    """The app asks one signature everything (`complete_with_history`, one graph to prepare at
    start): its calls without a history, an empty history tensor of its own making, give the
    lists, scores and sources that the plain `suggest` and `complete` give on the same
    session, called as docs/contracts.md says."""
    tf = import_tensorflow()
    app_model = bundled_app_model
    assert app_model.has_history and app_model.path == DEFAULT_MODEL
    model = bundled_savedmodel  # the same export, called directly

    def plain(name, session, **inputs):
        out = model.signatures[name](session=tf.constant([session]), **inputs)
        texts, scores, sources = (
            out[key].numpy()[0] for key in ("suggestions", "scores", "sources")
        )
        return [
            (text.decode(), float(score), source.decode())
            for text, score, source in zip(texts, scores, sources)
            if text
        ]

    def app(found):
        return [(item.text, item.score, item.source) for item in found]

    answered = 0
    for session, prefix in zip(SESSIONS, PREFIXES):
        suggested = plain("suggest", session)
        assert app(app_model.suggestions(session)) == suggested, session
        completed = plain("complete", session, prefix=tf.constant([prefix]))
        assert app(app_model.suggestions(session, prefix)) == completed, (session, prefix)
        answered += bool(suggested) + bool(completed)
    assert answered >= len(SESSIONS)  # lists compared, not only empty ones


@pytest.mark.slow
@pytest.mark.parametrize("history", [False, True], ids=["no-history", "history"])
async def test_the_app_completes_the_first_query_of_a_session(history, tmp_path):
    """Nothing added to the session yet, "wea" typed: the bundled model completes it, with the
    searcher's history (a store of made-up earlier queries) and without."""
    from textual.widgets import Input

    from mtn_tui.history.opening import open_store
    from mtn_tui.pilot import settle
    from mtn_tui.tui import MtnApp

    store_path = tmp_path / "store" / "history.db"
    if history:
        store, _ = open_store(store_path)
        store.add_many([("cheap flights to rome", 1_000_000_000), ("rome hotels", 1_000_000_060)])
        store.close()
    app = MtnApp(None, show_load_time=False, history_path=store_path, use_history=history)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot, timeout=300)
        assert not app.main_screen.session
        app.query_one("#query", Input).insert_text_at_cursor("wea")
        await settle(pilot, timeout=120)
        assert app.main_screen.suggestions is not None
        assert "weather" in [item.text for item in app.main_screen.suggestions], (
            app.main_screen.suggestions
        )


@pytest.mark.slow
def test_an_empty_session_completes_its_first_query(bundled_savedmodel):
    """A session of shape (1, 0), "wea" typed: the bundled model's `complete` says "weather"."""
    tf = import_tensorflow()
    out = bundled_savedmodel.signatures["complete"](
        session=tf.zeros([1, 0], tf.string), prefix=["wea"]
    )
    assert "weather" in out["suggestions"].numpy()[0].astype(str).tolist()
