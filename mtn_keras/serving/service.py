"""Raw session strings in, ranked suggestions out: the tf.Module whose signatures `suggest`,
`evaluate` and the exported SavedModel share, so all three give the same answers. Its graph
is steps.py's route, in named steps.

Everything here is core TensorFlow (string ops, lookup tables, the beam search), so the
SavedModel loads with plain TensorFlow. The numeric core (`SuggestionSteps._search`) is
XLA-compiled unless DecodeConfig.xla is off (for a TensorFlow Serving without XLA).
Behaviour on odd input:
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

from __future__ import annotations

import tensorflow as tf

from mtn_keras.serving.inputs import checked_inputs, in_chunks, unless_empty
from mtn_keras.serving.outputs import HISTORY_OUTPUTS, SUGGEST_OUTPUTS
from mtn_keras.serving.steps import SuggestionSteps


class SuggestionService(SuggestionSteps):
    """A trained model with its vocabulary, decoding settings and string signatures; the
    arguments are SuggestionSteps'."""

    def output_sizes(self, session: tf.Tensor) -> dict[str, int | tf.Tensor]:
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
    def suggest(self, session: tf.Tensor) -> dict[str, tf.Tensor]:
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
    def complete(self, session: tf.Tensor, prefix: tf.Tensor) -> dict[str, tf.Tensor]:
        # `complete_with_history` with an empty history, which answers exactly as no history:
        # one graph and one compilation for every suggestion signature.
        session, prefix = checked_inputs(session, prefix)
        empty = tf.zeros([tf.shape(session)[0], 0], tf.string)
        found = self.complete_with_history(session, prefix, empty)
        return {name: found[name] for name in SUGGEST_OUTPUTS}

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ]
    )
    def suggest_with_history(self, session: tf.Tensor, history: tf.Tensor) -> dict[str, tf.Tensor]:
        # An empty history answers as `suggest`: no history candidate, all its evidence 0.
        return self.complete_with_history(session, tf.fill([tf.shape(session)[0]], ""), history)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None], tf.string, name="prefix"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ]
    )
    def complete_with_history(
        self, session: tf.Tensor, prefix: tf.Tensor, history: tf.Tensor
    ) -> dict[str, tf.Tensor]:
        session, prefix, history = checked_inputs(session, prefix, history)
        outputs, sizes = SUGGEST_OUTPUTS | HISTORY_OUTPUTS, self.output_sizes(session)
        return unless_empty(
            session,
            lambda: in_chunks(self.decode, [session, prefix, history], outputs, sizes),
            outputs,
            sizes,
        )

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
    def session_attention(self, session: tf.Tensor) -> dict[str, tf.Tensor]:
        # The outputs of `suggest`'s own graph (the encoder runs there anyway): a client
        # that asks for suggestions has the attention already.
        out = self.suggest(session)
        return {"attention": out["session_attention"], "queries": out["queries"]}
