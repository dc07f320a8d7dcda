"""A model on WordPiece pieces, served: words it never saw are spelt from pieces and copied
through them, typed words complete, and the SavedModel answers as the Python service does."""

import random
import textwrap

import numpy as np
from fresh_python import printed_json
from syllable_log import made_up_word

K = 5  # the k of the `pieces_service` and `pieces_exported` fixtures (conftest.py)

SESSIONS = [
    ["kalomi", "best kalomi", ""],
    ["vinesu online", "", "VINESU reviews!"],
    ["rato", "東京 rato", ""],
    ["", "", ""],
]


def suggestions(service, sessions, prefix=None):
    import tensorflow as tf

    session = tf.constant(sessions)
    out = (
        service.suggest(session)
        if prefix is None
        else service.complete(session, tf.constant(prefix))
    )
    return [[text.decode() for text in row] for row in out["suggestions"].numpy()]


def test_an_unseen_word_is_copied_through_its_pieces(pieces_service, pieces_model_dir):
    """Made-up words absent from training, spelt from several pieces, come back whole."""
    seen = set((pieces_model_dir / "data" / "train.tsv").read_text().split())
    rng = random.Random(7)
    words = []
    while len(words) < 20:
        word = made_up_word(rng)
        if word not in seen and len(pieces_service.encoder.tokenise([word]).flat_values) > 1:
            words.append(word)
    lists = suggestions(pieces_service, [[word, f"best {word}"] for word in words])
    copied = [any(word in text.split() for text in texts) for word, texts in zip(words, lists)]
    assert sum(copied) >= 12, list(zip(words, lists))
    assert all(text.count("#") == 0 for texts in lists for text in texts)


def test_typed_words_are_kept_and_an_unfinished_one_completed(pieces_service):
    session = [["kalomi", "kalomi online"]] * 3
    texts = suggestions(pieces_service, session, ["bes", "best kalo", "ratovi "])
    # A completed word may go on in pieces ("bes" -> "best", "besta"), still as typed.
    assert any(texts[0]) and all(t.startswith("bes") for t in texts[0] if t), texts[0]
    assert any(texts[1]) and all(t.startswith("best kalo") for t in texts[1] if t), texts[1]
    assert any(texts[2]) and all(t.split()[0] == "ratovi" for t in texts[2] if t), texts[2]


def test_source_tokens_are_pieces(pieces_service):
    import tensorflow as tf

    out = pieces_service.suggest(tf.constant([["kalomi online"]]))
    tokens = [t for t in out["source_tokens"].numpy().astype(str).ravel() if t]
    assert len(tokens) > 2 and any(t.startswith("##") for t in tokens)
    assert pieces_service.encoder.tokenise.pieces


def test_the_savedmodel_answers_as_the_service_on_pieces(pieces_service, pieces_exported):
    """Load with plain TensorFlow in a fresh process (no import of this project)."""
    script = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        model = tf.saved_model.load({str(pieces_exported)!r})
        assert not any(m.startswith("mtn_keras") for m in sys.modules)
        out = model.signatures["suggest"](session=tf.constant({SESSIONS!r}))
        done = model.signatures["complete"](session=tf.constant({SESSIONS[:2]!r}),
                                            prefix=tf.constant(["bes", "vinesu n"]))
        texts = lambda x: [[t.decode() for t in row] for row in x.numpy()]
        print(json.dumps({{"suggest": texts(out["suggestions"]),
                          "scores": out["scores"].numpy().tolist(),
                          "complete": texts(done["suggestions"])}}))
    """)
    result = printed_json(script)
    assert result["suggest"] == suggestions(pieces_service, SESSIONS)
    assert result["complete"] == suggestions(pieces_service, SESSIONS[:2], ["bes", "vinesu n"])
    assert all(any(row) for row in result["complete"]), result["complete"]
    import tensorflow as tf

    mine = pieces_service.suggest(tf.constant(SESSIONS))["scores"].numpy()
    np.testing.assert_allclose(np.array(result["scores"], dtype=np.float32), mine, atol=1e-4)
    assert len(result["suggest"][0]) == K and any(result["suggest"][1])
