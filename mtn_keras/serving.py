"""Raw session strings in, ranked suggestions out: the graph that `suggest`, `evaluate` and
the exported SavedModel share, so all three give the same answers.

Everything here is core TensorFlow (string ops, a static hash table, the beam search), so the
SavedModel loads with plain TensorFlow. The numeric core (`search`) is XLA-compiled unless
DecodeConfig.xla is off (for a TensorFlow Serving without XLA). Behaviour on odd input:
- queries are normalised like the data pipeline (lowercase, punctuation to spaces);
- empty queries ("" or only punctuation) are dropped wherever they stand; the rest keep
  their order and only the last `max_queries` are used (the longest session trained on);
- a query's tokens past `max_query_tokens` are cut off, and so are the characters of a word
  past 64 (or the longest vocabulary word), in the session and in a prefix alike;
- under a WordPiece vocabulary a word is spelt from pieces (serving_text.Tokeniser) and the
  suggestions' pieces are joined back into words;
- words outside the vocabulary (or that no piece spells) can be copied from the session and
  come out verbatim;
- a session with no query left gets k empty suggestions with score -inf;
- the filters of `ranking/filters.py` drop what a searcher never wants (session repeats,
  repeated or blocked words); with a ranking, fewer than k may pass its threshold;
- a batch of no sessions gets outputs of batch 0, without a search; a session that is not
  [B, S], or a prefix batch unlike the session's, raises InvalidArgumentError naming the
  input and the shape expected (serving_input);
- in `complete`, a last typed word without a space after it is unfinished: the suggestions
  complete it with a vocabulary or session word that starts with it (if there is none, the
  word is kept as typed).
"""

import tensorflow as tf

