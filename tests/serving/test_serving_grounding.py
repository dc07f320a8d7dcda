"""Grounded generation: a step of the beam lets a word follow only where the log
or the session puts it after the last word, and after the last two; a suggestion starts and
ends as a query of the log does."""

import numpy as np
import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, SPECIALS
from mtn_keras.serving.grounding import BITS, PhraseConstraint, pair_codes, set_size, word_keys

WORDS = ["cheap", "hotels", "in", "chicago", "rome", "flights", "to"]
VOCAB = list(SPECIALS) + WORDS
LOG = ["cheap hotels", "hotels in chicago", "cheap flights to rome"]
ID = {w: i for i, w in enumerate(VOCAB)}
V = len(VOCAB)
SLOTS = 4  # copy slots of the extended vocabulary


def allowed(last, before=BOS, session=(), t=1, forced_steps=0, loose=False):
    """The words that may follow `last` (after `before`) in a session of `session` words (a
    `loose` row: beyond the log's phrases, as where the log completes nothing)."""
    constraint = PhraseConstraint(LOG, VOCAB)
    source = tf.constant([[list(session) + [""] * (SLOTS - len(session))]])
    ext = tf.constant([[[ID.get(w, V) if w else PAD for w in source.numpy()[0, 0].astype(str)]]])
    context = constraint.context(source, ext, None)
    context["forced_steps"] = tf.constant([forced_steps])
    context["loose"] = tf.constant([loose])
    log_probs = tf.zeros([1, V + SLOTS])
    out = constraint.constrain(log_probs, tf.constant([last]), tf.constant([before]), context, t)
    kept = np.isfinite(out.numpy()[0])
    return {VOCAB[i] for i in np.flatnonzero(kept[:V]) if i >= len(SPECIALS)}, kept[EOS]


def test_the_log_words_and_pairs_are_in_the_set():
    constraint = PhraseConstraint(LOG, VOCAB)
    keys = word_keys(tf.constant(["hotels", "in", "cheap", "zorblax"]))
    pairs = pair_codes(keys[:2], keys[1:3])  # (hotels, in), (in, cheap)
    assert constraint.attested(pairs).numpy().tolist() == [True, False]
    assert constraint.is_log_word(keys).numpy().tolist() == [True, True, True, False]


def test_the_set_grows_with_the_log_so_that_it_never_fills():
    assert set_size(0) == set_size(85_556) == BITS  # the dev log's 85,556 queries
    assert set_size(85_556 * 4) == 4 * BITS
    log = [f"w{i} w{i + 1} end{i % 7}" for i in range(90_000)]  # 180,000 pairs, 90,000 triples
    constraint = PhraseConstraint(log, VOCAB)
    assert constraint.size == 2 * BITS
    keys = word_keys(tf.constant([f"w{i}" for i in range(2_001)]))
    assert all(constraint.attested(pair_codes(keys[:-1], keys[1:])).numpy())
    made_up = pair_codes(keys[1:], keys[:-1])  # (w1, w0) ...: never in the log
    assert constraint.attested(made_up).numpy().sum() <= 2


def test_a_word_follows_only_where_the_log_puts_it():
    words, eos = allowed(ID["hotels"])
    assert words == {"in"} and eos  # "hotels in", never "hotels cheap"; it may end
    assert allowed(ID["cheap"]) == ({"hotels", "flights"}, False)  # no query ends "cheap"
    assert allowed(BOS, t=0) == ({"cheap", "hotels"}, False)  # as queries start


def test_the_last_two_words_must_stand_together_before_it():
    assert allowed(ID["in"], before=ID["hotels"]) == ({"chicago"}, False)
    assert allowed(ID["hotels"], before=ID["cheap"]) == (set(), True)  # no "cheap hotels in"


def test_the_session_grounds_its_own_phrases():
    assert allowed(ID["hotels"], before=ID["cheap"], session=["cheap", "hotels", "in"])[0] == {"in"}
    assert allowed(ID["rome"], session=["rome", "hotels"])[0] == {"hotels"}


def test_typed_words_being_forced_are_left_as_they_are():
    assert allowed(ID["rome"], t=1, forced_steps=2) == (set(WORDS), True)


def test_a_loose_row_takes_any_english_word_after_the_typed_ones_then_the_logs_pairs():
    english = set(WORDS)  # every word of this vocabulary is an English word
    # "rome" was typed (one forced step): the next word may be any English word ...
    assert allowed(ID["rome"], t=1, forced_steps=1) == (set(), True)
    assert allowed(ID["rome"], t=1, forced_steps=1, loose=True)[0] == english
    # ... then the log's pairs, the triple across the junction not asked for ("rome hotels in")
    assert allowed(ID["hotels"], before=ID["rome"], t=2, forced_steps=1, loose=True) == (
        {"in"},
        True,
    )
    # and one word later it ends: past the junction's next word the model rambles
    assert allowed(ID["in"], before=ID["hotels"], t=3, forced_steps=1, loose=True) == (
        set(),
        False,
    )
