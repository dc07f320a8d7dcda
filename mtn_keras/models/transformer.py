"""The standard encoder-decoder Transformer peer (paper section 5.2) over the session's
queries concatenated.

The encoder reads the session's S*n token slots query by query (padding masked). Instead of
a separator token, every slot adds a learned embedding of its query's position in the
session (a segment embedding) to its token and token-position embeddings, so the query
boundaries are known. A block-causal mask lets the slots of query j attend only to queries
0..j, so one pass serves every pair; the decoder of pair t cross-attends to the encoder
outputs of queries 0..t. The layers are MTN's: Q+S encoder layers and D decoder layers,
the same total as MTN (5+3 in the paper preset).
"""

from typing import Any

import keras
import keras_hub
from keras import ops

from mtn_keras.base.config import ModelConfig
from mtn_keras.data.vocab import PAD
from mtn_keras.layers.cached_decoder import start_decoder_cache
from mtn_keras.layers.hints import State, Tensor, Tensors
from mtn_keras.models.base import SuggestionModel, pair_mask
from mtn_keras.models.transformer_parts import TransformerParts


def block_causal_mask(token_mask: Tensor, n: int | Tensor) -> Tensor:
    """(B, S*n) bool -> (B, S*n, S*n): a slot of query j attends to the real slots of
    queries 0..j, and to itself (so that no row is empty)."""
    length = ops.shape(token_mask)[1]
    slot_query = ops.arange(length) // n
    earlier = slot_query[None, :] <= slot_query[:, None]
    keys = ops.logical_or(token_mask[:, None, :], ops.eye(length, dtype="bool")[None])
    return ops.logical_and(earlier[None], keys)


@keras.saving.register_keras_serializable(package="mtn_keras")
class Transformer(TransformerParts, SuggestionModel):
    """Encoder-decoder Transformer over the concatenated session, with the copy head.

    Args:
        config: a `ModelConfig` (or its dict); reads vocab_size, max_query_tokens,
            max_queries, embed_dim, d_model, ff_dim, num_heads, query_layers,
            session_layers (their sum is the encoder depth), decoder_layers, dropout, copy.
    """

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        c = self.config
        self.add_transformer_inputs()
        self.query_positions = keras.layers.Embedding(
            c.max_queries, c.d_model, name="query_positions"
        )
        self.embed_dropout = keras.layers.Dropout(c.dropout)
        self.encoder_layers = [
            keras_hub.layers.TransformerEncoder(
                c.ff_dim, c.num_heads, dropout=c.dropout, name=f"encoder_layer_{i}"
            )
            for i in range(c.query_layers + c.session_layers)
        ]
        self.decoder_layers = [
            keras_hub.layers.TransformerDecoder(
                c.ff_dim, c.num_heads, dropout=c.dropout, name=f"decoder_layer_{i}"
            )
            for i in range(c.decoder_layers)
        ]

    def encode(self, session_tokens: Tensor, training: bool = False) -> tuple[Tensor, Tensor]:
        """Session (B, S, n) -> encoder outputs (B, S*n, d) and their token mask (B, S*n)."""
        batch, size, n = (ops.shape(session_tokens)[i] for i in range(3))
        token_mask = session_tokens != PAD
        x = self.embed(self.token_positions, ops.reshape(session_tokens, (batch * size, n)))
        x = ops.reshape(x, (batch, size, n, self.config.d_model))
        # Query positions count real queries, so sessions padded at the front keep theirs.
        query_mask = ops.cast(ops.any(token_mask, axis=-1), "int32")
        positions = ops.clip(ops.cumsum(query_mask, axis=1) - 1, 0, self.config.max_queries - 1)
        x = x + ops.cast(self.query_positions(positions), x.dtype)[:, :, None, :]
        x = self.embed_dropout(
            ops.reshape(x, (batch, size * n, self.config.d_model)), training=training
        )
        token_mask = ops.reshape(token_mask, (batch, size * n))
        mask = block_causal_mask(token_mask, n)
        for layer in self.encoder_layers:
            x = layer(x, attention_mask=mask, training=training)
        return x, token_mask

    def forward(self, inputs: Tensors, training: bool = False) -> tuple[Tensor, Tensor]:
        tokens, decoder_input = inputs["session_tokens"], inputs["decoder_input"]
        codes, token_mask = self.encode(tokens, training=training)
        batch, length, d = (ops.shape(codes)[i] for i in range(3))
        n = ops.shape(tokens)[2]
        pairs, m = ops.shape(decoder_input)[1], ops.shape(decoder_input)[2]
        # Pair t reads the encoder outputs of queries 0..t: one copy of them per pair.
        memory_mask = pair_mask(token_mask, n, pairs)
        memory = ops.broadcast_to(codes[:, None], (batch, pairs, length, d))
        targets = ops.reshape(decoder_input, (batch * pairs, m))
        y = self.embed_dropout(self.embed(self.target_positions, targets), training=training)
        for layer in self.decoder_layers:
            y = layer(
                y,
                ops.reshape(memory, (batch * pairs, length, d)),
                decoder_padding_mask=targets != PAD,
                encoder_padding_mask=ops.reshape(memory_mask, (batch * pairs, length)),
                training=training,
            )
        return ops.reshape(y, (batch, pairs, m, d)), codes

    def encode_for_decoding(self, session_tokens: Tensor) -> State:
        codes, token_mask = self.encode(session_tokens)
        c = self.config
        state = start_decoder_cache(
            self.decoder_layers, codes, token_mask, c.max_query_tokens + 1, c.num_heads
        )
        state["context"]["copy_memory"] = codes
        return state
