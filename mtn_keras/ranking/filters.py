"""What a searcher never wants to see, as masks over candidate words (core TensorFlow ops).

Each filter is on by default and can be switched off by name:
- `session`: a suggestion equal to a query of the session, or whose words all lie inside one
  of them (a cut-down copy), is no suggestion for the next query; except, in `complete`, an
  earlier query of the session (not the last) that starts with what was typed: the searcher
  is typing it again (A, B, A), as an address bar completes a page already visited; and the
  last one typed whole again with a slip (candidates.retyped);
- `repeats`: no word twice in a suggestion;
- `blocked`: no blocked word or phrase (`blocklist.py`);
- `unrelated`: a suggestion that shares no word with the session (function words aside)
  needs a witness, or it is a
  generic popular query ("google", "ebay") that the model offers after any session. With a
  ranking the witness is the log (it followed one of the session's queries there); without
  one, the model's knowing some word of the session; in `complete`, what the user typed;
- `nonwords`: every word of a suggestion is a known word: the vocabulary's, the log's, the
  session's, the user's history's, or a finished typed word (serving/spelling.py); the
  unfinished word being typed stands only completed into one; and no word is longer than
  MAX_SHOWN_WORD_CHARS (a pasted run of characters is no word to suggest);
- `fragments`: no suggestion ends where queries do not end ("what is the best", "stand for"),
  and none only repeats the typed letters where people never type them alone (fragments.py);
Shown suggestions also differ: of two with the same words in any order, the better stays.
Whatever the filters, `unsafe` holds: never a query that seeks sexual content involving
minors, and no sexually explicit one unless asked (data/safety.py, the rule's one room).
"""

from collections.abc import Collection

import tensorflow as tf

from mtn_keras.data import safety
from mtn_keras.decoding.blocking import beaten
from mtn_keras.ranking import rules


def _without(texts: tf.Tensor, core: str) -> tf.Tensor:
    """`texts` with the phrases of `core` replaced by two spaces, twice (safety.without)."""
    return tf.strings.regex_replace(tf.strings.regex_replace(texts, core, "  "), core, "  ")


def _innocent_read(texts: tf.Tensor) -> tf.Tensor:
    """` text ` of each normalised text, its innocent phrases read as absent."""
    return _without(" " + texts + " ", safety.innocent_core())


def seeks_minors(texts: tf.Tensor) -> tf.Tensor:
    """[...]: the normalised text seeks sexual content involving minors (the graph's twin of
    safety.child_unsafe)."""
    return tf.strings.regex_full_match(_innocent_read(texts), safety.whole(safety.child_core()))


def unsafe(texts: tf.Tensor, explicit_shown: bool = False) -> tf.Tensor:
    """[...]: the normalised text is never shown: it seeks sexual content involving minors, or
    it is sexually explicit and `explicit_shown` is False (the twins of safety.child_unsafe
    and safety.explicit). The innocent phrases are read once for both rules."""
    padded = _innocent_read(texts)
    found = tf.strings.regex_full_match(padded, safety.whole(safety.child_core()))
    if not explicit_shown:
        padded = _without(padded, safety.information_core())
        found |= tf.strings.regex_full_match(padded, safety.whole(safety.explicit_core()))
    return found


MAX_SHOWN_WORD_CHARS = 32  # longer than any word a query shows; "aaa...a com" after 512 a's


def too_long(words: tf.Tensor) -> tf.Tensor:
    """[B, M]: some word of the candidate (words [B, M, n]) is longer than MAX_SHOWN_WORD_CHARS."""
    return tf.reduce_any(tf.strings.length(words, "UTF8_CHAR") > MAX_SHOWN_WORD_CHARS, axis=-1)


def inside_a_query(words: tf.Tensor, session_words: tf.Tensor) -> tf.Tensor:
    """[B, M]: every word of the candidate (words [B, M, n]) lies in one query of the
    session (session_words [B, S, n]); "" is padding. True for an empty candidate."""
    real = words != ""
    same = words[:, :, :, None, None] == session_words[:, None, None, :, :]  # [B, M, n, S, n]
    in_query = tf.reduce_any(same, axis=-1) | ~real[:, :, :, None]  # [B, M, n, S]
    query_real = tf.reduce_any(session_words != "", axis=-1)[:, None, :]  # [B, 1, S]
    return tf.reduce_any(tf.reduce_all(in_query, axis=2) & query_real, axis=-1) | ~tf.reduce_any(
        real, -1
    )


def repeats_a_word(words: tf.Tensor) -> tf.Tensor:
    """[B, M]: some word of the candidate appears twice."""
    real = words != ""
    same = (words[:, :, :, None] == words[:, :, None, :]) & real[:, :, :, None]
    length = tf.shape(words)[-1]
    later = tf.range(length)[None, :] > tf.range(length)[:, None]
    return tf.reduce_any(same & later, axis=[2, 3])


