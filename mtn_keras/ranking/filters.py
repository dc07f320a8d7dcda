"""What a searcher never wants to see, as masks over candidate words (core TensorFlow ops).

Each filter is on by default and can be switched off by name:
- `session`: a suggestion equal to a query of the session, or whose words all lie inside one
  of them (a cut-down copy), is no suggestion for the next query;
- `repeats`: no word twice in a suggestion;
- `blocked`: no blocked word or phrase (`blocklist.py`);
- `unrelated`: when no word of the session is in the model's vocabulary, the model knows
  nothing of it, so its suggestions must share a word with the session to be shown; with a
  ranking, a suggestion that shares no word with the session must have followed one of its
  queries in the log (`HybridRanker`): no generic popular query after any session.
Shown suggestions also differ: of two with the same words in any order, the better stays.
"""

import tensorflow as tf

from mtn_keras.decoding.beam_search import beaten

def inside_session(words, session_words):
    """[B, M]: every word of the candidate (words [B, M, n]) lies in one query of the
    session (session_words [B, S, n]); "" is padding. True for an empty candidate."""
    real = words != ""
    same = words[:, :, :, None, None] == session_words[:, None, None, :, :]  # [B, M, n, S, n]
    in_query = tf.reduce_any(same, axis=-1) | ~real[:, :, :, None]  # [B, M, n, S]
    query_real = tf.reduce_any(session_words != "", axis=-1)[:, None, :]  # [B, 1, S]
    return tf.reduce_any(tf.reduce_all(in_query, axis=2) & query_real, axis=-1) | ~tf.reduce_any(real, -1)


def repeats_a_word(words):
    """[B, M]: some word of the candidate appears twice."""
    real = words != ""
    same = (words[:, :, :, None] == words[:, :, None, :]) & real[:, :, :, None]
    length = tf.shape(words)[-1]
    later = tf.range(length)[None, :] > tf.range(length)[:, None]
    return tf.reduce_any(same & later, axis=[2, 3])


def blocked_pattern(phrases):
    """The regular expression that finds any of the (normalised) phrases as whole words."""
    return "(?s).* (" + "|".join(phrases) + ") .*" if phrases else "(?!)"


def is_blocked(texts, pattern):
    """[...]: the single-spaced text holds a blocked phrase."""
    return tf.strings.regex_full_match(" " + texts + " ", pattern)


def shares_no_word(words, session_words):
    """[B, M]: no word of the candidate occurs in the session."""
    real = words != ""
    flat = tf.reshape(session_words, [tf.shape(session_words)[0], 1, 1, -1])
    hit = tf.reduce_any((words[:, :, :, None] == flat) & real[:, :, :, None], axis=-1)
    return ~tf.reduce_any(hit, axis=-1)


def keep(words, texts, session_words, pattern, enabled, knows_session):
    """[B, M] bool: the candidates that pass every `enabled` filter. `knows_session` [B] says
    whether the model's vocabulary holds a word of the session."""
    kept = texts != ""
    if "session" in enabled:
        kept &= ~inside_session(words, session_words)
    if "repeats" in enabled:
        kept &= ~repeats_a_word(words)
    if "blocked" in enabled:
        kept &= ~is_blocked(texts, pattern)
    if "unrelated" in enabled:
        kept &= knows_session[:, None] | ~shares_no_word(words, session_words)
    return kept


def same_words_as_better(words, scores):
    """[B, M]: a candidate with the same words (any order) as one of higher score, or as an
    earlier one of equal score; these are dropped so that the k shown differ."""
    hashes = tf.where(words != "", tf.strings.to_hash_bucket_fast(words, 2**58), 0)
    key = tf.reduce_sum(hashes, axis=-1)  # an order-free key of the word multiset
    return beaten(key[:, :, None] == key[:, None, :], scores)
