"""MTN's masked session encoder and the add & norm that feeds it back to the tokens."""

from typing import Any

import keras
import keras_hub
from keras import ops

from mtn_keras.layers.arguments_config import ArgumentsConfig
from mtn_keras.layers.hints import Shape, Tensor


def causal_query_mask(query_mask: Tensor) -> Tensor:
    """(B, S) bool -> (B, S, S): query i may attend to real queries j <= i (and itself)."""
    size = ops.shape(query_mask)[1]
    causal = ops.tril(ops.ones((size, size), dtype="bool"))
    keys = ops.logical_or(query_mask[:, None, :], ops.eye(size, dtype="bool")[None])
    return ops.logical_and(causal[None], keys)


@keras.saving.register_keras_serializable(package="mtn_keras")
class MaskedSessionEncoder(ArgumentsConfig, keras.layers.Layer):
    """Causal self-attention over a session's query vectors, `num_layers` deep.

    Query t sees queries 1..t only, so one pass gives the context of every prefix.
    Returns the new query vectors and each layer's attention weights (B, heads, S, S).

    Args:
        num_layers: number of self-attention + feed-forward layers.
        intermediate_dim: feed-forward width.
        num_heads: attention heads.
        dropout: dropout rate.
    """

    def __init__(
        self,
        num_layers: int,
        intermediate_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_layers = num_layers
        self.intermediate_dim = intermediate_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.encoder_layers = [
            keras_hub.layers.TransformerEncoder(
                intermediate_dim, num_heads, dropout=dropout, name=f"session_layer_{i}"
            )
            for i in range(num_layers)
        ]

    def build(self, inputs_shape: Shape, query_mask_shape: Shape | None = None) -> None:
        for layer in self.encoder_layers:
            layer.build(inputs_shape)

    def call(
        self, inputs: Tensor, query_mask: Tensor, training: bool | None = None
    ) -> tuple[Tensor, list[Tensor]]:
        mask = causal_query_mask(query_mask)
        x, weights = inputs, []
        for layer in self.encoder_layers:
            x, scores = layer(
                x, attention_mask=mask, training=training, return_attention_scores=True
            )
            weights.append(scores)
        return x, weights


@keras.saving.register_keras_serializable(package="mtn_keras")
class SessionAddNorm(ArgumentsConfig, keras.layers.Layer):
    """Adds query t's session vector to every token code of query t, then layer norm.

    Call args:
        token_codes: (B, S, n, d).
        session_vectors: (B, S, d).
    """

    def __init__(self, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.epsilon = epsilon
        self.norm = keras.layers.LayerNormalization(epsilon=epsilon)

    def build(self, token_codes_shape: Shape, session_vectors_shape: Shape | None = None) -> None:
        self.norm.build(token_codes_shape)

    def call(self, token_codes: Tensor, session_vectors: Tensor) -> Tensor:
        return self.norm(token_codes + session_vectors[:, :, None, :])
