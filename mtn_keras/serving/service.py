"""Raw session strings in, ranked suggestions out: the graph that `suggest`, `evaluate` and
the exported SavedModel share, so all three give the same answers.

Everything here is core TensorFlow (string ops, lookup tables, the beam search), so the
SavedModel loads with plain TensorFlow. The numeric core (`search`) is XLA-compiled unless
DecodeConfig.xla is off (for a TensorFlow Serving without XLA). Behaviour on odd input:
- queries are normalised like the data pipeline (lowercase, punctuation to spaces);
- empty queries ("" or only punctuation) are dropped wherever they stand; the rest keep
  their order and only the last `max_queries` are used (the longest session trained on);
- a query's tokens past `max_query_tokens` are cut off, and so are the characters of a word
  past 64 (or the longest vocabulary word), in the session and in a prefix alike;
- under a WordPiece vocabulary a word is spelt from pieces (text.Tokeniser) and the
  suggestions' pieces are joined back into words;
- a session word that neither the vocabulary nor the log knows is read through its
  correction when one is one edit away (spelling.py; the `queries` output shows it);
- what is typed matches the log's queries and the history as typed and within one edit
  (ranking/typos.py): such corrected candidates are ranked with the rest, their source
  `fixed`; a shown suggestion holds known words only (the `nonwords` filter);
- words outside the vocabulary (or that no piece spells) can be copied from the session and
  come out verbatim; elsewhere (typed, or in a log candidate) the model scores such a word
  as its rarest word (models.base.unknown_as_rarest);
- a session with no query left gets k empty suggestions with score -inf, unless a prefix
  with words was typed: then its completions (the log's most frequent ones among them);
- the filters of `ranking/filters.py` drop what a searcher never wants (session repeats,
  repeated or blocked words); with a ranking, fewer than k may pass its threshold;
- a batch of no sessions gets outputs of batch 0, without a search; a session that is not
  [B, S], or a prefix batch unlike the session's, raises InvalidArgumentError naming the
  input and the shape expected (inputs.py);
- in `complete`, the typed prefix constrains every candidate by one rule (prefix.py); a
  prefix with no words answers as `suggest`.
"""

import functools

import tensorflow as tf

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.vocab import BOS, PAD, UNK
from mtn_keras.data.wordpiece import SUFFIX
from mtn_keras.decoding import beam_search
from mtn_keras.ranking import filters, thresholds
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.candidates import CandidatePool
from mtn_keras.ranking.history_lookup import HistoryLookup, latest
from mtn_keras.ranking.hybrid import HybridRanker, beam_only
from mtn_keras.ranking.scoring import candidate_hidden, candidate_log_probs
from mtn_keras.ranking.tables import track_variables_only
from mtn_keras.ranking.words import joined
from mtn_keras.serving.encoding import SessionEncoder
from mtn_keras.serving.inputs import checked_inputs, in_chunks, unless_empty
from mtn_keras.serving.outputs import HISTORY_OUTPUTS, SUGGEST_OUTPUTS
from mtn_keras.serving.prefix import PrefixConstraint, constrained
from mtn_keras.serving.spelling import Spelling


