"""The hierarchical recurrent encoder-decoder peer, H-LSTM (Sordoni et al. 2015; paper
section 5.2), with LSTMs as the paper runs it.

A bidirectional LSTM encodes each query on its own (padding masked) into one vector; a
session LSTM runs over the query vectors, so its state at query t has seen queries 0..t
only; an LSTM decoder starts from a projection of that state and writes query t+1.
"""

from typing import Any

import keras
from keras import ops

from mtn_keras.base.config import ModelConfig
from mtn_keras.data.vocab import PAD
from mtn_keras.layers.hints import State, Tensor, Tensors
from mtn_keras.models.base import SuggestionModel


@keras.saving.register_keras_serializable(package="mtn_keras")
class HRED(SuggestionModel):
    """H-LSTM: bi-LSTM query encoder, session LSTM, LSTM decoder, and the copy head.

    The query vector is the two directions' final states concatenated (`query_pooling`
    "last"); M-NSRF max-pools the per-token outputs instead. The session and decoder LSTMs
    are 2 * rnn_units wide, as wide as the query vector (the paper: 256 per direction, 512
    in all). The decoder outputs are projected to d_model for the vocabulary and copy heads;
    the copy head reads the query encoder's per-token outputs projected to d_model.

    Args:
        config: a `ModelConfig` (or its dict); reads vocab_size, max_query_tokens,
            embed_dim, d_model, rnn_units, dropout, copy.
    """

    query_pooling = "last"

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        c = self.config
        width = 2 * c.rnn_units
        self.embed_dropout = keras.layers.Dropout(c.dropout)
        self.query_encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(c.rnn_units, return_sequences=True, return_state=True),
            name="query_encoder",
        )
        self.session_encoder = keras.layers.LSTM(
            width, return_sequences=True, name="session_encoder"
        )
        self.decoder_init = keras.layers.Dense(2 * width, activation="tanh", name="decoder_init")
        self.decoder = keras.layers.LSTM(width, return_sequences=True, name="decoder")
        self.output_dropout = keras.layers.Dropout(c.dropout)
        self.decoder_output = keras.layers.Dense(c.d_model, name="decoder_output")
        self.memory_projection = keras.layers.Dense(c.d_model, name="memory_projection")

    def encode(self, session_tokens: Tensor, training: bool = False) -> tuple[Tensor, Tensor]:
        """Session (B, S, n) -> session states (B, S, 2u) and token codes (B, S*n, d)."""
        batch, size, n = (ops.shape(session_tokens)[i] for i in range(3))
        token_mask = session_tokens != PAD
        flat = ops.reshape(session_tokens, (batch * size, n))
        flat_mask = ops.reshape(token_mask, (batch * size, n))
        x = self.embed_dropout(self.token_embedding(flat), training=training)
        outputs, forward_h, _, backward_h, _ = self.query_encoder(
            x, mask=flat_mask, training=training
        )
        if self.query_pooling == "max":
            # LSTM outputs lie in (-1, 1): -1 at padding leaves the maximum of real tokens.
            vectors = ops.max(ops.where(flat_mask[:, :, None], outputs, -1.0), axis=1)
        else:
            vectors = ops.concatenate([forward_h, backward_h], axis=-1)
        width = 2 * self.config.rnn_units
        vectors = ops.reshape(vectors, (batch, size, width))
        # All-zero queries (sessions padded at the front) are skipped: the state carries over.
        states = self.session_encoder(vectors, mask=ops.any(token_mask, axis=-1), training=training)
        codes = self.memory_projection(ops.reshape(outputs, (batch, size * n, width)))
        return states, codes

    def initial_state(self, session_states: Tensor) -> list[Tensor]:
        """Decoder LSTM state [h, c] from session states (N, 2u)."""
        return ops.split(self.decoder_init(session_states), 2, axis=-1)

    def forward(self, inputs: Tensors, training: bool = False) -> tuple[Tensor, Tensor]:
        tokens, decoder_input = inputs["session_tokens"], inputs["decoder_input"]
        states, codes = self.encode(tokens, training=training)
        batch, pairs, m = (ops.shape(decoder_input)[i] for i in range(3))
        width = 2 * self.config.rnn_units
        start = self.initial_state(ops.reshape(states[:, :pairs], (batch * pairs, width)))
        y = self.token_embedding(ops.reshape(decoder_input, (batch * pairs, m)))
        y = self.embed_dropout(y, training=training)
        y = self.decoder(y, initial_state=start, training=training)
        hidden = self.decoder_output(self.output_dropout(y, training=training))
        return ops.reshape(hidden, (batch, pairs, m, self.config.d_model)), codes

    def encode_for_decoding(self, session_tokens: Tensor) -> State:
        states, codes = self.encode(session_tokens)
        h, c = self.initial_state(states[:, -1])
        return {"h": h, "c": c, "context": {"copy_memory": codes}}

    def decoder_step(self, tokens: Tensor, state: State, t: int | Tensor) -> tuple[Tensor, State]:
        y, (h, c) = self.decoder.cell(self.token_embedding(tokens), [state["h"], state["c"]])
        return self.decoder_output(y), {**state, "h": h, "c": c}
