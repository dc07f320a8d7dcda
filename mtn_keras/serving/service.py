"""Raw session strings in, ranked suggestions out: the tf.Module whose signatures `suggest`,
`evaluate` and the exported SavedModel share, so all three give the same answers. Its graph
is steps.py's route, in named steps.

Everything here is core TensorFlow (string ops, lookup tables, the beam search), so the
SavedModel loads with plain TensorFlow. The numeric core (`SuggestionSteps.core`,
search_core.py) is XLA-compiled unless DecodeConfig.xla is off (for a TensorFlow Serving
without XLA).
Its tf.functions trace without AutoGraph: the graph's control flow is tf.cond, tf.while_loop
and tf.map_fn already, and converting the search's Python took most of a first trace.
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
    arguments are SuggestionSteps'. Its five tf.functions are the export's signatures.

    Example (the bundled export, its signatures called as TensorFlow Serving calls them):
        >>> import tensorflow as tf
        >>> from mtn_keras.serving.savedmodel import bundled_model
        >>> model = tf.saved_model.load(str(bundled_model()))
        >>> session = tf.constant([["cheap flights", "cheap flights to rome"]])
        >>> out = model.signatures["suggest"](session=session)
        >>> out["suggestions"].shape, out["queries"].numpy()[0].tolist()
        (TensorShape([1, 5]), [b'', b'cheap flights', b'cheap flights to rome'])
        >>> out = model.signatures["complete"](session=session, prefix=tf.constant(["hotel"]))
        >>> all(text.startswith(b"hotel") for text in out["suggestions"].numpy()[0])
        True
        >>> history = tf.constant([["rome hotels", "vatican tickets"]])
        >>> out = model.signatures["suggest_with_history"](session=session, history=history)
        >>> out["history"].shape[1], sorted(set(out) - set(SUGGEST_OUTPUTS))
        (200, ['history', 'history_attention'])
        >>> model.signatures["session_attention"](session=session)["attention"].shape
        TensorShape([1, 2, 4, 3, 3])
        >>> try:
        ...     model.signatures["suggest"](session=tf.constant(["cheap flights"]))
        ... except tf.errors.InvalidArgumentError as error:
        ...     print("session must be a string tensor [B, S]" in str(error))
        True
    """

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

    @tf.function(
        input_signature=[tf.TensorSpec([None, None], tf.string, name="session")], autograph=False
    )
    def suggest(self, session: tf.Tensor) -> dict[str, tf.Tensor]:
        """The k best next queries of each session.

        Args:
            session: [B, S] strings, each row a session's queries, oldest first; empty
                strings (before the first query, or anywhere) are no query.

        Returns:
            outputs.SUGGEST_OUTPUTS by name: `suggestions`, `scores` and `sources` [B, k]
            (best first; "" and -inf where fewer than k pass), the copy and session
            attention, `source_tokens` and `queries` (the session as read).

        Raises:
            tf.errors.InvalidArgumentError: `session` is not [B, S]; the message names it.
        """
        # `complete` with empty prefixes answers exactly as a search without one (prefix.py):
        # one graph, one compilation, for both signatures.
        session, _ = checked_inputs(session)
        return self.complete(session, tf.fill([tf.shape(session)[0]], ""))

    @tf.function(
        autograph=False,
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None], tf.string, name="prefix"),
        ],
    )
    def complete(self, session: tf.Tensor, prefix: tf.Tensor) -> dict[str, tf.Tensor]:
        """What each session's next query is, given the start of it typed so far.

        Args:
            session: [B, S] strings, as `suggest` takes them.
            prefix: [B] strings, what was typed of each next query; one without words
                answers as `suggest`.

        Returns:
            `suggest`'s outputs, each suggestion held to the prefix (prefix.py).

        Raises:
            tf.errors.InvalidArgumentError: `session` is not [B, S] or `prefix` not [B].
        """
        # `complete_with_history` with an empty history, which answers exactly as no history:
        # one graph and one compilation for every suggestion signature.
        session, prefix = checked_inputs(session, prefix)
        empty = tf.zeros([tf.shape(session)[0], 0], tf.string)
        found = self.complete_with_history(session, prefix, empty)
        return {name: found[name] for name in SUGGEST_OUTPUTS}

    @tf.function(
        autograph=False,
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ],
    )
    def suggest_with_history(self, session: tf.Tensor, history: tf.Tensor) -> dict[str, tf.Tensor]:
        """`suggest`, with each searcher's own earlier queries as the hierarchy's next level.

        Args:
            session: [B, S] strings, as `suggest` takes them.
            history: [B, H] strings, each searcher's earlier queries, oldest first; an
                empty one answers as `suggest`.

        Returns:
            `suggest`'s outputs and outputs.HISTORY_OUTPUTS: `history`, the queries kept
            (the latest, safe ones) and `history_attention`, the weight on each.

        Raises:
            tf.errors.InvalidArgumentError: `session` or `history` is not [B, ...].
        """
        # An empty history answers as `suggest`: no history candidate, all its evidence 0.
        return self.complete_with_history(session, tf.fill([tf.shape(session)[0]], ""), history)

    @tf.function(
        autograph=False,
        input_signature=[
            tf.TensorSpec([None, None], tf.string, name="session"),
            tf.TensorSpec([None], tf.string, name="prefix"),
            tf.TensorSpec([None, None], tf.string, name="history"),
        ],
    )
    def complete_with_history(
        self, session: tf.Tensor, prefix: tf.Tensor, history: tf.Tensor
    ) -> dict[str, tf.Tensor]:
        """`complete` with the searcher's history, as `suggest_with_history` reads it: the
        one graph every suggestion signature runs.

        Args:
            session: [B, S] strings; prefix: [B] strings; history: [B, H] strings.

        Returns:
            `suggest_with_history`'s outputs, each suggestion held to the prefix.

        Raises:
            tf.errors.InvalidArgumentError: an input of the wrong shape, named.
        """
        session, prefix, history = checked_inputs(session, prefix, history)
        outputs, sizes = SUGGEST_OUTPUTS | HISTORY_OUTPUTS, self.output_sizes(session)
        return unless_empty(
            session,
            lambda: in_chunks(self.decode, [session, prefix, history], outputs, sizes),
            outputs,
            sizes,
        )

    @tf.function(
        input_signature=[tf.TensorSpec([None, None], tf.string, name="session")], autograph=False
    )
    def session_attention(self, session: tf.Tensor) -> dict[str, tf.Tensor]:
        """The session encoder's attention between the session's queries.

        Args:
            session: [B, S] strings, as `suggest` takes them.

        Returns:
            `attention` [B, layers, heads, slots, slots] and `queries` [B, slots], the
            session as read (its first slot the empty start).

        Raises:
            tf.errors.InvalidArgumentError: `session` is not [B, S].
        """
        # The outputs of `suggest`'s own graph (the encoder runs there anyway): a client
        # that asks for suggestions has the attention already.
        out = self.suggest(session)
        return {"attention": out["session_attention"], "queries": out["queries"]}
