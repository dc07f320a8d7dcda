"""The ranker's features of each candidate next query (float32 [B, M, F]), in this order:

- `model_score`: the model's log-probability of the candidate per token (eos included);
- `model_log_prob`: the same, summed (floored at -30);
- `unknown_words`: the share of its words the model cannot write (outside the vocabulary
  and the session), which the model scores as its rarest word;
- `in_beam`, `from_log`, `from_history`: which source proposed it (1 or 0);
- `session_return`: in `complete`, 1 / how many queries back the session holds it (1/2 for
  the query before the last), when the typed prefix returns to it; else 0;
- the log's evidence (`log_lookup.EVIDENCE`): log(1 + how often it directly followed the
  last query), its share of the last query's followers, log(1 + how often it followed the
  earlier queries), log(1 + in how many sessions it came after a session query), log(1 +
  the idf-weighted follow counts from queries sharing the last query's rarest words),
  log(1 + its count in the log);
- `words`: its number of words; `new_words`: the share of its words in no session query;
- `known_last`: whether the log holds the last query; `known_words`: the share of the last
  query's words in the model's vocabulary;
- the user's history's evidence (`history_lookup.HISTORY_EVIDENCE`): log(1 + how often it
  followed the session's last query there), log(1 + how often it followed any session
  query), log(1 + how often the user typed it), the recency of its latest typing, the share
  of its words the user ever typed, log(1 + the history's length); all 0 without history.
- the typed prefix (`prefix_lookup.PREFIX_FEATURES`): its length in characters, 1 / the
  candidate's rank among the log's most frequent completions of it and its share of their
  counts (0 when it is none of them, and without a prefix).
"""

from collections.abc import Sequence

import tensorflow as tf

from mtn_keras.ranking.filters import in_session
from mtn_keras.ranking.history_lookup import HISTORY_EVIDENCE
from mtn_keras.ranking.log_lookup import EVIDENCE
from mtn_keras.ranking.prefix_lookup import PREFIX_FEATURES

FEATURES = (
    "model_score",
    "model_log_prob",
    "unknown_words",
    "in_beam",
    "from_log",
    "from_history",
    "session_return",
    *EVIDENCE,
    "words",
    "new_words",
    "known_last",
    "known_words",
    *HISTORY_EVIDENCE,
    *PREFIX_FEATURES,
)
HISTORY_FEATURES = ("from_history", *HISTORY_EVIDENCE)  # 0 for every candidate without a history


def without_history(features: tf.Tensor) -> tf.Tensor:
    """Features [..., F] as they would be without the user's history."""
    keep = [name not in HISTORY_FEATURES for name in FEATURES]
    return features * tf.constant(keep, tf.float32)


def candidate_features(
    log_probs: tf.Tensor,
    lengths: tf.Tensor,
    unknown: tf.Tensor,
    sources: Sequence[tf.Tensor],
    evidence: tf.Tensor,
    words: tf.Tensor,
    session: tf.Tensor,
    known: tf.Tensor,
    history: tf.Tensor,
    prefix: tf.Tensor,
) -> tf.Tensor:
    """Stack the features. log_probs, lengths, unknown [B, M]; sources: in_beam, from_log,
    from_history, bool [B, M], and session_return, float [B, M]; evidence [B, M, E]; words
    [B, M, n] and session words [B, S, n] ("" padding); known: `known_last` and
    `known_words` [B, 2]; history: the history's evidence [B, M, len(HISTORY_EVIDENCE)];
    prefix [B, M, 3]."""
    count = tf.reduce_sum(tf.cast(words != "", tf.float32), axis=-1)
    new = count - tf.reduce_sum(tf.cast(in_session(words, session), tf.float32), axis=-1)
    per_row = tf.broadcast_to(known[:, None, :], tf.concat([tf.shape(count), [2]], 0))
    columns = [
        log_probs / tf.cast(lengths + 1, tf.float32),
        tf.maximum(log_probs, -30.0),
        tf.math.divide_no_nan(tf.cast(unknown, tf.float32), tf.cast(lengths, tf.float32)),
        *(tf.cast(source, tf.float32) for source in sources),
    ]
    return tf.concat(
        [
            tf.stack(columns, axis=-1),
            evidence,
            tf.stack([count, tf.math.divide_no_nan(new, count)], axis=-1),
            per_row,
            history,
            prefix,
        ],
        axis=-1,
    )
