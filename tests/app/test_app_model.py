"""The app's model on the fake SavedModel: plain Python outputs, errors as SuggestError."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from mtn_keras.client.answer import used_queries
from mtn_tui.model import (
    DEFAULT_MODEL,
    Attention,
    LocalModel,
    SuggestError,
    ignored_reasons,
    read_as,
    resolve_model_path,
)

SESSION = ["cheap flights to lisbon", "lisbon weather"]


@pytest.fixture(scope="module")
def app_model(fake_model):
    return LocalModel(fake_model)


def test_suggest_gives_scored_suggestions_with_copy_attention(app_model):
    result = app_model.suggestions(SESSION)
    assert [item.text for item in result] == [
        "lisbon weather near me",
        "lisbon weather online",
        "lisbon weather reviews",
    ]
    assert [item.score for item in result] == [-1.0, -2.0, -3.0]
    assert result.source_tokens == [
        ["cheap", "flights", "to", "lisbon"],
        ["lisbon", "weather", "", ""],
    ]
    copy = result[0].copy_attention
    assert copy.shape == (2, 4)
    np.testing.assert_allclose(copy, [[1 / 6] * 4, [1 / 6, 1 / 6, 0, 0]], rtol=1e-6)


def test_complete_keeps_the_typed_words(app_model):
    assert app_model.suggestions(SESSION, "lisbon w")[0].text == "lisbon weather near me"
    assert [item.text for item in app_model.suggestions(SESSION, "hotels")] == [
        "hotels near me",
        "hotels online",
        "hotels reviews",
    ]


def test_attention_is_layers_by_heads_by_kept_queries(app_model):
    attention = app_model.attention(SESSION + ["...", "Lisbon Trams!"])
    assert attention.queries == ("cheap flights to lisbon", "lisbon weather", "lisbon trams")
    assert attention.weights.shape == (2, 2, 3, 3)
    np.testing.assert_allclose(attention.weights[0, 0, 1], [0.5, 0.5, 0.0])


def test_sources_are_read_when_the_model_gives_them(app_model, fake_model_with_sources):
    assert [item.source for item in app_model.suggestions(SESSION)] == [""] * 3
    ranked = LocalModel(fake_model_with_sources)
    assert [item.source for item in ranked.suggestions(SESSION)] == [
        "model",
        "log",
        "model+log",
    ]


def test_used_and_ignored_queries_in_the_session_numbering():
    session = ["one", "two", "???", "three", "four", "🙂", "five"]
    assert used_queries(session, 4) == [1, 3, 4, 6]
    assert ignored_reasons(session, used_queries(session, 4)) == {
        0: "outside the model's window of 4",
        2: "no words",
        5: "no words",
    }
    assert used_queries(session, 0) == []


def test_a_query_read_through_a_correction_is_named_in_the_session_numbering():
    session = ["", "weahter boston", "Cheap Flights!"]
    both = Attention(None, ("weather boston", "cheap flights"), (1, 2))
    assert read_as(both, session) == {1: "weather boston"}
    assert read_as(Attention(None, ("cheap flights",), (2,)), session) == {}
    assert read_as(Attention(None, (), ()), session) == {}


def test_name_path_and_load_time(fake_model):
    app_model = LocalModel(fake_model.parent)  # a directory containing savedmodel/
    assert app_model.path == fake_model
    assert app_model.name == "tiny"
    assert 0 < app_model.load_seconds < 60


def test_in_a_clone_the_default_model_is_the_bundled_one():
    root = Path(__file__).resolve().parents[2]
    assert resolve_model_path(None) == DEFAULT_MODEL
    assert DEFAULT_MODEL == root / "saved_models" / "default" / "savedmodel"


@pytest.mark.parametrize(
    "variant, expected",
    [
        ("missing", "does not exist"),
        ("empty-directory", "is not a SavedModel"),
        ("corrupt", "Cannot load the SavedModel"),
        ("zero-bytes", "saved_model.pb is empty"),
        ("only-suggest", "lacks the signature(s) complete, session_attention"),
    ],
)
def test_broken_models_raise_model_error_saying_what_and_where(
    fake_model, save_fake, tmp_path, variant, expected
):
    path = tmp_path / variant
    if variant == "empty-directory":
        path.mkdir()
    elif variant == "corrupt":
        shutil.copytree(fake_model, path)
        (path / "saved_model.pb").write_bytes(b"not a protocol buffer")
    elif variant == "zero-bytes":
        shutil.copytree(fake_model, path)
        (path / "saved_model.pb").write_bytes(b"")
    elif variant == "only-suggest":
        save_fake(path, names=["suggest"])
    with pytest.raises(SuggestError) as error:
        LocalModel(path)
    assert expected in str(error.value)
    assert str(path) in str(error.value)


def test_no_explicit_item_unless_asked_and_never_one_that_seeks_abuse_material(fake_model):
    """Whatever a model or server answers (the fake extends the last query), the
    app's model and the client drop what the safety rule forbids (mtn_keras.data.safety)."""
    import mtn_keras
    from mtn_keras.base.config import DecodeConfig

    app_model = LocalModel(fake_model)
    assert app_model.suggestions(["cheap flights"])
    assert app_model.suggestions(["nude pics"]) == []
    assert app_model.suggestions(["teen porn"]) == []
    app_model.explicit_shown = True  # mtn-tui --explicit
    assert app_model.suggestions(["nude pics"])
    assert app_model.suggestions(["teen porn"]) == []
    client = mtn_keras.load(str(fake_model))
    assert [client.suggest(s) == [] for s in (["nude pics"], ["teen porn"])] == [True, True]
    asked = mtn_keras.load(str(fake_model), DecodeConfig(explicit=True))
    assert asked.suggest(["nude pics"]) and asked.suggest(["teen porn"]) == []
