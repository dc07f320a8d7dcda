"""The Multiresolution Transformer Network (Garg, Dhillon and Yu; paper section 4).

Query encoder (Transformer encoder per query) -> query projection -> query positions ->
K-1 masked session encoders, each added back to the token codes (add & norm) ->
Transformer decoder that, for query t+1, cross-attends to the enriched tokens of query t.
"""

import keras
import keras_hub
from keras import ops

from mtn_keras.data.vocab import PAD
from mtn_keras.layers import MaskedSessionEncoder, QueryProjection, SessionAddNorm
from mtn_keras.layers.cached_decoder import start_decoder_cache
from mtn_keras.models.base import SuggestionModel, TransformerParts


@keras.saving.register_keras_serializable(package="mtn_keras")
class MTN(TransformerParts, SuggestionModel):
    """K-level MTN with a Transformer decoder and (optionally) the copy head.

    Args:
        config: a `ModelConfig` (or its dict); reads vocab_size, max_query_tokens,
            max_queries, embed_dim, d_model, ff_dim, num_heads, query_layers,
            session_layers, decoder_layers, levels, dropout, copy.
    """

    def __init__(self, config, **kwargs):
        super().__init__(config, **kwargs)
        c = self.config
        self.add_transformer_inputs()
        self.embed_dropout = keras.layers.Dropout(c.dropout)
        self.query_encoder = [
            keras_hub.layers.TransformerEncoder(
                c.ff_dim, c.num_heads, dropout=c.dropout, name=f"query_layer_{i}"
            )
            for i in range(c.query_layers)
        ]
        self.query_projection = QueryProjection(name="query_projection")
        self.query_position = keras.layers.Embedding(
            c.max_queries, c.d_model, name="query_position"
        )
        self.session_encoders = [
            MaskedSessionEncoder(
                c.session_layers, c.ff_dim, c.num_heads, c.dropout, name=f"session_level_{k}"
            )
            for k in range(c.levels - 1)
        ]
        self.add_norms = [SessionAddNorm(name=f"add_norm_{k}") for k in range(c.levels - 1)]
        self.decoder_layers = [
            keras_hub.layers.TransformerDecoder(
                c.ff_dim, c.num_heads, dropout=c.dropout, name=f"decoder_layer_{i}"
            )
            for i in range(c.decoder_layers)
        ]

    def encode(self, session_tokens, training=False):
        """Session (B, S, n) -> enriched token codes (B, S, n, d), token mask (B, S, n),
        and the session attention weights, one (B, heads, S, S) per level and layer."""
        batch, size, n = (ops.shape(session_tokens)[i] for i in range(3))
        token_mask = session_tokens != PAD
        flat = ops.reshape(session_tokens, (batch * size, n))
        x = self.embed_dropout(self.embed(self.token_positions, flat), training=training)
        flat_mask = ops.reshape(token_mask, (batch * size, n))
        for layer in self.query_encoder:
            x = layer(x, padding_mask=flat_mask, training=training)
        codes = ops.reshape(x, (batch, size, n, self.config.d_model))
        query_mask = ops.any(token_mask, axis=-1)
        vectors = self.query_projection(codes, token_mask)
        # Positions count real queries, so sessions padded at the front keep theirs.
        positions = ops.maximum(ops.cumsum(ops.cast(query_mask, "int32"), axis=1) - 1, 0)
        positions = ops.minimum(positions, self.config.max_queries - 1)
        vectors = vectors + ops.cast(self.query_position(positions), vectors.dtype)
        weights = []
        for encoder, add_norm in zip(self.session_encoders, self.add_norms):
            vectors, level_weights = encoder(vectors, query_mask, training=training)
            codes = add_norm(codes, vectors)
            weights.extend(level_weights)
        return codes, token_mask, weights

    def forward(self, inputs, training=False):
        tokens, decoder_input = inputs["session_tokens"], inputs["decoder_input"]
        codes, token_mask, _ = self.encode(tokens, training=training)
        batch, size, n, d = (ops.shape(codes)[i] for i in range(4))
        pairs, m = ops.shape(decoder_input)[1], ops.shape(decoder_input)[2]
        memory = ops.reshape(codes[:, :pairs], (batch * pairs, n, d))
        memory_mask = ops.reshape(token_mask[:, :pairs], (batch * pairs, n))
        targets = ops.reshape(decoder_input, (batch * pairs, m))
        y = self.embed_dropout(self.embed(self.target_positions, targets), training=training)
        for layer in self.decoder_layers:
            y = layer(
                y,
                memory,
                decoder_padding_mask=targets != PAD,
                encoder_padding_mask=memory_mask,
                training=training,
            )
        hidden = ops.reshape(y, (batch, pairs, m, d))
        return hidden, ops.reshape(codes, (batch, size * n, d))

    def session_attention(self, session_tokens):
        """Session attention weights (B, levels*layers, heads, S, S)."""
        _, _, weights = self.encode(session_tokens)
        return ops.stack(weights, axis=1)

    def encode_for_decoding(self, session_tokens):
        codes, token_mask, weights = self.encode(session_tokens)
        batch, size, n, d = (ops.shape(codes)[i] for i in range(4))
        c = self.config
        state = start_decoder_cache(
            self.decoder_layers,
            codes[:, -1],
            token_mask[:, -1],
            c.max_query_tokens + 1,
            c.num_heads,
        )
        state["context"]["copy_memory"] = ops.reshape(codes, (batch, size * n, d))
        state["context"]["session_attention"] = ops.stack(weights, axis=1)
        return state
