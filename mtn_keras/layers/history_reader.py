"""MTN's third level: the session's query vectors read the user's earlier queries."""

from typing import Any

import keras
from keras import ops

from mtn_keras.layers.arguments_config import ArgumentsConfig
from mtn_keras.layers.hints import Shape, Tensor


@keras.saving.register_keras_serializable(package="mtn_keras")
class HistoryReader(ArgumentsConfig, keras.layers.Layer):
    """Multi-head attention from each session query vector over the encoded history, then
    add & norm. A row whose history is empty keeps its vectors as they are (no NaN).

    Args:
        d_model: width of the vectors.
        num_heads: attention heads.
        dropout: dropout rate of the attention and its output.

    Call args:
        vectors: (B, S, d) the session's query vectors.
        history: (B, H, d) the encoded history queries.
        history_mask: (B, H) bool, True for real history entries.
    Returns:
        the new vectors (B, S, d) and the attention (B, heads, S, H): each row sums to one
        over the real entries, zero on padding, all zero when the history is empty.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dropout: float = 0.0,
        epsilon: float = 1e-5,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.d_model, self.num_heads = d_model, num_heads
        self.dropout, self.epsilon = dropout, epsilon
        self.attention = keras.layers.MultiHeadAttention(
            num_heads, d_model // num_heads, dropout=dropout, name="history_attention"
        )
        self.output_dropout = keras.layers.Dropout(dropout)
        self.norm = keras.layers.LayerNormalization(epsilon=epsilon)

    def build(self, vectors_shape: Shape, history_shape: Shape) -> None:
        self.attention.build(vectors_shape, history_shape)
        self.norm.build(vectors_shape)

    def call(
        self, vectors: Tensor, history: Tensor, history_mask: Tensor, training: bool | None = None
    ) -> tuple[Tensor, Tensor]:
        size = ops.shape(vectors)[1]
        mask = ops.repeat(history_mask[:, None, :], size, axis=1)  # (B, S, H)
        read, scores = self.attention(
            vectors,
            history,
            attention_mask=mask,
            return_attention_scores=True,
            training=training,
        )
        # A row with no real entry gets a uniform softmax over padding: zeroed here, and its
        # vectors left unchanged below.
        scores = scores * ops.cast(mask[:, None], scores.dtype)
        added = self.norm(vectors + self.output_dropout(read, training=training))
        any_entry = ops.any(history_mask, axis=-1)[:, None, None]
        return ops.where(any_entry, added, vectors), scores


def last_query_weights(scores: Tensor) -> Tensor:
    """(B, heads, S, H) history attention -> (B, H): the last query slot's, averaged over
    the heads (the weights behind the next query; front-padded sessions end in a real one)."""
    return ops.mean(scores[:, :, -1, :], axis=1)