class SuggestionService(tf.Module):
    """A trained model with its vocabulary, decoding settings and string signatures.

    Args:
        model: a trained `SuggestionModel`.
        vocab_tokens: the vocabulary, id order.
        decoding: a `DecodeConfig` (k suggestions, beam width, length normalisation,
            source, filters, threshold).
        ranking: a `Ranking` (query-log index and ranker) for `source="hybrid"`; without
            one, or with `source="beam"`, the suggestions are the beam's alone.
    """

    def __init__(self, model, vocab_tokens, decoding=DecodeConfig(), ranking=None):
        super().__init__()
        track_variables_only(self, "model", model)
        self.k, self.beam = decoding.k, max(decoding.beam, decoding.k)
        self.repeat_last = decoding.repeat_last
        self.exact_stop = decoding.exact_stop
        self.filters = decoding.filters
        # A plain callable, not a tf.function attribute: the SavedModel keeps the search once,
        # inside the signatures, rather than a second copy of its own.
        self.search = functools.partial(tf.function(self._search, jit_compile=decoding.xla))
        self.encoder = SessionEncoder(
            vocab_tokens, model.config.max_queries, model.config.max_query_tokens
        )
        self.n, self.max_queries = self.encoder.n, self.encoder.max_queries
        self.vocab_size = self.encoder.vocab_size
        self.pieces = self.encoder.tokenise.pieces
        # [V]: the WordPiece pieces that continue a word ("##s"); all False for words.
        self.continuing = tf.constant([t.startswith(SUFFIX) for t in vocab_tokens])
        self.typed = PrefixConstraint(self.encoder, self.continuing)
        phrases = blocked_phrases() if "blocked" in self.filters else []
        self.blocked_pattern = filters.blocked_pattern(phrases)
        self.banned_ids = banned_ids(vocab_tokens, phrases, self.pieces)
        self.history = HistoryLookup()
        self.pool = self.hybrid = None
        if ranking is not None and decoding.source == "hybrid":
            self.pool = CandidatePool(ranking.index, self.history, self.max_queries)
            shown = thresholds(ranking.threshold, ranking.history_threshold, decoding.threshold)
            self.hybrid = HybridRanker(
                self.pool, ranking.ranker, *shown, decoding.unrelated_history,
                decoding.unrelated_place,
            )  # fmt: skip
        self.spelling = Spelling(self.encoder, self.pool and self.pool.lookup.word_ids)
        self.alpha = decoding.length_alpha(ranked=self.hybrid is not None)
        # [1, layers, heads, 2, 2]: the sizes of the session attention, for empty batches.
        self.attention_shape = tuple(
            model.session_attention(tf.zeros([1, 2, self.n], tf.int32)).shape
        )

    def prepare(self, session):
        """The session's prepared inputs (see SessionEncoder.prepare)."""
        return self.encoder.prepare(session)

    def decode(self, session, prefix=None, history=None):
        """Suggestions for each session, completing `prefix` [B] when given, with the
        user's earlier queries `history` [B, H] (oldest first, "" padding) when given: the
        body of every suggestion signature."""
        kept = self.kept_history(session, history)
        inputs, beam, log, typed, attention = self.candidates(session, prefix, kept)
        batch = tf.shape(session)[0]
        vouched = tf.zeros([batch], tf.bool) if typed is None else typed["any"]
        check = self.check(inputs, typed, kept)
        if self.hybrid is None:
            scores, text, sources, copied = beam_only(
                beam, check, self.encoder.knows_session(inputs), self.k
            )
        else:
            scores, text, sources, copied = self.hybrid(
                inputs, beam, log, check, self.encoder.known_words(inputs), self.k, vouched
            )
        # A session with no query is answered only when typed words say what to complete.
        empty = ~tf.reduce_any(inputs["tokens"] != PAD, axis=[1, 2]) & ~vouched
        scores = tf.where(empty[:, None], float("-inf"), scores)
        found_any = scores > float("-inf")
        size = tf.shape(inputs["source"])[1]
        copied = tf.where(found_any[:, :, None], copied[:, :, -size * self.n :], 0.0)
        shown = tf.where(found_any, text, "")
        return {
            "suggestions": shown,
            "scores": scores,
            "sources": tf.where(found_any, sources, ""),
            "copy_attention": tf.reshape(copied, [batch, self.k, size, self.n]),
            "source_tokens": inputs["source"],
            "session_attention": attention["session"][:, :, :, -size:, -size:],
            "queries": inputs["queries"],
            "history": kept,
            "history_attention": history_weights(kept, inputs["queries"], shown, scores)
            if attention["history"] is None
            else attention["history"],
        }

    def candidates(self, session, prefix=None, history=None):
        """The prepared inputs, the beam's n-best after the typed `prefix`, (with a ranking)
        the pool's candidates (CandidatePool.gather, with the `history`: HistoryLookup.kept)
        with the model's scores of them, what was typed (PrefixConstraint.read; None without
        a prefix) and the session attention of the model's encoder [B, layers, heads,
        max_queries, max_queries] with, when the model reads the history (its third
        level), its attention over the kept history [B, T] (else None). The candidates are each
        a dict of words [B, M, L], log_probs, lengths, unknown (words the model cannot
        write) and copied (copy weights), the beam's with its scores too."""
        session = self.spelling.corrected(self.encoder.normalise(session))
        inputs = self.encoder.prepare(session, prefix)
        typed = None if prefix is None else self.typed.read(prefix, inputs["typed"])
        if history is None:
            history = self.kept_history(session)
        log = self.pooled(inputs, typed, history)
        args, typed_tokens = self.search_inputs(inputs, typed, history, log)
        found = self.search(**args)
        beam = self.beam_candidates(found, inputs, typed_tokens)
        if log is not None:
            context = {"context": found["context"]}
            scored = candidate_log_probs(self.model, context, log["ids"], found["candidate_hidden"])
            log = {**log, **scored}
        attention = {"session": found["session_attention"], "history": None}
        if "history_attention" in found:  # the model's third level read the history
            read = found["history_attention"]
            attention["history"] = tf.pad(
                read, [[0, 0], [tf.shape(history)[1] - tf.shape(read)[1], 0]]
            )
        return inputs, beam, log, typed, attention

    def beam_candidates(self, found, inputs, typed_tokens):
        """The beam's n-best of a search (`found`) as candidates: words, scores, log_probs,
        lengths, unknown and copied; without `repeat_last`, the last query is none."""
        beam = {
            "words": self.encoder.to_words(found["ids"], inputs, typed_tokens),
            "copied": found["trace"],
            "unknown": tf.reduce_sum(tf.cast(found["ids"] == UNK, tf.int32), axis=-1),
            **{key: found[key] for key in ("scores", "log_probs", "lengths")},
        }
        if not self.repeat_last:  # the query just searched is no suggestion for the next one
            last = joined(beam["words"]) == joined(inputs["words"][:, -1:])
            for key in ("scores", "log_probs"):
                beam[key] = tf.where(last, float("-inf"), beam[key])
        return beam

    def pooled(self, inputs, typed, history):
        """The pool's candidates (CandidatePool.gather) after the prepared `inputs`, what was
        `typed` (PrefixConstraint.read, or None) and the kept `history`, with their `words`
        [B, C, n] and token `ids` [B, C, n] for the search to score, the `typed` characters
        and the `history` the ranker reads; None without a ranking."""
        if self.pool is None:
            return None
        batch = tf.shape(inputs["queries"])[0]
        chars = tf.fill([batch], "") if typed is None else self.typed.chars(typed)
        found = self.pool.gather(inputs["queries"], inputs["words"], history, chars)
        split = tf.strings.split(found["texts"])
        tokens = self.encoder.tokenise.of_words(split).to_tensor("", shape=[None, None, self.n])
        ids = self.encoder.word_ids(tf.reshape(tokens, [batch, -1]), inputs)
        return {
            **found,
            "words": split.to_tensor("", shape=[None, None, self.n]),
            "ids": tf.reshape(ids, [batch, -1, self.n]),
            "typed": chars,
            "history": history,
        }

    def kept_history(self, session, history=None):
        """The earlier queries the graph reads (HistoryLookup.kept), normalised and cut to
        the model's n words as the session's are (no entry, however long, slows a call);
        none without a `history` [B, H]."""
        if history is None:
            history = tf.zeros([tf.shape(session)[0], 0], tf.string)
        words = tf.strings.split(tf.reshape(self.encoder.normalise(history), [-1]))
        cut = tf.strings.reduce_join(words[:, : self.n], axis=-1, separator=" ")
        return self.history.kept(tf.reshape(cut, tf.shape(history)))

    def check(self, inputs, typed, history):
        """The filters for these sessions: (words [B, M, L], texts [B, M], vouched [B, M])
        -> keep [B, M]. Typed words (`typed`: PrefixConstraint.read, or None) vouch for
        every completion (`unrelated`) and let a completion return to an earlier query of
        the session (`session`); with the kept `history`, they say which words are known
        (`nonwords`, Spelling.all_known)."""
        any_typed = tf.zeros([tf.shape(history)[0]], tf.bool) if typed is None else typed["any"]

        def keep(words, texts, vouched):
            kept = filters.keep(
                words,
                texts,
                inputs["words"],
                self.blocked_pattern,
                self.filters,
                vouched | any_typed[:, None],
                filters.revisited(texts, inputs["queries"], any_typed)[0],
            )
            if "nonwords" in self.filters:
                kept &= self.spelling.all_known(words, inputs["words"], history, typed)
            return kept

        return keep

    def candidate_table(self, session, prefix, history):
        """Every candidate of the hybrid ranking with its features (see HybridRanker.table)
        after the typed `prefix` [B] ("" for none), with the user's earlier queries
        `history` [B, H], for fitting the ranker."""
        kept = self.kept_history(session, history)
        inputs, beam, log, typed, _ = self.candidates(session, prefix, kept)
        return self.hybrid.table(
            inputs, beam, log, self.check(inputs, typed, kept), self.encoder.known_words(inputs)
        )

    def search_inputs(self, inputs, typed, history, pooled=None):
        """The arguments of `search` (sessions front-padded to max_queries slots, so that
        one compiled XLA shape serves all lengths; the kept `history`'s tokens when the
        model reads it; the constraint of what was `typed`; the `pooled` candidates' ids)
        and the typed tokens (None without a prefix)."""
        size = tf.shape(inputs["source"])[1]
        pad = [[0, 0], [self.max_queries - size, 0], [0, 0]]
        args = {"tokens": tf.pad(inputs["tokens"], pad), "ext": tf.pad(inputs["ext"], pad)}
        if self.model.config.history_queries:
            args["history_tokens"] = self.history_tokens(history)
        tokens = None
        if typed is not None:
            tokens, allowed, args["allowed_at"] = self.typed.typed_words(typed, inputs)
            width = self.vocab_size + self.max_queries * self.n
            args["allowed"] = tf.pad(allowed, [[0, 0], [0, width - tf.shape(allowed)[1]]])
            args["forced"] = self.encoder.word_ids(tokens, inputs)
        if pooled is not None:
            args["candidates"] = pooled["ids"]
        return args, tokens

    def history_tokens(self, history):
        """The kept history [B, T] -> the token ids [B, H, n] of its latest H entries, H the
        model's `history_queries` (its third level): vocabulary ids and <unk>, as in
        training (nothing is copied from the history)."""
        kept = latest(history, self.model.config.history_queries)
        return self.encoder.token_ids(tf.strings.split(kept))[1]

    def _search(
        self,
        tokens,
        ext,
        allowed=None,
        allowed_at=None,
        forced=None,
        candidates=None,
        history_tokens=None,
    ):
        """The numeric core of `decode`, XLA-compiled unless switched off: the model's
        start (reading `history_tokens` when its third level does), the beam search (with
        the copy weights of each result as its trace) and the decoder states of the log's
        candidates (scored outside, see ranking/scoring.py)."""
        start = self.model.start(tokens, ext, history_tokens=history_tokens)
        attention = start["context"].pop("session_attention")  # read by nothing below
        read = start["context"].pop("history_attention", None)
        state = {"model": start}
        if allowed is not None:
            state["context"] = {"allowed": allowed, "allowed_at": allowed_at}
        found = beam_search(
            self.constrained_step,
            state,
            batch_size=tf.shape(tokens)[0],
            beam_size=self.beam,
            num_results=self.beam,
            max_length=self.n + 1,
            length_alpha=self.alpha,
            prefix=forced,
            trace=lambda s: s["model"]["copied"],
            exact_stop=self.exact_stop,
            banned_ids=self.banned_ids,
            no_repeat_words="repeats" in self.filters,
            continuing=self.continuing if self.pieces else None,
        )
        if candidates is not None:
            found["candidate_hidden"] = candidate_hidden(self.model, start, candidates)
            found["context"] = start["context"]
        if read is not None:
            found["history_attention"] = read
        return {**found, "session_attention": attention}

    def constrained_step(self, tokens, state, t):
        """The model's step, under the typed prefix's constraint when the state has one."""
        log_probs, model_state = self.model.step(tokens, state["model"], t)
        if "context" in state:
            log_probs = constrained(log_probs, state["context"], t)
        return log_probs, {**state, "model": model_state}

    def output_sizes(self, session):
        """The sizes that name the outputs' dimensions (see outputs.py)."""
        slots = tf.minimum(tf.shape(session)[1] + 1, self.max_queries)  # as `prepare` makes S'
        return {
            "batch": tf.shape(session)[0],
            "k": self.k,
            "slots": slots,
            "n": self.n,
            "layers": self.attention_shape[1],
            "heads": self.attention_shape[2],
            "history": self.history.size,
        }

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
    def suggest(self, session):
        # `complete` with empty prefixes answers exactly as a search without one (prefix.py):
        # one graph, one compilation, for both signatures.
        session, _ = checked_inputs(session)
        return self.complete(session, tf.fill([tf.shape(session)[0]], ""))

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None], tf.string, name="prefix"),
        ]
    )
    def complete(self, session, prefix):
        # `complete_with_history` with an empty history, which answers exactly as no history:
        # one graph and one compilation for every suggestion signature.
        session, prefix = checked_inputs(session, prefix)
        empty = tf.zeros([tf.shape(session)[0], 0], tf.string)
        return self.outputs(self.complete_with_history(session, prefix, empty), SUGGEST_OUTPUTS)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ]
    )
    def suggest_with_history(self, session, history):
        # An empty history answers as `suggest`: no history candidate, all its evidence 0.
        return self.complete_with_history(session, tf.fill([tf.shape(session)[0]], ""), history)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None], tf.string, name="prefix"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ]
    )
    def complete_with_history(self, session, prefix, history):
        session, prefix, history = checked_inputs(session, prefix, history)
        outputs, sizes = SUGGEST_OUTPUTS | HISTORY_OUTPUTS, self.output_sizes(session)
        return unless_empty(
            session,
            lambda: in_chunks(
                lambda *rows: self.outputs(self.decode(*rows), outputs),
                [session, prefix, history],
                outputs,
                sizes,
            ),
            outputs,
            sizes,
        )

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
    def session_attention(self, session):
        # The outputs of `suggest`'s own graph (the encoder runs there anyway): a client
        # that asks for suggestions has the attention already.
        out = self.suggest(session)
        return {"attention": out["session_attention"], "queries": out["queries"]}

    @staticmethod
    def outputs(found, names):
        """The outputs of `found` that a signature gives (outputs.SUGGEST_OUTPUTS and, with
        history, HISTORY_OUTPUTS)."""
        return {name: found[name] for name in names}


