"""Raw session strings in, ranked suggestions out: the graph that `suggest`, `evaluate` and
the exported SavedModel share, so all three give the same answers.

Everything here is core TensorFlow (string ops, a static hash table, the beam search), so the
SavedModel loads with plain TensorFlow. The numeric core (`search`) is XLA-compiled unless
DecodeConfig.xla is off (for a TensorFlow Serving without XLA). Behaviour on odd input:
- queries are normalised like the data pipeline (lowercase, punctuation to spaces);
- empty queries ("" or only punctuation) are dropped wherever they stand; the rest keep
  their order and only the last `max_queries` are used (the longest session trained on);
- a query's words past `max_query_tokens` are cut off, and so are the characters of a word
  past 64 (or the longest vocabulary word), in the session and in a prefix alike;
- words outside the vocabulary can be copied from the session and come out verbatim;
- a session with no query left gets k empty suggestions with score -inf;
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
from mtn_keras.models.base import PAD, UNK
from mtn_keras.serving_input import SUGGEST_OUTPUTS, checked_inputs, unless_empty
from mtn_keras.serving_text import MAX_WORD_CHARS, QueryNormaliser


def single_spaced(text):
    """Runs of spaces to one, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))


def joined(words):
    """Words [..., L] -> the strings they make, single-spaced."""
    return single_spaced(tf.strings.reduce_join(words, axis=-1, separator=" "))


