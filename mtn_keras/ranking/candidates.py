"""The candidates beside the beam's, inside the serving graph: what followed the session in
the log, the log's most frequent completions of what was typed, the session's earlier
queries that the typed prefix returns to, and the user's earlier queries; each column
keeps the name of the source that proposed it."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import tensorflow as tf

from mtn_keras.ranking.history_lookup import HistoryLookup
from mtn_keras.ranking.log_lookup import LogLookup
from mtn_keras.ranking.prefix_lookup import PrefixLookup, completes
from mtn_keras.ranking.typos import FIXED_WEIGHT, forgiving, near_prefix

if TYPE_CHECKING:
    from mtn_keras.ranking.log_index import QueryLogIndex


class Pool(NamedTuple):
    """The pool's candidates of a batch and what they were gathered from: `texts` [B, C] (""
    padding), `source` [C] ("log", "session", "history" or "fixed"), the last query's
    `rare` word ids (LogLookup), the prefix's `completions` (PrefixLookup), the log's
    completions of what was typed with one slip corrected (`fixed`,
    PrefixLookup.near_completions), the `typed` prefix [B] (PrefixConstraint.chars; "" for
    none), the kept `history` [B, T] (HistoryLookup.kept), the rows where the last query was
    `retyped` [B] and the `span` [B, 2] where a slip may be read (word_starts.slip_span)."""

    texts: tf.Tensor
    source: tf.Tensor
    rare: tf.Tensor
    completions: tf.Tensor
    fixed: tf.Tensor
    typed: tf.Tensor
    history: tf.Tensor
    retyped: tf.Tensor
    span: tf.Tensor


class CandidatePool(tf.Module):
    """The log's, the prefix lists', the session's and the history's candidates of a batch.

    Args:
        index: the `QueryLogIndex`.
        history: the `HistoryLookup` that reads the user's earlier queries.
        max_queries: the session's last queries the model reads (the width of the
            session's candidates, one compiled shape for every session).
    """

    def __init__(
        self, index: QueryLogIndex, history: HistoryLookup | None = None, max_queries: int = 1
    ) -> None:
        super().__init__()
        self.lookup = LogLookup(index)
        self.prefixes = PrefixLookup(index, self.lookup.queries, self.lookup.counts)
        self.history = HistoryLookup() if history is None else history
        self.max_queries = max_queries

    def gather(
        self,
        queries: tf.Tensor,
        session_words: tf.Tensor,
        history: tf.Tensor,
        typed: tf.Tensor,
        retyped: tf.Tensor,
        span: tf.Tensor,
    ) -> Pool:
        """The `Pool` after the session's queries [B, S'] (words [B, S', n]), with the kept
        history [B, T] (HistoryLookup.kept) and the `typed` prefix [B] (PrefixConstraint.chars;
        "" for none); in the `retyped` rows [B] (`retyped`) the last query is among them. Only
        candidates that complete what was typed, as typed or with one edit inside the typed
        word known nowhere (`span` [B, 2], word_starts.slip_span; typos.near_prefix), are
        kept. A slip is read only where the channel model prefers it: the log's completions
        one edit away were typed 1 / FIXED_WEIGHT times as often as those of what was typed,
        or more."""
        rare = self.lookup.rare_word_ids(queries)
        completions = self.prefixes.completions(typed)
        forgive = forgiving(typed, tf.reduce_any(completions >= 0, axis=1)) & (span[:, 0] >= 0)
        fixed = self.prefixes.near_completions(typed, forgive)
        fixed = tf.where(near_prefix(self.prefixes.texts(fixed), typed, forgive, span), fixed, -1)
        forgive &= self.prefixes.total(fixed) * FIXED_WEIGHT >= self.prefixes.total(completions)
        fixed = tf.where(forgive[:, None], fixed, -1)
        log = self.lookup.candidates(queries, rare)
        log = tf.where(matches(log, typed, forgive, span), log, "")
        texts = self.with_completions(log, completions)
        parts = {
            "log": texts,
            "session": self.returns(queries, typed, forgive, retyped, span),
            "history": self.history.candidates(
                history, queries, session_words, matches(history, typed, forgive, span)
            ),
            "fixed": self.new_texts(self.prefixes.texts(fixed), texts),
        }
        source = [tf.fill(tf.shape(texts)[1:], name) for name, texts in parts.items()]
        texts = tf.concat(list(parts.values()), axis=1)
        source = tf.concat(source, axis=0)
        return Pool(texts, source, rare, completions, fixed, typed, history, retyped, span)

    def with_completions(self, texts: tf.Tensor, completions: tf.Tensor) -> tf.Tensor:
        """The log's candidate texts [B, C] followed by the texts of the prefix's
        `completions` [B, top] that are not among them ("" in their place)."""
        return tf.concat([texts, self.new_texts(self.prefixes.texts(completions), texts)], 1)

    @staticmethod
    def new_texts(extra: tf.Tensor, texts: tf.Tensor) -> tf.Tensor:
        """The `extra` texts [B, X] that are not among `texts` [B, C] ("" in their place)."""
        seen = tf.reduce_any(extra[:, :, None] == texts[:, None, :], axis=-1)
        return tf.where(seen, "", extra)

    def returns(
        self,
        queries: tf.Tensor,
        typed: tf.Tensor,
        forgive: tf.Tensor,
        retyped: tf.Tensor,
        span: tf.Tensor,
    ) -> tf.Tensor:
        """[B, max_queries]: the session's earlier queries (queries [B, S']) that complete
        what was `typed` (none for ""; one slip inside the `span` where `forgive`), as
        completions that return to them, and the last one where it was `retyped` [B] with a
        slip ("" elsewhere; one width for every session, so one compiled shape)."""
        earlier = queries[:, :-1]
        starts = matches(earlier, typed, forgive, span) & (typed != "")[:, None]
        earlier = tf.where(starts, earlier, "")
        last = tf.where(retyped, queries[:, -1], "")[:, None]
        found = tf.concat([earlier, last], axis=1)
        return tf.pad(found, [[0, 0], [self.max_queries - tf.shape(queries)[1], 0]])


def matches(texts: tf.Tensor, typed: tf.Tensor, forgive: tf.Tensor, span: tf.Tensor) -> tf.Tensor:
    """[B, M]: the texts [B, M] that complete what was `typed` [B], as typed or, in the rows
    where a slip is forgiven (`forgive` [B]), with one edit inside the typed word known
    nowhere (`span` [B, 2], typos.near_prefix)."""
    return completes(texts, typed) | near_prefix(texts, typed, forgive, span)


def retyped(queries: tf.Tensor, typed: tf.Tensor, span: tf.Tensor) -> tf.Tensor:
    """[B]: what was `typed` [B] (PrefixConstraint.chars) is the session's last query
    (queries [B, S']) typed whole again with one slip inside a word known nowhere (`span`
    [B, 2]): one edit from its start (near_prefix, from MIN_CHARS characters on), as long as
    it within a character, and not it as typed ("nfl standigns" after "nfl standings")."""
    last = queries[:, -1]
    typed_chars = tf.strings.length(tf.strings.strip(typed), unit="UTF8_CHAR")
    size = tf.strings.length(last, unit="UTF8_CHAR")
    near = near_prefix(last[:, None], typed, span=span)[:, 0]
    near &= ~completes(last[:, None], typed)[:, 0]
    return near & (tf.abs(size - typed_chars) <= 1) & (typed != "")
