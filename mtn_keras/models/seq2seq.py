"""The sequence-to-sequence peer: an LSTM encoder-decoder with Luong's global attention
(Luong et al. 2015; paper section 5.2) over the session's queries concatenated.

The encoder is a unidirectional LSTM over the session's S*n token slots, padding skipped
(masked steps carry the state over). Unidirectional keeps it causal at the query level: its
state at the end of query t has read queries 0..t only, so one pass serves every pair. The
decoder of pair t starts from a projection of that state and attends ("general" score
h_t^T W_a h_s) to the encoder outputs of queries 0..t; its output is Luong's attentional
state tanh(W_c [c_t; h_t]), d_model wide. No input feeding, so the decoder LSTM runs over a
whole target at once.
"""

from typing import Any

import keras
from keras import ops

from mtn_keras.base.config import ModelConfig
from mtn_keras.data.vocab import PAD
from mtn_keras.layers.hints import State, Tensor, Tensors
from mtn_keras.models.base import SuggestionModel, pair_mask


@keras.saving.register_keras_serializable(package="mtn_keras")
class Seq2Seq(SuggestionModel):
    """LSTM encoder-decoder with global attention, and the copy head.

    Encoder and decoder LSTMs are 2 * rnn_units wide (the paper's 512-d recurrent state).
    The copy head reads the encoder outputs projected to d_model.

    Args:
        config: a `ModelConfig` (or its dict); reads vocab_size, max_query_tokens,
            embed_dim, d_model, rnn_units, dropout, copy.
    """

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        c = self.config
        width = 2 * c.rnn_units
        self.embed_dropout = keras.layers.Dropout(c.dropout)
        self.encoder = keras.layers.LSTM(width, return_sequences=True, name="encoder")
        self.bridge = keras.layers.Dense(2 * width, activation="tanh", name="bridge")
        self.decoder = keras.layers.LSTM(width, return_sequences=True, name="decoder")
        self.attention_query = keras.layers.Dense(width, use_bias=False, name="attention_query")
        self.attention = keras.layers.Attention(name="attention")
        self.attentional = keras.layers.Dense(c.d_model, activation="tanh", name="attentional")
        self.output_dropout = keras.layers.Dropout(c.dropout)
        self.memory_projection = keras.layers.Dense(c.d_model, name="memory_projection")

    def encode(
        self, session_tokens: Tensor, training: bool = False
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Session (B, S, n) -> encoder outputs (B, S*n, u), their mask, and the encoder
        state at the end of each query (B, S, u)."""
        batch, size, n = (ops.shape(session_tokens)[i] for i in range(3))
        tokens = ops.reshape(session_tokens, (batch, size * n))
        token_mask = tokens != PAD
        x = self.embed_dropout(self.token_embedding(tokens), training=training)
        outputs = self.encoder(x, mask=token_mask, training=training)
        # At a masked slot the LSTM repeats its last output: a query's last slot holds the
        # state after its last real token (zeros before the first real query).
        width = 2 * self.config.rnn_units
        query_ends = ops.reshape(outputs, (batch, size, n, width))[:, :, -1]
        return outputs, token_mask, query_ends

    def attend(
        self, decoded: Tensor, encoded: Tensor, encoded_mask: Tensor, training: bool = False
    ) -> Tensor:
        """Luong attention of decoder outputs (N, T, u) over encoder outputs (N, L, u):
        the attentional states tanh(W_c [context; h]) (N, T, d_model)."""
        context = self.attention(
            [self.attention_query(decoded), encoded], mask=[None, encoded_mask]
        )
        attentional = self.attentional(ops.concatenate([context, decoded], axis=-1))
        return self.output_dropout(attentional, training=training)

    def initial_state(self, query_ends: Tensor) -> list[Tensor]:
        """Decoder LSTM state [h, c] from encoder states (N, u)."""
        return ops.split(self.bridge(query_ends), 2, axis=-1)

    def forward(self, inputs: Tensors, training: bool = False) -> tuple[Tensor, Tensor]:
        tokens, decoder_input = inputs["session_tokens"], inputs["decoder_input"]
        outputs, token_mask, query_ends = self.encode(tokens, training=training)
        batch, length, width = (ops.shape(outputs)[i] for i in range(3))
        n = ops.shape(tokens)[2]
        pairs, m = ops.shape(decoder_input)[1], ops.shape(decoder_input)[2]
        start = self.initial_state(ops.reshape(query_ends[:, :pairs], (batch * pairs, width)))
        y = self.token_embedding(ops.reshape(decoder_input, (batch * pairs, m)))
        y = self.decoder(
            self.embed_dropout(y, training=training), initial_state=start, training=training
        )
        # Pair t attends to the encoder outputs of queries 0..t: one copy of them per pair.
        encoded_mask = pair_mask(token_mask, n, pairs)
        encoded = ops.broadcast_to(outputs[:, None], (batch, pairs, length, width))
        hidden = self.attend(
            y,
            ops.reshape(encoded, (batch * pairs, length, width)),
            ops.reshape(encoded_mask, (batch * pairs, length)),
            training=training,
        )
        hidden = ops.reshape(hidden, (batch, pairs, m, self.config.d_model))
        return hidden, self.memory_projection(outputs)

    def encode_for_decoding(self, session_tokens: Tensor) -> State:
        outputs, token_mask, query_ends = self.encode(session_tokens)
        h, c = self.initial_state(query_ends[:, -1])
        return {
            "h": h,
            "c": c,
            "context": {
                "encoded": outputs,
                "encoded_mask": token_mask,
                "copy_memory": self.memory_projection(outputs),
            },
        }

    def decoder_step(self, tokens: Tensor, state: State, t: int | Tensor) -> tuple[Tensor, State]:
        y, (h, c) = self.decoder.cell(self.token_embedding(tokens), [state["h"], state["c"]])
        context = state["context"]
        hidden = self.attend(y[:, None], context["encoded"], context["encoded_mask"])
        return hidden[:, 0], {**state, "h": h, "c": c}