class SuggestionService(tf.Module):
    """A trained model with its vocabulary, decoding settings and string signatures.

    Args:
        model: a trained `SuggestionModel`.
        vocab_tokens: the vocabulary, id order.
        decoding: a `DecodeConfig` (k suggestions, beam width, length normalisation).
    """

    def __init__(self, model, vocab_tokens, decoding=DecodeConfig()):
        super().__init__()
        self.model = model
        self.k, self.beam, self.alpha = decoding.k, max(decoding.beam, decoding.k), decoding.alpha
        self.repeat_last = decoding.repeat_last
        self.exact_stop = decoding.exact_stop
        self.search = tf.function(self._search, jit_compile=decoding.xla)
        self.n = model.config.max_query_tokens
        self.max_queries = model.config.max_queries
        self.vocab_size = len(vocab_tokens)
        self.tokens = tf.constant(list(vocab_tokens))
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(self.tokens, tf.range(self.vocab_size)), UNK
        )
        self.normalise = QueryNormaliser(max(MAX_WORD_CHARS, *map(len, vocab_tokens)))

    def prepare(self, session):
        """[B, S] strings -> right-aligned words [B, S', n], token ids and extended ids."""
        # A leading empty query makes S >= 1 for every input, [B, 0] included.
        queries = self.normalise(tf.concat([tf.fill([tf.shape(session)[0], 1], ""), session], axis=1))
        real = queries != ""
        # Move the real queries to the end, in order, so the last query is always at S'-1.
        order = tf.argsort(tf.cast(real, tf.int32), axis=1, stable=True)
        queries = tf.gather(queries, order, batch_dims=1)[:, -self.max_queries :]
        words = tf.strings.split(queries).to_tensor("", shape=[None, None, self.n])
        ids = tf.where(words == "", PAD, self.table.lookup(words))
        return {"queries": queries, "words": words, "tokens": ids, "ext": self.extend(words, ids)}

    def extend(self, words, ids):
        """Extended ids: the j-th distinct out-of-vocabulary word of a session gets V + j."""
        batch, size = tf.shape(words)[0], tf.shape(words)[1]
        flat = tf.reshape(words, [batch, -1])
        oov = tf.reshape((ids == UNK) & (words != ""), [batch, -1])
        same = (flat[:, :, None] == flat[:, None, :]) & oov[:, None, :] & oov[:, :, None]
        first = tf.argmax(tf.cast(same, tf.int32), axis=2, output_type=tf.int32)
        is_first = oov & (first == tf.range(tf.shape(flat)[1])[None])
        rank = tf.cumsum(tf.cast(is_first, tf.int32), axis=1) - 1
        ext = tf.where(oov, self.vocab_size + tf.gather(rank, first, batch_dims=1), 0)
        return tf.where(tf.reshape(oov, tf.shape(ids)), tf.reshape(ext, tf.shape(ids)), ids)

    def decode(self, session, prefix=None):
        """Beam search for each session; the shared body of `suggest` and `complete`."""
        inputs = self.prepare(session)
        batch, size = tf.shape(session)[0], tf.shape(inputs["words"])[1]
        # The search sees every session front-padded to max_queries slots, so that one
        # compiled (XLA) shape serves all session lengths.
        pad = [[0, 0], [self.max_queries - size, 0], [0, 0]]
        args = {"tokens": tf.pad(inputs["tokens"], pad), "ext": tf.pad(inputs["ext"], pad)}
        typed = None
        if prefix is not None:
            typed, allowed, args["allowed_at"] = self.typed_words(prefix, inputs)
            width = self.vocab_size + self.max_queries * self.n
            args["allowed"] = tf.pad(allowed, [[0, 0], [0, width - tf.shape(allowed)[1]]])
            args["forced"] = self.prefix_ids(typed, inputs)
        found = self.search(**args)
        scores = found["scores"]
        text = joined(self.to_words(found["ids"], inputs, typed))
        if not self.repeat_last:  # the query just searched is no suggestion for the next one
            scores = tf.where(text == joined(inputs["words"][:, -1:]), float("-inf"), scores)
        scores, order = tf.math.top_k(scores, self.k)
        text = tf.gather(text, order, batch_dims=1)
        empty = ~tf.reduce_any(inputs["tokens"] != PAD, axis=[1, 2])
        scores = tf.where(empty[:, None], float("-inf"), scores)
        text = tf.where(scores > float("-inf"), text, "")
        copied = tf.gather(found["trace"], order, batch_dims=1)[:, :, -size * self.n :]
        copied = tf.where((scores > float("-inf"))[:, :, None], copied, 0.0)
        return {
            "suggestions": text,
            "scores": scores,
            "copy_attention": tf.reshape(copied, [batch, self.k, size, self.n]),
            "source_tokens": inputs["words"],
        }

    def _search(self, tokens, ext, allowed=None, allowed_at=None, forced=None):
        """The numeric core of `decode`, XLA-compiled unless switched off: the model's
        start and the beam search, with the copy weights of each result as its trace."""
        state = {"model": self.model.start(tokens, ext)}
        if allowed is not None:
            state["context"] = {"allowed": allowed, "allowed_at": allowed_at}
        return beam_search(
            self.constrained_step, state, batch_size=tf.shape(tokens)[0], beam_size=self.beam,
            num_results=self.k + (0 if self.repeat_last else 1), max_length=self.n + 1,
            length_alpha=self.alpha, prefix=forced, trace=lambda s: s["model"]["copied"],
            exact_stop=self.exact_stop,
        )

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
        """What the user typed of the next query -> (words to force [B, n], allowed [B, V_ext],
        allowed_at [B]). A last word not followed by a space is taken as unfinished: it is
        completed by the vocabulary or session words that start with it, when there are any."""
        words = tf.strings.split(self.normalise(prefix)).to_tensor("", shape=[None, self.n])
        batch = tf.shape(words)[0]
        count = tf.reduce_sum(tf.cast(words != "", tf.int32), axis=1)
        open_word = (count > 0) & self.normalise.ends_open(prefix)
        last = tf.gather(words, tf.maximum(count - 1, 0), batch_dims=1)
        partial = tf.where(open_word, last, "")
        vocab = tf.broadcast_to(self.tokens[None, :], [batch, self.vocab_size])
        sources = tf.reshape(inputs["words"], [batch, -1])
        allowed = tf.concat([self.starts_with(vocab, partial), self.copyable(sources, partial, inputs)], axis=1)
        completes = open_word & tf.reduce_any(allowed, axis=1)
        at = tf.where(completes, count - 1, -1)
        typed = tf.where(tf.range(self.n)[None, :] == at[:, None], "", words)
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

    def prefix_ids(self, typed, inputs):
        """Typed words -> forced ids: vocabulary ids, a session's copyable word's extended
        id, else <unk> (printed back as the typed word)."""
        ids = tf.where(typed == "", PAD, self.table.lookup(typed))
        flat_words = tf.reshape(inputs["words"], [tf.shape(typed)[0], -1])
        flat_ext = tf.reshape(inputs["ext"], [tf.shape(typed)[0], -1])
        match = typed[:, :, None] == flat_words[:, None, :]
        source = tf.gather(flat_ext, tf.argmax(tf.cast(match, tf.int32), axis=2), batch_dims=1)
        copyable = (ids == UNK) & tf.reduce_any(match, axis=2)
        return tf.where(copyable, source, ids)

    def to_words(self, ids, inputs, typed):
        """Ids [B, k, L] -> words: vocabulary tokens, copied words, typed prefix words."""
        batch = tf.shape(ids)[0]
        vocab_words = tf.gather(self.tokens, tf.minimum(ids, self.vocab_size - 1))
        flat_ext = tf.reshape(inputs["ext"], [batch, 1, 1, -1])
        flat_words = tf.reshape(inputs["words"], [batch, -1])
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
