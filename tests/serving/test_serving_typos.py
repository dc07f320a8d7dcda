"""What is typed with a slip still finds its queries, corrected ones say so, and a list shows
known words only: on the tiny ranked model of the made-up log."""

import pytest
import tensorflow as tf

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.text import completes
from mtn_keras.serving.service import SuggestionService


@pytest.fixture(scope="module")
def service(ranked):
    config = DecodeConfig(k=5, beam=6, xla=False, threshold=0.0)
    return SuggestionService(ranked.model, ranked.vocab.tokens, config, ranked.ranking)


@pytest.fixture(scope="module")
def log_words(ranked):
    return set(ranked.ranking.index.words) | set(ranked.vocab.tokens)


def listed(service, sessions, prefixes):
    out = service.complete(tf.constant(sessions), tf.constant(prefixes))
    rows = zip(out["suggestions"].numpy(), out["sources"].numpy())
    return [[(t.decode(), s.decode()) for t, s in zip(*row) if t] for row in rows]


def test_a_slip_finds_the_queries_and_marks_them_fixed(service, log_words):
    sessions = [["cheap flights"], ["pizza delivery"], ["cat food"]]
    rows = listed(service, sessions, ["guitra", "weahter", "runnig s"])
    intended = ["guitar", "weather", "running s"]
    for row, typed, meant in zip(rows, ["guitra", "weahter", "runnig s"], intended):
        assert row, typed
        assert any(completes(text, meant) for text, _ in row), row
        for text, source in row:
            assert completes(text, typed) or "fixed" in source.split("+"), (text, source)
            assert set(text.split()) <= log_words, text


def test_a_word_people_write_is_never_corrected(service):
    """ "runing" is in wordfreq's English list (people write it), "cheap" in the log's: every
    item starts with what was typed, word for word."""
    for session, typed in ((["pizza delivery"], "runing s"), ([""], "cheap fl"), ([""], "weat")):
        for text, source in listed(service, [session], [typed])[0]:
            assert completes(text, typed) and "fixed" not in source, (typed, text)


def test_what_completes_as_typed_comes_before_a_correction(service):
    row = listed(service, [["cheap flights"]], ["pizza"])[0]
    assert row and completes(row[0][0], "pizza") and "fixed" not in row[0][1]


def test_a_fragment_nothing_completes_shows_nothing_rather_than_junk(service):
    out = service.complete(tf.constant([["cheap flights"]]), tf.constant(["zzqxv"]))
    assert [t for t in out["suggestions"].numpy()[0] if t] == []
    assert (out["scores"].numpy() == float("-inf")).all()


def test_a_finished_new_word_may_stand_as_typed(service, log_words):
    """A name the log lacks, typed whole, is the user's word: it stands as typed, its last
    word completed and the person's own words after it, never in the model's phrases."""
    texts = ["zorblax", "zorblax cheap flights", "zorblax near me", "zorblax near"]
    assert {"near", "me"} <= log_words
    words = tf.strings.split(tf.constant([texts, texts])).to_tensor("")
    session = tf.constant([[["cheap", "flights", ""]], [["cheap", "flights", ""]]])
    typed = service.typed.read(tf.constant(["zorblax ", "zorblax n"]))
    known = service.spelling.all_known(words, session, tf.constant([[""], [""]]), typed)
    assert known.numpy().tolist() == [
        [True, True, False, False],
        [True, True, False, True],
    ]
    for text, _ in listed(service, [["cheap flights"]], ["zorblax "])[0]:
        assert text.split()[0] == "zorblax" and set(text.split()[1:]) <= {"cheap", "flights"}


def test_a_slip_in_the_session_is_read_through_its_correction(service):
    out = service.suggest(tf.constant([["weahter forecast", "guitar lessons"]]))
    queries = [q.decode() for q in out["queries"].numpy()[0] if q]
    assert queries == ["weather forecast", "guitar lessons"]
    kept = service.suggest(tf.constant([["zorblax gadgets"]]))["queries"].numpy()[0]
    assert b"zorblax gadgets" in kept.tolist()  # nothing known one edit away: as typed


def test_a_typed_word_one_edit_from_a_log_word_is_a_slip(service, ranked):
    """A finished typed word counts as a slip when a vocabulary or a log word is one edit from
    it, so "cmatose " for a "comatose" that only the log knows is not offered as a name."""
    vocab = set(ranked.vocab.tokens)
    log_only = sorted(w for w in ranked.ranking.index.words if w not in vocab and len(w) >= 5)
    known = sorted(w for w in vocab if w.isalpha() and len(w) >= 5)
    words = [w[0] + w[2] + w[1] + w[3:] for w in (log_only[:1] + known[:1])]  # two swapped
    own = tf.constant([["gadgets", ""]])
    names = service.spelling.names(tf.constant([words + ["zorblax", known[0]]]), own)
    assert names.numpy().tolist() == [[False] * len(words) + [True, False]]


def test_a_typed_word_one_edit_from_the_session_or_of_two_letters_is_a_slip(service):
    """ "gadegts" after "zorblax gadgets" is a slip of the session's word, not a new name;
    an unknown word of two letters is never one; the session's own words are the person's
    already; "zorblaxes" is a name."""
    own = tf.constant([["zorblax", "gadgets"]])
    names = service.spelling.names(tf.constant([["gadegts", "qz", "zorblax", "zorblaxes"]]), own)
    assert names.numpy().tolist() == [[False, False, False, True]]
    rows = listed(service, [["zorblax gadgets"]], ["gadegts "])[0]
    assert all("gadegts" not in text.split() for text, _ in rows), rows
