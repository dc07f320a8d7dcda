"""The searcher's own earlier queries inside the serving graph (core TensorFlow ops): their
candidates for the next query and the history's evidence for any candidate.

A history is [B, H] normalised queries, oldest first, "" padding. On unseen AOL users a
fifth of next queries that repeat nothing of the session were typed by the same user in an
earlier session, while other people's log holds under 1% of them: these candidates and this
evidence are what the ranker weighs against the model's and the log's."""

import tensorflow as tf

from mtn_keras.data.history import HISTORY_SIZE
from mtn_keras.ranking.filters import in_session, seeks_minors

HISTORY_EVIDENCE = (
    "history_follow_last",
    "history_follow_session",
    "history_count",
    "history_recency",
    "history_words",
    "history_size",
)


# Which earlier queries become candidates: a linear score of log(1 + times it followed the
# session's last query), log(1 + times it followed any session query), log(1 + times typed),
# recency 1 / (1 + later entries / 10), the share of its words in the session and its word
# count. Fitted (logistic regression) on the paper-protocol pairs of the AOL dev log's 90
# validation users (docs/ranking.md).
PRIORITY = (0.64, 0.60, 0.88, 1.70, 1.19, -0.14)
NEG_INF = float("-inf")


def latest(history: tf.Tensor, size: int) -> tf.Tensor:
    """[B, T] -> [B, min(T, size)]: each row's last `size` entries, oldest first
    (data.history.latest as a graph op)."""
    return history[:, -size:] if size else history[:, :0]