def history_weights(history, queries, shown, scores):
    """[B, T]: how much each kept history entry counted in the shown list: an entry the
    user typed that is shown, or one equal to a session query whose follower there is shown,
    weighs that suggestion's score; normalised to sum to one over the entries (all zeros
    when no shown suggestion came from the history)."""
    score = tf.where(scores > float("-inf"), scores, 0.0)[:, :, None]  # [B, k, 1]
    real = history != ""
    typed = (shown[:, :, None] == history[:, None, :]) & real[:, None, :]
    following = tf.pad(history[:, 1:], [[0, 0], [0, 1]])
    in_session = tf.reduce_any(history[:, :, None] == queries[:, None, :], axis=-1) & real
    led = (shown[:, :, None] == following[:, None, :]) & in_session[:, None, :]
    mass = tf.reduce_sum(tf.cast(typed | led, tf.float32) * score, axis=1)
    return tf.math.divide_no_nan(mass, tf.reduce_sum(mass, axis=-1, keepdims=True))


def banned_ids(vocab_tokens, phrases, pieces):
    """The ids the beam never writes: <pad>, <unk>, <bos>, and the blocked words of a word
    vocabulary. Under WordPiece a blocked word's id is also the first piece of innocent
    words ("dick" of "dickens"), so there the word filter alone drops blocked words."""
    ids = {word: i for i, word in enumerate(vocab_tokens)}
    blocked = set() if pieces else {ids[p] for p in phrases if p in ids}
    return sorted({PAD, UNK, BOS} | blocked)