def blocked_pattern(phrases: Collection[str]) -> str:
    """The regular expression that finds any of the (normalised) phrases as whole words."""
    return "(?s).* (" + "|".join(phrases) + ") .*" if phrases else "(?!)"


def is_blocked(texts: tf.Tensor, pattern: str) -> tf.Tensor:
    """[...]: the single-spaced text holds a blocked phrase."""
    return tf.strings.regex_full_match(" " + texts + " ", pattern)


def in_session(words: tf.Tensor, session_words: tf.Tensor) -> tf.Tensor:
    """[B, M, n]: each word of the candidates (words [B, M, n]) occurs somewhere in the
    session (session_words [B, S, n]); False for padding."""
    flat = tf.reshape(session_words, [tf.shape(session_words)[0], 1, 1, -1])
    return tf.reduce_any(words[..., None] == flat, axis=-1) & (words != "")


def shares_content(words: tf.Tensor, session_words: tf.Tensor) -> tf.Tensor:
    """[B, M]: the candidate (words [B, M, n]) shares a word with the session (session_words
    [B, S, n]) that is no function word (rules.FUNCTION_WORDS: "of" relates nothing)."""
    function = tf.reduce_any(words[..., None] == tf.constant(rules.FUNCTION_WORDS), axis=-1)
    return tf.reduce_any(in_session(words, session_words) & ~function, axis=-1)


def related(
    words: tf.Tensor, session_words: tf.Tensor, followed: tf.Tensor, typed: tf.Tensor
) -> tf.Tensor:
    """[B, M]: the candidate (words [B, M, n]) relates to the session: it shares a word with
    a session query (session_words [B, S, n]; `shares_content`), `followed` [B, M] a
    session query in the user's history or in the log, or completes what was `typed` [B].
    The twin of `rules.relates`; an earlier query that relates to nothing is the user's
    past, not this session's next step."""
    return shares_content(words, session_words) | followed | typed[:, None]


def keep(
    words: tf.Tensor,
    texts: tf.Tensor,
    session_words: tf.Tensor,
    pattern: str,
    enabled: Collection[str],
    vouched: tf.Tensor,
    revisits: tf.Tensor | None = None,
) -> tf.Tensor:
    """[B, M] bool: the candidates that pass every `enabled` filter. `vouched` [B, M] marks
    the candidates with a witness for sharing no word with the session (see `unrelated`);
    `revisits` [B, M] the typed returns to an earlier session query that `session` lets
    pass (none when not given)."""
    kept = texts != ""
    if "session" in enabled:
        inside = inside_a_query(words, session_words)
        kept &= ~inside if revisits is None else ~inside | revisits
    if "repeats" in enabled:
        kept &= ~repeats_a_word(words)
    if "blocked" in enabled:
        kept &= ~is_blocked(texts, pattern)
    if "unrelated" in enabled:
        kept &= vouched | shares_content(words, session_words)
    return kept


def revisited(
    texts: tf.Tensor, queries: tf.Tensor, typed: tf.Tensor, retyped: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """[B, M]: the candidate texts [B, M] that equal an earlier query of the session (queries
    [B, S], the last at S-1, "" padding), not the last, in rows where words were `typed`
    [B]: the completions that return to it; and the last query, in the rows where it was
    `retyped` [B] with a slip (candidates.retyped). A float [B, M] too: 1 / how many
    queries back an earlier one was typed (1/2 for the one before the last; 0 for no return
    and for the last)."""
    earlier = queries[:, :-1]
    back = tf.cast(tf.shape(queries)[1] - tf.range(tf.shape(earlier)[1]), tf.float32)
    same = (texts[:, :, None] == earlier[:, None, :]) & (earlier != "")[:, None, :]
    same &= typed[:, None, None]
    recency = tf.reduce_max(tf.where(same, 1.0 / back[None, None, :], 0.0), axis=-1)
    returns = recency > 0
    if retyped is not None:
        returns |= (texts == queries[:, -1:]) & retyped[:, None]
    return returns, recency


def same_words_as_better(words: tf.Tensor, scores: tf.Tensor) -> tf.Tensor:
    """[B, M]: a candidate with the same words (any order) as one of higher score, or as an
    earlier one of equal score; these are dropped so that the k shown differ."""
    hashes = tf.where(words != "", tf.strings.to_hash_bucket_fast(words, 2**58), 0)
    key = tf.reduce_sum(hashes, axis=-1)  # an order-free key of the word multiset
    return beaten(key[:, :, None] == key[:, None, :], scores)