class HistoryLookup:
    """Candidates and evidence from a user's history.

    Args:
        size: the latest earlier queries read (the rest are dropped).
        candidates: at most this many history candidates per session.
    """

    def __init__(self, size: int = HISTORY_SIZE, candidates: int = 16) -> None:
        self.size, self.num_candidates = size, candidates

    def kept(self, history: tf.Tensor) -> tf.Tensor:
        """Normalised history [B, H] -> [B, size]: its real queries, oldest first, a query
        repeated right after itself once (a second enter, a next page), the last `size` of
        them, right-aligned behind "" padding. The one rule that cleans a history: the app's
        store, an imported log, a file and `prepare`'s histories all reach the model
        through it. An entry that seeks sexual content involving minors is dropped."""
        history = self.aligned(tf.where(seeks_minors(history), "", history))
        previous = tf.pad(history[:, :-1], [[0, 0], [1, 0]])
        history = self.aligned(tf.where(history == previous, "", history))
        padded = tf.pad(history, [[0, 0], [self.size, 0]])
        return latest(padded, self.size)

    @staticmethod
    def aligned(history: tf.Tensor) -> tf.Tensor:
        """[B, H] -> [B, H]: the real ("" is none) entries in their order, right-aligned."""
        real = history != ""
        order = tf.argsort(tf.cast(real, tf.int32), axis=1, stable=True)
        return tf.gather(history, order, batch_dims=1)

    def positions(
        self, history: tf.Tensor, queries: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """What each history entry [B, T] did, as [B, T] masks and numbers: `real`,
        `follows_last` (it came right after the session's last query there),
        `follows_session` (right after any session query), `distance` (later real entries)."""
        real = history != ""
        previous = tf.pad(history[:, :-1], [[0, 0], [1, 0]])
        last = queries[:, -1:]
        session = (previous[:, :, None] == queries[:, None, :]) & (queries[:, None, :] != "")
        follows_last = real & (previous == last) & (last != "") & (history != last)
        follows_session = real & tf.reduce_any(session, axis=-1) & (history != previous)
        later = tf.cumsum(tf.cast(real, tf.float32), axis=1, reverse=True, exclusive=True)
        return real, follows_last, follows_session, later

    def candidates(
        self,
        history: tf.Tensor,
        queries: tf.Tensor,
        session_words: tf.Tensor,
        allowed: tf.Tensor | None = None,
    ) -> tf.Tensor:
        """History [B, T] (`kept`), the session's queries [B, S] and words [B, S, n] ->
        candidates [B, C] ("" padding), best first by PRIORITY; each once, never a query of
        the session; only entries `allowed` [B, T] (those that start with what was typed)
        when given."""
        real, follows_last, follows_session, later = self.positions(history, queries)
        same = (history[:, :, None] == history[:, None, :]) & real[:, None, :]  # [B, T, T]
        position = tf.range(tf.shape(history)[1])
        latest = ~tf.reduce_any(same & (position[None, None, :] > position[None, :, None]), -1)

        def total(mask: tf.Tensor) -> tf.Tensor:
            return tf.reduce_sum(tf.cast(same & mask[:, None, :], tf.float32), axis=-1)

        words = tf.strings.split(history).to_tensor("")
        count = tf.reduce_sum(tf.cast(words != "", tf.float32), axis=-1)
        shared = tf.reduce_sum(tf.cast(in_session(words, session_words), tf.float32), axis=-1)
        signals = [
            tf.math.log1p(total(follows_last)),
            tf.math.log1p(total(follows_session)),
            tf.math.log1p(total(real)),
            1.0 / (1.0 + later / 10.0),
            tf.math.divide_no_nan(shared, count),
            count,
        ]
        priority = tf.add_n([weight * signal for weight, signal in zip(PRIORITY, signals)])
        repeat = tf.reduce_any(history[:, :, None] == queries[:, None, :], axis=-1)
        offered = real & latest & ~repeat
        if allowed is not None:
            offered &= allowed
        width = tf.minimum(self.num_candidates, tf.shape(history)[1])
        top, at = tf.math.top_k(tf.where(offered, priority, NEG_INF), width)
        found = tf.where(top > NEG_INF, tf.gather(history, at, batch_dims=1), "")
        return tf.pad(found, [[0, 0], [0, self.num_candidates - width]])

    def evidence(
        self, history: tf.Tensor, queries: tf.Tensor, texts: tf.Tensor, words: tf.Tensor
    ) -> tf.Tensor:
        """What the history says of each candidate (texts [B, M], words [B, M, L]): a
        float32 [B, M, len(HISTORY_EVIDENCE)] of counts (log1p-squashed), the recency of
        its latest entry (1 / (1 + later entries / 10); 0 if never typed), the share of its
        words the user ever typed, and log1p of the history's length."""
        real, follows_last, follows_session, later = self.positions(history, queries)
        match = (texts[:, :, None] == history[:, None, :]) & real[:, None, :]  # [B, M, T]
        match &= (texts != "")[:, :, None]

        def count(mask: tf.Tensor) -> tf.Tensor:
            return tf.math.log1p(tf.reduce_sum(tf.cast(match & mask[:, None, :], tf.float32), -1))

        recency = tf.reduce_max(
            tf.where(match, 1.0 / (1.0 + later[:, None, :] / 10.0), 0.0), axis=-1
        )
        history_words = tf.strings.split(history).to_tensor("")
        typed = tf.cast(in_session(words, history_words), tf.float32)
        length = tf.reduce_sum(tf.cast(words != "", tf.float32), axis=-1)
        size = tf.math.log1p(tf.reduce_sum(tf.cast(real, tf.float32), axis=-1))
        return tf.stack(
            [
                count(follows_last),
                count(follows_session),
                count(real),
                recency,
                tf.math.divide_no_nan(tf.reduce_sum(typed, axis=-1), length),
                tf.broadcast_to(size[:, None], tf.shape(recency)),
            ],
            axis=-1,
        )


def history_weights(
    history: tf.Tensor, queries: tf.Tensor, shown: tf.Tensor, scores: tf.Tensor
) -> tf.Tensor:
    """[B, T]: how much each kept history entry counted in the shown list: an entry the
    user typed that is shown, or one equal to a session query whose follower there is shown,
    weighs that suggestion's score; normalised to sum to one over the entries (all zeros
    when no shown suggestion came from the history)."""
    score = tf.where(scores > NEG_INF, scores, 0.0)[:, :, None]  # [B, k, 1]
    real = history != ""
    typed = (shown[:, :, None] == history[:, None, :]) & real[:, None, :]
    following = tf.pad(history[:, 1:], [[0, 0], [0, 1]])
    in_session = tf.reduce_any(history[:, :, None] == queries[:, None, :], axis=-1) & real
    led = (shown[:, :, None] == following[:, None, :]) & in_session[:, None, :]
    mass = tf.reduce_sum(tf.cast(typed | led, tf.float32) * score, axis=1)
    return tf.math.divide_no_nan(mass, tf.reduce_sum(mass, axis=-1, keepdims=True))