from mtn_keras.config import DecodeConfig
from mtn_keras.decoding import beam_search
from mtn_keras.data.vocab import BOS, PAD, UNK
from mtn_keras.ranking import filters
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.hybrid import HybridRanker, beam_only
from mtn_keras.ranking.scoring import candidate_hidden, candidate_log_probs
from mtn_keras.serving_input import SUGGEST_OUTPUTS, checked_inputs, unless_empty
from mtn_keras.data.wordpiece import SUFFIX
from mtn_keras.serving_text import MAX_WORD_CHARS, QueryNormaliser, Tokeniser, detokenised, joined

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
        self.model = model
        self.k, self.beam = decoding.k, max(decoding.beam, decoding.k)
        self.repeat_last = decoding.repeat_last
        self.exact_stop = decoding.exact_stop
        self.filters = decoding.filters
        self.search = tf.function(self._search, jit_compile=decoding.xla)
        self.n = model.config.max_query_tokens
        self.max_queries = model.config.max_queries
        self.vocab_size = len(vocab_tokens)
        self.tokens = tf.constant(list(vocab_tokens))
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(self.tokens, tf.range(self.vocab_size)), UNK
        )
        self.normalise = QueryNormaliser(max(MAX_WORD_CHARS, *map(len, vocab_tokens)))
        self.tokenise = Tokeniser(vocab_tokens, self.table)
        # [V]: the WordPiece pieces that continue a word ("##s"); all False for words.
        self.continuing = tf.constant([t.startswith(SUFFIX) for t in vocab_tokens])
        phrases = blocked_phrases() if "blocked" in self.filters else []
        self.blocked_pattern = filters.blocked_pattern(phrases)
        ids = {word: i for i, word in enumerate(vocab_tokens)}
        self.banned_ids = sorted({PAD, UNK, BOS} | {ids[p] for p in phrases if p in ids})
        self.hybrid = None
        if ranking is not None and decoding.source == "hybrid":
            threshold = ranking.threshold if decoding.threshold is None else decoding.threshold
            self.hybrid = HybridRanker(ranking, threshold)
        self.alpha = decoding.length_alpha(ranked=self.hybrid is not None)

    def prepare(self, session):
        """[B, S] strings -> right-aligned queries [B, S'], their words [B, S', n], tokens
        (`source`, the words or their pieces) [B, S', n], token ids and extended ids."""
        # A leading empty query makes S >= 1 for every input, [B, 0] included.
        queries = self.normalise(tf.concat([tf.fill([tf.shape(session)[0], 1], ""), session], axis=1))
        real = queries != ""
        # Move the real queries to the end, in order, so the last query is always at S'-1.
        order = tf.argsort(tf.cast(real, tf.int32), axis=1, stable=True)
        queries = tf.gather(queries, order, batch_dims=1)[:, -self.max_queries :]
        split = tf.strings.split(queries)
        words = split.to_tensor("", shape=[None, None, self.n])
        source = self.tokenise.of_words(split).to_tensor("", shape=[None, None, self.n])
        ids = tf.where(source == "", PAD, self.table.lookup(source))
        return {"queries": queries, "words": words, "source": source, "tokens": ids,
                "ext": self.extend(source, ids)}

    def extend(self, words, ids):
        """Extended ids: the j-th distinct out-of-vocabulary token of a session gets V + j."""
        batch = tf.shape(words)[0]
        flat = tf.reshape(words, [batch, -1])
        oov = tf.reshape((ids == UNK) & (words != ""), [batch, -1])
        same = (flat[:, :, None] == flat[:, None, :]) & oov[:, None, :] & oov[:, :, None]
        first = tf.argmax(tf.cast(same, tf.int32), axis=2, output_type=tf.int32)
        is_first = oov & (first == tf.range(tf.shape(flat)[1])[None])
        rank = tf.cumsum(tf.cast(is_first, tf.int32), axis=1) - 1
        ext = tf.where(oov, self.vocab_size + tf.gather(rank, first, batch_dims=1), 0)
        return tf.where(tf.reshape(oov, tf.shape(ids)), tf.reshape(ext, tf.shape(ids)), ids)

    def decode(self, session, prefix=None):
        """Suggestions for each session; the shared body of `suggest` and `complete`."""
        inputs, beam, log = self.candidates(session, prefix)
        typed = prefix is not None
        check = self.check(inputs, typed)
        if self.hybrid is None:
            scores, text, sources, copied = beam_only(beam, check, self.knows_session(inputs), self.k)
        else:
            scores, text, sources, copied = self.hybrid(
                inputs, beam, log, check, self.known_words(inputs), self.k, typed
            )
        empty = ~tf.reduce_any(inputs["tokens"] != PAD, axis=[1, 2])
        scores = tf.where(empty[:, None], float("-inf"), scores)
        found_any = scores > float("-inf")
        batch, size = tf.shape(session)[0], tf.shape(inputs["source"])[1]
        copied = tf.where(found_any[:, :, None], copied[:, :, -size * self.n :], 0.0)
        return {
            "suggestions": tf.where(found_any, text, ""),
            "scores": scores,
            "sources": tf.where(found_any, sources, ""),
            "copy_attention": tf.reshape(copied, [batch, self.k, size, self.n]),
            "source_tokens": inputs["source"],
        }

    def candidates(self, session, prefix=None):
        """The prepared inputs, the beam's n-best and (with a ranking) the log's candidates
        with the model's scores of them: each a dict of words [B, M, L], log_probs,
        lengths and copied (copy weights), the beam's with its scores too."""
        inputs = self.prepare(session)
        args, typed, log_texts = self.search_inputs(inputs, prefix)
        found = self.search(**args)
        beam = {"words": self.to_words(found["ids"], inputs, typed), "copied": found["trace"],
                **{key: found[key] for key in ("scores", "log_probs", "lengths")}}
        if not self.repeat_last:  # the query just searched is no suggestion for the next one
            last = joined(beam["words"]) == joined(inputs["words"][:, -1:])
            for key in ("scores", "log_probs"):
                beam[key] = tf.where(last, float("-inf"), beam[key])
        log = None
        if log_texts is not None:
            scored = candidate_log_probs(
                self.model, {"context": found["context"]}, args["candidates"], found["candidate_hidden"]
            )
            log = {"words": tf.strings.split(log_texts).to_tensor("", shape=[None, None, self.n]), **scored}
        return inputs, beam, log

    def check(self, inputs, typed=False):
        """The filters for these sessions: (words [B, M, L], texts [B, M], vouched [B, M])
        -> keep [B, M]. What the user typed vouches for every completion (`unrelated`)."""
        return lambda words, texts, vouched: filters.keep(
            words, texts, inputs["words"], self.blocked_pattern, self.filters, vouched | typed
        )

    @staticmethod
    def knows_session(inputs):
        """[B, 1]: the vocabulary holds a word of the session (the beam's witness for
        suggestions that share no word with it, without a ranking)."""
        tokens = inputs["tokens"]
        return tf.reduce_any((tokens != PAD) & (tokens != UNK), axis=[1, 2])[:, None]

    def candidate_table(self, session):
        """Every candidate of the hybrid ranking with its features (see HybridRanker.table),
        for fitting the ranker."""
        inputs, beam, log = self.candidates(session)
        return self.hybrid.table(inputs, beam, log, self.check(inputs), self.known_words(inputs))

    def search_inputs(self, inputs, prefix):
        """The arguments of `search` (sessions front-padded to max_queries slots, so that
        one compiled XLA shape serves all lengths; the prefix constraint; the log's
        candidates as ids), the typed words and the log's candidate texts."""
        size = tf.shape(inputs["source"])[1]
        pad = [[0, 0], [self.max_queries - size, 0], [0, 0]]
        args = {"tokens": tf.pad(inputs["tokens"], pad), "ext": tf.pad(inputs["ext"], pad)}
        typed = log_texts = None
        if prefix is not None:
            typed, allowed, args["allowed_at"] = self.typed_words(prefix, inputs)
            width = self.vocab_size + self.max_queries * self.n
            args["allowed"] = tf.pad(allowed, [[0, 0], [0, width - tf.shape(allowed)[1]]])
            args["forced"] = self.word_ids(typed, inputs)
        if self.hybrid is not None:
            log_texts = self.hybrid.lookup.candidates(inputs["queries"])
            if prefix is not None:
                log_texts = tf.where(self.starts_with_typed(log_texts, prefix), log_texts, "")
            log_tokens = self.tokenise(log_texts).to_tensor("", shape=[None, None, self.n])
            ids = self.word_ids(tf.reshape(log_tokens, [tf.shape(log_tokens)[0], -1]), inputs)
            args["candidates"] = tf.reshape(ids, [tf.shape(log_tokens)[0], -1, self.n])
        return args, typed, log_texts

    def known_words(self, inputs):
        """[B]: the share of the last query's tokens in the vocabulary."""
        last = inputs["source"][:, -1] != ""
        known = last & (inputs["tokens"][:, -1] != UNK)
        return tf.math.divide_no_nan(
            tf.reduce_sum(tf.cast(known, tf.float32), -1), tf.reduce_sum(tf.cast(last, tf.float32), -1)
        )

    def _search(self, tokens, ext, allowed=None, allowed_at=None, forced=None, candidates=None):
        """The numeric core of `decode`, XLA-compiled unless switched off: the model's
        start, the beam search (with the copy weights of each result as its trace) and the
        decoder states of the log's candidates (scored outside, see ranking/scoring.py)."""
        start = self.model.start(tokens, ext)
        state = {"model": start}
        if allowed is not None:
            state["context"] = {"allowed": allowed, "allowed_at": allowed_at}
        found = beam_search(
            self.constrained_step, state, batch_size=tf.shape(tokens)[0], beam_size=self.beam,
            num_results=self.beam, max_length=self.n + 1, length_alpha=self.alpha,
            prefix=forced, trace=lambda s: s["model"]["copied"], exact_stop=self.exact_stop,
            banned_ids=self.banned_ids, no_repeat_words="repeats" in self.filters,
            continuing=self.continuing if self.tokenise.pieces else None,
        )
        if candidates is not None:
            found["candidate_hidden"] = candidate_hidden(self.model, start, candidates)
            found["context"] = start["context"]
        return found

    def constrained_step(self, tokens, state, t):
        """The model's step; at position `allowed_at` only the `allowed` ids (the words
        that complete a partly typed word) may follow, when the state has them."""
        log_probs, model_state = self.model.step(tokens, state["model"], t)
        if "context" not in state:
            return log_probs, {"model": model_state}
        context = state["context"]
        block = (context["allowed_at"] == t)[:, None] & ~context["allowed"]
        return tf.where(block, float("-inf"), log_probs), {**state, "model": model_state}

    def typed_words(self, prefix, inputs):
        """What the user typed of the next query -> (tokens to force [B, n], allowed [B, V_ext],
        allowed_at [B]). A last word not followed by a space is taken as unfinished: it is
        completed by the vocabulary or session tokens that start with it (a word's first
        piece, under WordPiece), when there are any. Under WordPiece a finished last word
        is not continued by pieces, and an unfinished one that nothing completes may be."""
        words = tf.strings.split(self.normalise(prefix)).to_tensor("", shape=[None, self.n])
        batch = tf.shape(words)[0]
        count = tf.reduce_sum(tf.cast(words != "", tf.int32), axis=1)
        open_word = (count > 0) & self.normalise.ends_open(prefix)
        last = tf.gather(words, tf.maximum(count - 1, 0), batch_dims=1)
        partial = tf.where(open_word, last, "")
        vocab = tf.broadcast_to(self.tokens[None, :], [batch, self.vocab_size])
        sources = tf.reshape(inputs["source"], [batch, -1])
        allowed = tf.concat([self.starts_with(vocab, partial), self.copyable(sources, partial, inputs)], axis=1)
        completes = open_word & tf.reduce_any(allowed, axis=1)
        finished = tf.where((tf.range(self.n)[None, :] == count[:, None] - 1) & completes[:, None], "", words)
        typed = self.tokenise(joined(finished)).to_tensor("", shape=[None, self.n])
        typed_count = tf.reduce_sum(tf.cast(typed != "", tf.int32), axis=1)
        at = tf.where(completes, typed_count, -1)
        if self.tokenise.pieces:
            ends_word = (count > 0) & ~open_word
            copied = tf.ones([tf.shape(allowed)[1] - self.vocab_size], tf.bool)
            starts = tf.concat([~self.continuing, copied], axis=0)
            allowed = tf.where(ends_word[:, None], starts[None, :], allowed)
            at = tf.where(ends_word, typed_count, at)
        return typed, allowed, at

    @staticmethod
    def starts_with(words, partial):
        """[B, M] words that start with the row's `partial` [B] (never for "")."""
        size = tf.strings.length(partial)[:, None]
        head = tf.strings.substr(words, tf.zeros_like(words, tf.int32), tf.broadcast_to(size, tf.shape(words)))
        return (head == partial[:, None]) & (size > 0) & (tf.strings.length(words) > size)

    def copyable(self, sources, partial, inputs):
        """[B, S*n]: extended id V + j is allowed when its source word starts with `partial`."""
        ext = tf.reshape(inputs["ext"], tf.shape(sources)) - self.vocab_size
        match = self.starts_with(sources, partial) & (ext >= 0)
        slots = tf.one_hot(tf.where(match, ext, -1), tf.shape(sources)[1], on_value=True, off_value=False)
        return tf.reduce_any(slots, axis=1)

    def word_ids(self, words, inputs):
        """Tokens [B, X] -> ids: vocabulary ids, a session's copyable token's extended id,
        else <unk> (printed back as the typed word); 0 for ""."""
        ids = tf.where(words == "", PAD, self.table.lookup(words))
        flat_words = tf.reshape(inputs["source"], [tf.shape(words)[0], -1])
        flat_ext = tf.reshape(inputs["ext"], [tf.shape(words)[0], -1])
        match = words[:, :, None] == flat_words[:, None, :]
        source = tf.gather(flat_ext, tf.argmax(tf.cast(match, tf.int32), axis=2), batch_dims=1)
        copyable = (ids == UNK) & tf.reduce_any(match, axis=2)
        return tf.where(copyable, source, ids)

    def to_words(self, ids, inputs, typed):
        """Ids [B, k, L] -> words [B, k, L]: vocabulary tokens, copied words, typed prefix
        words; under WordPiece, the pieces joined into words."""
        tokens = self.to_tokens(ids, inputs, typed)
        if not self.tokenise.pieces:
            return tokens
        words = tf.strings.split(detokenised(tokens)).to_tensor("")
        return tf.pad(words, [[0, 0], [0, 0], [0, tf.shape(ids)[2] - tf.shape(words)[2]]])

    def to_tokens(self, ids, inputs, typed):
        """Ids [B, k, L] -> tokens: vocabulary tokens, copied words, typed prefix tokens."""
        batch = tf.shape(ids)[0]
        vocab_words = tf.gather(self.tokens, tf.minimum(ids, self.vocab_size - 1))
        flat_ext = tf.reshape(inputs["ext"], [batch, 1, 1, -1])
        flat_words = tf.reshape(inputs["source"], [batch, -1])
        position = tf.argmax(tf.cast(ids[..., None] == flat_ext, tf.int32), axis=-1)
        copied = tf.gather(flat_words, tf.reshape(position, [batch, -1]), batch_dims=1)
        copied = tf.reshape(copied, tf.shape(ids))
        words = tf.where(ids >= self.vocab_size, copied, vocab_words)
        if typed is not None:
            length = tf.shape(ids)[2]
            typed = tf.pad(typed, [[0, 0], [0, tf.maximum(length - self.n, 0)]])[:, :length]
            typed = tf.broadcast_to(typed[:, None, :], tf.shape(ids))
            words = tf.where((ids == UNK) & (typed != ""), typed, words)
        return tf.where(ids == PAD, "", words)

    def starts_with_typed(self, texts, prefix):
        """[B, C]: the candidate queries that begin with what was typed (its finished words
        whole, an unfinished last word as the start of a word)."""
        typed = self.normalise(prefix)
        typed = tf.where(~self.normalise.ends_open(prefix) | (typed == ""), typed, typed + " ")[:, None]
        size = tf.broadcast_to(tf.strings.length(typed), tf.shape(texts))
        head = tf.strings.substr(texts + " ", tf.zeros_like(size), size)
        return head == typed

    def output_sizes(self, session):
        """The sizes that name the outputs' dimensions (see serving_input.SUGGEST_OUTPUTS)."""
        slots = tf.minimum(tf.shape(session)[1] + 1, self.max_queries)  # as `prepare` makes S'
        return {"batch": tf.shape(session)[0], "k": self.k, "slots": slots, "n": self.n}

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
    def suggest(self, session):
        session, _ = checked_inputs(session)
        return unless_empty(session, lambda: self.decode(session), SUGGEST_OUTPUTS,
                            self.output_sizes(session))

    @tf.function(input_signature=[
        tf.TensorSpec([None, None], tf.string, name="session"),
        tf.TensorSpec([None], tf.string, name="prefix"),
    ])
    def complete(self, session, prefix):
        session, prefix = checked_inputs(session, prefix)
        return unless_empty(session, lambda: self.decode(session, prefix), SUGGEST_OUTPUTS,
                            self.output_sizes(session))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
    def session_attention(self, session):
        session, _ = checked_inputs(session)
        inputs = self.prepare(session)
        return {"attention": self.model.session_attention(inputs["tokens"]),
                "queries": inputs["queries"]}
