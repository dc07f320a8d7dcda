"""The parts that the Transformer-style models (MTN, Transformer) share beside
SuggestionModel: their token and target positions, and their decoder run through its
key/value cache."""

import keras
import keras_hub
from keras import ops

from mtn_keras.base.config import ModelConfig
from mtn_keras.data.vocab import UNK
from mtn_keras.layers.cached_decoder import cached_decoder_step
from mtn_keras.layers.hints import State, Tensor


class TransformerParts:
    """Mixin of the Transformer-style models (`decoder_layers`: keras-hub
    TransformerDecoders): learned positions of a token within its query (n) and within a
    target (n + 1) added to the shared token embedding, then a projection to d_model when
    the embedding is narrower; and the decoder run through its key/value cache, a step at a
    time or over a whole target at once. Call `add_transformer_inputs()` in __init__."""

    config: ModelConfig
    token_embedding: keras.layers.Layer
    decoder_layers: list[keras.layers.Layer]

    def add_transformer_inputs(self) -> None:
        c = self.config
        n = c.max_query_tokens
        self.token_positions = keras_hub.layers.PositionEmbedding(n, name="token_positions")
        self.target_positions = keras_hub.layers.PositionEmbedding(n + 1, name="target_positions")
        self.embed_projection = (
            keras.layers.Dense(c.d_model, name="embed_projection")
            if c.embed_dim != c.d_model
            else None
        )

    def embed(
        self, positions: keras.layers.Layer, ids: Tensor, start_index: int | Tensor = 0
    ) -> Tensor:
        """Token embedding plus `positions` (token_positions or target_positions), projected."""
        x = self.token_embedding(ids)
        x = x + positions(x, start_index=start_index)
        if self.embed_projection is not None:
            x = self.embed_projection(x)
        return x

    def decoder_step(self, tokens: Tensor, state: State, t: int | Tensor) -> tuple[Tensor, State]:
        y = self.embed(self.target_positions, tokens[:, None], start_index=t)
        y, state = cached_decoder_step(self.decoder_layers, y, state, t)
        return y[:, 0], state

    def teacher_forced_hidden(self, tokens: Tensor, state: State) -> Tensor:
        """All positions in one causal pass: the whole target written into the empty
        self-attention caches at position 0, against the cached memory keys and values."""
        tokens = ops.where(tokens >= self.config.vocab_size, UNK, tokens)
        y, _ = cached_decoder_step(
            self.decoder_layers, self.embed(self.target_positions, tokens), state, 0
        )
        return y
