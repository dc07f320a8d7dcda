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
from mtn_keras.data.vocab import PAD, SPECIALS, UNK
from mtn_keras.data.wordpiece import SUFFIX
from mtn_keras.ranking import filters, thresholds
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.candidates import CandidatePool, retyped
from mtn_keras.ranking.fragments import Fragments
from mtn_keras.ranking.history_lookup import HistoryLookup, history_weights, latest
from mtn_keras.ranking.hybrid import HybridRanker, beam_only, beam_table
from mtn_keras.ranking.popular import PopularQueries
from mtn_keras.ranking.scoring import Scored, candidate_log_probs
from mtn_keras.ranking.tables import track_variables_only
from mtn_keras.ranking.words import joined
from mtn_keras.serving.encoding import SessionEncoder
from mtn_keras.serving.forbidden import LoggedExplicit, banned_ids, forbidden, last_check
from mtn_keras.serving.grounding import PhraseConstraint, slip_ids
from mtn_keras.serving.prefix import PrefixConstraint
from mtn_keras.serving.search_core import SearchCore
from mtn_keras.serving.spelling import Spelling
from mtn_keras.serving.step_data import Found, Pooled, Prepared
from mtn_keras.serving.word_starts import WordStarts

if TYPE_CHECKING:
    from mtn_keras.models.base import SuggestionModel
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.hybrid import Shown, Table

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
        self.pool: CandidatePool | None = None
        self.hybrid: HybridRanker | None = None
        if ranking is not None and decoding.source == "hybrid":
            self.pool = CandidatePool(ranking.index, self.history, self.max_queries)
            shown = thresholds(ranking.threshold, ranking.history_threshold, decoding.threshold)
            popular = PopularQueries(
                ranking.index, decoding.popular, shown[0], phrases, self.filters, self.explicit
            )
            self.hybrid = HybridRanker(
                self.pool,
                ranking.ranker,
                *shown,
                decoding.unrelated_history,
                decoding.unrelated_place,
                popular,
            )
        lookup = self.pool and self.pool.lookup
        self.spelling = Spelling(self.encoder, lookup and lookup.word_ids, lookup and lookup.slips)
        self.fragments = None  # the log says where queries end only to the ranked lists
        if "fragments" in self.filters:
            logged = ranking.index if ranking is not None and self.pool is not None else None
            self.fragments = (
                Fragments(logged.queries, logged.counts) if logged else Fragments([], [])
            )
        self.starts: WordStarts | None = None  # without a pool, nothing is corrected
        if ranking is not None and self.pool is not None:
            words = [t for t in vocab_tokens[len(SPECIALS) :] if not t.startswith(SUFFIX)]
            self.starts = WordStarts([*words, *ranking.index.words])
        # With a log, the beam writes only the phrases people type, never its slips.
        self.phrases: PhraseConstraint | None = None
        if ranking is not None and self.pool is not None and not self.pieces:
            self.phrases = PhraseConstraint(ranking.index.queries, vocab_tokens)
            self.banned_ids = sorted(set(self.banned_ids) | slip_ids(vocab_tokens, ranking.index))
        self.alpha = decoding.length_alpha(ranked=self.hybrid is not None)
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
        kept = self.kept_history(session, history)
        prepared = self.prepare(session, prefix, kept)
        pooled = self.pooled(prepared, kept)
        found = self.search(prepared, kept, pooled)
        table = self.candidates(prepared, pooled, found)
        valid = self.filtered(table, prepared, kept)
        shown = self.rank(table, valid, prepared, kept)
        return self.outputs(prepared, kept, found, shown)

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
        """The earlier queries the graph reads [B, T] (HistoryLookup.kept), normalised and cut
        to the model's n words as the session's are (no entry, however long, slows a call);
        none without a `history` [B, H]."""
        if history is None:
            history = tf.zeros([tf.shape(session)[0], 0], tf.string)
        words = tf.strings.split(tf.reshape(self.encoder.normalise(history), [-1]))
        cut = joined(words.to_tensor("", shape=[None, self.n]))
        return self.history.kept(tf.reshape(cut, tf.shape(history)))

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

    def search(self, prepared: Prepared, history: tf.Tensor, pooled: Pooled | None) -> Found:
        """`Found`: the model's work (SearchCore, XLA-compiled unless switched off) on the
        `prepared` sessions with the kept `history` [B, T]: the beam's n-best after what was
        typed (without `repeat_last`, the last query is none), the `pooled` candidates
        scored (see ranking/scoring.py) and the attention."""
        session = prepared.session
        args, typed_tokens = self.search_args(prepared, history, pooled)
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
        self, prepared: Prepared, history: tf.Tensor, pooled: Pooled | None
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
            args["history_tokens"] = self.history_tokens(history)
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
            args["grounding"] = self.phrases.context(padded, args["ext"], args.get("forced"))
        return args, tokens

    def history_tokens(self, history: tf.Tensor) -> tf.Tensor:
        """The kept history [B, T] -> the token ids [B, H, n] of its latest H entries, H the
        model's `history_queries` (its third level): vocabulary ids and <unk>, as in
        training (nothing is copied from the history)."""
        kept = latest(history, self.model.config.history_queries)
        return self.encoder.token_ids(tf.strings.split(kept))[1]

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
        """The k shown of each row (hybrid.Shown) of the `table`'s `valid` [B, M] candidates:
        the beam's best, or with a ranking the ranker's (with the kept `history` [B, T])."""
        if self.hybrid is None:
            return beam_only(table, valid, self.k)
        last_words = prepared.session.words[:, -1:]
        return self.hybrid(table, valid, self.k, prepared.vouched, last_words, history)

    def outputs(
        self, prepared: Prepared, history: tf.Tensor, found: Found, shown: Shown
    ) -> dict[str, tf.Tensor]:
        """The suggestion signatures' outputs (outputs.py) of the `shown` (hybrid.Shown), for
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
