"""The Multiresolution Transformer Network (Garg, Dhillon and Yu; paper section 4).

Query encoder (Transformer encoder per query) -> query projection -> query positions ->
K-1 masked session encoders, each added back to the token codes (add & norm); with
`history_queries`, the last level's query vectors first read the user's earlier queries
(a third level, layers/history_reader.py) -> Transformer decoder that, for query t+1,
cross-attends to the enriched tokens of query t.
"""

from typing import Any

import keras
import keras_hub
from keras import ops

from mtn_keras.base.config import ModelConfig
from mtn_keras.data.vocab import PAD
from mtn_keras.layers import HistoryReader, MaskedSessionEncoder, QueryProjection, SessionAddNorm
from mtn_keras.layers.cached_decoder import start_decoder_cache
from mtn_keras.layers.hints import State, Tensor, Tensors
from mtn_keras.layers.history_reader import last_query_weights
from mtn_keras.models.base import SuggestionModel
from mtn_keras.models.transformer_parts import TransformerParts


@keras.saving.register_keras_serializable(package="mtn_keras")
class MTN(TransformerParts, SuggestionModel):
    """K-level MTN with a Transformer decoder and (optionally) the copy head.

    Args:
        config: a `ModelConfig` (or its dict); reads vocab_size, max_query_tokens,
            max_queries, embed_dim, d_model, ff_dim, num_heads, query_layers,
            session_layers, decoder_layers, levels, dropout, copy, history_queries,
            history_encoder.
    """

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
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
        if c.history_queries:
            if c.levels < 2:
                raise ValueError("history_queries needs levels of 2 or more (a session level)")
            self.history_position = keras.layers.Embedding(
                c.history_queries, c.d_model, name="history_position"
            )
            self.history_reader = HistoryReader(
                c.d_model, c.num_heads, c.dropout, name="history_reader"
            )
        self.decoder_layers = [
            keras_hub.layers.TransformerDecoder(
                c.ff_dim, c.num_heads, dropout=c.dropout, name=f"decoder_layer_{i}"
            )
            for i in range(c.decoder_layers)
        ]

    def encode(
        self, session_tokens: Tensor, training: bool = False, history_tokens: Tensor | None = None
    ) -> tuple[Tensor, Tensor, list[Tensor], Tensor | None]:
        """Session (B, S, n) -> enriched token codes (B, S, n, d), token mask (B, S, n),
        the session attention weights, one (B, heads, S, S) per level and layer, and the
        history attention (B, heads, S, H) when the model reads `history_tokens` (B, H, n),
        else None: the last level's vectors read the history before their add & norm."""
        codes, token_mask = self.encode_queries(session_tokens, training)
        query_mask = ops.any(token_mask, axis=-1)
        vectors = self.query_projection(codes, token_mask)
        # Positions count real queries, so sessions padded at the front keep theirs.
        positions = ops.maximum(ops.cumsum(ops.cast(query_mask, "int32"), axis=1) - 1, 0)
        positions = ops.minimum(positions, self.config.max_queries - 1)
        vectors = vectors + ops.cast(self.query_position(positions), vectors.dtype)
        reads_history = self.config.history_queries and history_tokens is not None
        weights, history_scores = [], None
        for level, (encoder, add_norm) in enumerate(zip(self.session_encoders, self.add_norms)):
            vectors, level_weights = encoder(vectors, query_mask, training=training)
            if reads_history and level == len(self.session_encoders) - 1:
                history, history_mask = self.encode_history(history_tokens, training)
                vectors, history_scores = self.history_reader(
                    vectors, history, history_mask, training=training
                )
            codes = add_norm(codes, vectors)
            weights.extend(level_weights)
        return codes, token_mask, weights, history_scores

    def encode_queries(
        self, tokens: Tensor, training: bool = False, encoder: bool = True
    ) -> tuple[Tensor, Tensor]:
        """Queries (B, S, n) -> token codes (B, S, n, d) and token mask (B, S, n): the
        embedded tokens through the query encoder (or, `encoder` False, embedded only)."""
        batch, size, n = (ops.shape(tokens)[i] for i in range(3))
        token_mask = tokens != PAD
        flat = ops.reshape(tokens, (batch * size, n))
        x = self.embed_dropout(self.embed(self.token_positions, flat), training=training)
        flat_mask = ops.reshape(token_mask, (batch * size, n))
        for layer in self.query_encoder if encoder else ():
            x = layer(x, padding_mask=flat_mask, training=training)
        return ops.reshape(x, (batch, size, n, self.config.d_model)), token_mask

    def encode_history(
        self, history_tokens: Tensor, training: bool = False
    ) -> tuple[Tensor, Tensor]:
        """The user's earlier queries (B, H', n), oldest first, front-padded -> their vectors
        (B, H, d) and mask (B, H), H' cut to the latest H = history_queries: each query
        projected from its token codes (query encoder, or "pooled" embeddings), plus its
        slot, counted from the newest (so a shorter H' keeps its recency)."""
        history_tokens = history_tokens[:, -self.config.history_queries :]
        size = ops.shape(history_tokens)[1]
        encoder = self.config.history_encoder == "query"
        codes, token_mask = self.encode_queries(history_tokens, training, encoder)
        vectors = self.query_projection(codes, token_mask)
        slots = ops.arange(size) + (self.config.history_queries - size)
        vectors = vectors + ops.cast(self.history_position(slots), vectors.dtype)[None]
        return vectors, ops.any(token_mask, axis=-1)

    def forward(self, inputs: Tensors, training: bool = False) -> tuple[Tensor, Tensor]:
        tokens, decoder_input = inputs["session_tokens"], inputs["decoder_input"]
        history = inputs.get("history_tokens")
        codes, token_mask, _, _ = self.encode(tokens, training=training, history_tokens=history)
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

    def session_attention(self, session_tokens: Tensor) -> Tensor:
        """Session attention weights (B, levels*layers, heads, S, S)."""
        _, _, weights, _ = self.encode(session_tokens)
        return ops.stack(weights, axis=1)

    def encode_for_decoding(
        self, session_tokens: Tensor, history_tokens: Tensor | None = None
    ) -> State:
        """The decoding state; with `history_tokens` (B, H, n) its context also holds
        `history_attention` (B, H): the last query's attention over the history, averaged
        over the heads (zeros where the model reads no history)."""
        codes, token_mask, weights, history_scores = self.encode(
            session_tokens, history_tokens=history_tokens
        )
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
        if history_tokens is not None:
            state["context"]["history_attention"] = (
                ops.cast(last_query_weights(history_scores), "float32")
                if history_scores is not None
                else ops.zeros(ops.shape(history_tokens)[:2], "float32")
            )
        return state
