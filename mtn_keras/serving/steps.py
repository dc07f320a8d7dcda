"""The serving graph in named steps, as decoding/beam_search.py reads (after OpenNMT-tf's
decoding): a batch of sessions goes down the route once, `prepare` -> `kept_history` ->
`pooled` -> `search` -> `candidates` -> `filtered` -> `rank` -> `outputs`, each step a
function of named tuples that hands data to the next and calls nothing back, and comes back
as the signatures' outputs (docs/contracts.md, "The route of a suggestion"). service.py
holds the signatures and says what odd input gets."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import tensorflow as tf

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.vocab import PAD, UNK
from mtn_keras.data.wordpiece import SUFFIX
from mtn_keras.ranking import filters
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.candidates import retyped
from mtn_keras.ranking.history_lookup import HistoryLookup, history_weights
from mtn_keras.ranking.scoring import Scored, candidate_log_probs
from mtn_keras.ranking.shown import beam_only, beam_table
from mtn_keras.ranking.tables import track_variables_only
from mtn_keras.ranking.words import joined
from mtn_keras.serving.beyond_log import beyond_log
from mtn_keras.serving.encoding import SessionEncoder
from mtn_keras.serving.forbidden import LoggedExplicit, banned_ids, forbidden, last_check
from mtn_keras.serving.log_parts import log_parts
from mtn_keras.serving.prefix import PrefixConstraint
from mtn_keras.serving.search_core import SearchCore
from mtn_keras.serving.step_data import Found, Pooled, Prepared, Routed

if TYPE_CHECKING:
    from mtn_keras.models.base import SuggestionModel
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.shown import Shown, Table

NEG_INF = float("-inf")


class SuggestionSteps(tf.Module):
    """A trained model with its vocabulary and decoding settings, and the steps that turn
    sessions into suggestions (`decode`). SuggestionService adds the signatures.

    Args:
        model: a trained `SuggestionModel`.
        vocab_tokens: the vocabulary, id order.
        decoding: a `DecodeConfig` (k suggestions, beam width, length normalisation,
            source, filters, threshold).
        ranking: a `Ranking` (query-log index and ranker) for `source="hybrid"`; without
            one, or with `source="beam"`, the suggestions are the beam's alone.
    """

    def __init__(
        self,
        model: SuggestionModel,
        vocab_tokens: Sequence[str],
        decoding: DecodeConfig = DecodeConfig(),
        ranking: Ranking | None = None,
    ) -> None:
        super().__init__()
        track_variables_only(self, "model", model)
        self.k, self.beam = decoding.k, max(decoding.beam, decoding.k)
        self.repeat_last = decoding.repeat_last
        self.exact_stop = decoding.exact_stop
        self.filters = decoding.filters
        self.encoder = SessionEncoder(
            vocab_tokens, model.config.max_queries, model.config.max_query_tokens
        )
        self.n, self.max_queries = self.encoder.n, self.encoder.max_queries
        self.vocab_size = self.encoder.vocab_size
        self.pieces = self.encoder.tokenise.pieces
        # [V]: the WordPiece pieces that continue a word ("##s"); all False for words.
        self.continuing = tf.constant([t.startswith(SUFFIX) for t in vocab_tokens])
        self.typed = PrefixConstraint(self.encoder, self.continuing)
        self.explicit = decoding.explicit
        phrases = blocked_phrases(self.explicit) if "blocked" in self.filters else []
        self.blocked_pattern = filters.blocked_pattern(phrases)
        index = ranking and ranking.index
        sites = index.site_names if index else []
        self.banned_ids = banned_ids(vocab_tokens, phrases, self.pieces, self.explicit, sites)
        # What the log's clicks call explicit, hidden unless explicit items are asked for,
        # and what they say seeks minors, hidden always.
        self.logged = (
            LoggedExplicit(index.explicit_queries, sites, index.child_keys) if index else None
        )
        self.history = HistoryLookup()
        parts = log_parts(self.encoder, vocab_tokens, decoding, ranking, self.history, phrases)
        self.pool, self.hybrid, self.spelling, self.fragments = parts[:4]
        self.starts, self.phrases = parts.starts, parts.phrases
        self.banned_ids = sorted(set(self.banned_ids) | parts.slips)
        self.alpha = decoding.length_alpha(ranked=self.hybrid is not None)
        self.beyond_log = decoding.beyond_log
        # A plain callable, not a tf.function attribute: the SavedModel keeps the search once,
        # inside the signatures, rather than a second copy of its own.
        search = SearchCore(self, no_repeat_words="repeats" in self.filters)
        self.core = functools.partial(
            tf.function(search, jit_compile=decoding.xla, autograph=False)
        )
        # [1, layers, heads, 2, 2]: the sizes of the session attention, for empty batches.
        self.attention_shape = tuple(
            model.session_attention(tf.zeros([1, 2, self.n], tf.int32)).shape
        )

    def decode(
        self, session: tf.Tensor, prefix: tf.Tensor | None = None, history: tf.Tensor | None = None
    ) -> dict[str, tf.Tensor]:
        """Suggestions for each session [B, S], completing `prefix` [B] when given, with the
        user's earlier queries `history` [B, H] (oldest first, "" padding) when given: the
        outputs of every suggestion signature, step by step."""
        kept, prepared, pooled, found, table, valid = self.routed(session, prefix, history)
        shown = self.rank(table, valid, prepared, kept)
        if self.beyond_log and self.phrases is not None and prefix is not None:
            shown = beyond_log(
                shown,
                prepared.vouched,
                lambda loose: self.search(prepared, kept, pooled, loose),
                lambda table: self.filtered(table, prepared, kept),
                self.encoder.knows_session(prepared.session),
                self.beyond_log,
            )
        return self.outputs(prepared, kept, found, shown)

    def routed(
        self, session: tf.Tensor, prefix: tf.Tensor | None = None, history: tf.Tensor | None = None
    ) -> Routed:
        """The route of `decode` up to the ranking (`Routed`): the steps that the serving
        graph and the ranker's fitting (ranking/build.py) both take."""
        kept = self.kept_history(session, history)
        prepared = self.prepare(session, prefix, kept)
        pooled = self.pooled(prepared, kept)
        found = self.search(prepared, kept, pooled)
        table = self.candidates(prepared, pooled, found)
        return Routed(kept, prepared, pooled, found, table, self.filtered(table, prepared, kept))

    def candidate_table(
        self, session: tf.Tensor, prefix: tf.Tensor, history: tf.Tensor
    ) -> dict[str, tf.Tensor]:
        """Every candidate of a batch of sessions [B, S] after the typed `prefix` [B] ("" for
        none), with the user's earlier queries `history` [B, H], as the graph ranks them (the
        ranker's fitting rows, ranking/build.py): their `texts` [B, M], `sources`, `features`
        [B, M, F] and whether each is `valid` (listed and passing the filters)."""
        table, valid = self.routed(session, prefix, history)[-2:]
        texts, sources, features = table.texts, table.sources, table.features
        return {"texts": texts, "sources": sources, "features": features, "valid": valid}

    def prepare(
        self, session: tf.Tensor, prefix: tf.Tensor | None = None, history: tf.Tensor | None = None
    ) -> Prepared:
        """Sessions [B, S] (and what was typed, `prefix` [B], with the kept `history` [B, T])
        -> `Prepared`: normalised, a word's slip read through its correction
        (Spelling.corrected), encoded, and the typed word known nowhere found."""
        session = self.spelling.corrected(self.encoder.normalise(session))
        encoded = self.encoder.prepare(session, prefix)
        batch = tf.shape(session)[0]
        nowhere = tf.fill([batch, 2], -1)
        if prefix is None:
            none = tf.zeros([batch], tf.bool)
            return Prepared(encoded, None, none, none, nowhere)
        typed = self.typed.read(prefix, encoded.typed)
        span = nowhere if self.starts is None else self.starts.span(typed, encoded.words, history)
        again = retyped(encoded.queries, self.typed.chars(typed), span)
        return Prepared(encoded, typed, typed.has_word, again, span)

    def kept_history(self, session: tf.Tensor, history: tf.Tensor | None = None) -> tf.Tensor:
        """The earlier queries the graph reads [B, T] (HistoryLookup.kept), cut as the
        session's are (SessionEncoder.cut); none without a `history` [B, H]."""
        if history is None:
            history = tf.zeros([tf.shape(session)[0], 0], tf.string)
        return self.history.kept(self.encoder.cut(history))

    def pooled(self, prepared: Prepared, history: tf.Tensor) -> Pooled | None:
        """The pool's candidates (`Pooled`, CandidatePool.gather) after the `prepared`
        sessions, with the kept `history` [B, T]; None without a ranking."""
        if self.pool is None:
            return None
        session, typed = prepared.session, prepared.typed
        batch = tf.shape(session.queries)[0]
        chars = tf.fill([batch], "") if typed is None else self.typed.chars(typed)
        gathered = self.pool.gather(
            session.queries, session.words, history, chars, prepared.retyped, prepared.span
        )
        split = tf.strings.split(gathered.texts)
        tokens = self.encoder.tokenise.of_words(split).to_tensor("", shape=[None, None, self.n])
        ids = self.encoder.word_ids(tf.reshape(tokens, [batch, -1]), session)
        words = split.to_tensor("", shape=[None, None, self.n])
        return Pooled(gathered, words, tf.reshape(ids, [batch, -1, self.n]))

    def search(
        self,
        prepared: Prepared,
        history: tf.Tensor,
        pooled: Pooled | None,
        loose: tf.Tensor | None = None,
    ) -> Found:
        """`Found`: the model's work (SearchCore, XLA-compiled unless switched off) on the
        `prepared` sessions with the kept `history` [B, T]: the beam's n-best after what was
        typed (without `repeat_last`, the last query is none; in the `loose` rows [B] beyond
        the log's phrases, beyond_log.py), the `pooled` candidates scored (see
        ranking/scoring.py) and the attention."""
        session = prepared.session
        args, typed_tokens = self.search_args(prepared, history, pooled, loose)
        found = self.core(**args)
        words = self.encoder.to_words(found["ids"], session, typed_tokens)
        unknown = tf.reduce_sum(tf.cast(found["ids"] == UNK, tf.int32), axis=-1)
        scores, log_probs = found["scores"], found["log_probs"]
        if not self.repeat_last:  # the query just searched is no suggestion for the next one
            last = joined(words) == joined(session.words[:, -1:])
            scores = tf.where(last, NEG_INF, scores)
            log_probs = tf.where(last, NEG_INF, log_probs)
        beam = Scored(words, log_probs, found["lengths"], unknown, found["trace"])
        scored = None
        if pooled is not None:
            context = {"context": found["context"]}
            hidden = found["candidate_hidden"]
            scored = Scored(
                pooled.words, **candidate_log_probs(self.model, context, pooled.ids, hidden)
            )
        read = found.get("history_attention")
        if read is not None:  # the model's third level read the history
            read = tf.pad(read, [[0, 0], [tf.shape(history)[1] - tf.shape(read)[1], 0]])
        return Found(beam, scores, scored, found["session_attention"], read)

    def search_args(
        self,
        prepared: Prepared,
        history: tf.Tensor,
        pooled: Pooled | None,
        loose: tf.Tensor | None = None,
    ) -> tuple[dict[str, Any], tf.Tensor | None]:
        """The arguments of `SearchCore` (sessions front-padded to max_queries slots, so that
        one compiled XLA shape serves all lengths; the kept `history`'s tokens when the
        model reads it; the constraint of what was typed; the `pooled` candidates' ids)
        and the typed tokens (None without a prefix)."""
        session = prepared.session
        size = tf.shape(session.source)[1]
        pad = [[0, 0], [self.max_queries - size, 0], [0, 0]]
        args = {"tokens": tf.pad(session.tokens, pad), "ext": tf.pad(session.ext, pad)}
        if self.model.config.history_queries:
            args["history_tokens"] = self.encoder.history_ids(
                history, self.model.config.history_queries
            )
        tokens = None
        if prepared.typed is not None:
            tokens, allowed, args["allowed_at"] = self.typed.typed_words(prepared.typed, session)
            width = self.vocab_size + self.max_queries * self.n
            args["allowed"] = tf.pad(allowed, [[0, 0], [0, width - tf.shape(allowed)[1]]])
            args["forced"] = self.encoder.word_ids(tokens, session)
        if pooled is not None:
            args["candidates"] = pooled.ids
        if self.phrases is not None:
            padded = tf.pad(session.source, pad, constant_values="")
            forced = args.get("forced")
            args["grounding"] = self.phrases.context(padded, args["ext"], forced, loose)
        return args, tokens

    def candidates(self, prepared: Prepared, pooled: Pooled | None, found: Found) -> Table:
        """Every candidate once, as a `Table` (ranking/hybrid.py): the beam's alone, with the
        model's knowing a session word as their witness; with a ranking, the beam's and the
        `pooled` with their features (HybridRanker.table)."""
        session = prepared.session
        if self.hybrid is None:
            return beam_table(found.beam, found.scores, self.encoder.knows_session(session))
        assert pooled is not None and found.pooled is not None  # a ranking pools candidates
        known = self.encoder.known_words(session)
        return self.hybrid.table(
            session.queries, session.words, known, found.beam, pooled.gathered, found.pooled
        )

    def filtered(self, table: Table, prepared: Prepared, history: tf.Tensor) -> tf.Tensor:
        """[B, M]: the candidates of the `table` that are listed and pass the filters
        (ranking/filters.py) after the `prepared` sessions. Typed words vouch for every
        completion (`unrelated`) and let a completion return to an earlier query of the
        session (`session`); with the kept `history` [B, T], they say which words are known
        (`nonwords`, Spelling.all_known)."""
        session, typed = prepared.session, prepared.typed
        returns = filters.revisited(
            table.texts, session.queries, prepared.vouched, prepared.retyped
        )[0]
        kept = filters.keep(
            table.words,
            table.texts,
            session.words,
            self.blocked_pattern,
            self.filters,
            table.witness | prepared.vouched[:, None],
            returns,
        )
        if "nonwords" in self.filters:
            kept &= self.spelling.all_known(table.words, session.words, history, typed)
            kept &= ~filters.too_long(table.words)
        kept &= ~forbidden(table.texts, self.explicit, self.logged)  # whatever the filters
        if typed is not None:  # true to what was typed, whatever the source
            kept &= self.typed.true_to(table.texts, typed, prepared.span)
        if self.fragments is not None:
            kept &= ~self.fragments(table.words)
        return kept if table.listed is None else table.listed & kept

    def rank(self, table: Table, valid: tf.Tensor, prepared: Prepared, history: tf.Tensor) -> Shown:
        """The k shown of each row (shown.Shown) of the `table`'s `valid` [B, M] candidates:
        the beam's best, or with a ranking the ranker's (with the kept `history` [B, T])."""
        if self.hybrid is None:
            return beam_only(table, valid, self.k)
        last_words = prepared.session.words[:, -1:]
        return self.hybrid(table, valid, self.k, prepared.vouched, last_words, history)

    def outputs(
        self, prepared: Prepared, history: tf.Tensor, found: Found, shown: Shown
    ) -> dict[str, tf.Tensor]:
        """The suggestion signatures' outputs (outputs.py) of the `shown` (shown.Shown), for
        the `prepared` sessions with the kept `history` [B, T] and what the search `found`.
        A session with no query is answered only when typed words say what to complete."""
        session = prepared.session
        shown = last_check(shown, self.explicit, self.logged)
        empty = ~tf.reduce_any(session.tokens != PAD, axis=[1, 2]) & ~prepared.vouched
        scores = tf.where(empty[:, None], NEG_INF, shown.scores)
        found_any = scores > NEG_INF
        size = tf.shape(session.source)[1]
        copied = tf.where(found_any[:, :, None], shown.copied[:, :, -size * self.n :], 0.0)
        texts = tf.where(found_any, shown.texts, "")
        read = found.history_attention
        return {
            "suggestions": texts,
            "scores": scores,
            "sources": tf.where(found_any, shown.sources, ""),
            "copy_attention": tf.reshape(copied, [tf.shape(texts)[0], self.k, size, self.n]),
            "source_tokens": session.source,
            "session_attention": found.session_attention[:, :, :, -size:, -size:],
            "queries": session.queries,
            "history": history,
            "history_attention": history_weights(history, session.queries, texts, scores)
            if read is None
            else read,
        }
