"""Pointer-generator copy head: attention over the session's tokens and a copy gate."""

from typing import Any

import keras
from keras import ops

from mtn_keras.layers.arguments_config import ArgumentsConfig
from mtn_keras.layers.hints import Shape, Tensor


@keras.saving.register_keras_serializable(package="mtn_keras")
class CopyHead(ArgumentsConfig, keras.layers.Layer):
    """Copy attention from decoder states over source token codes, and the gate g.

    The next-word distribution is g * p_vocab + (1 - g) * copy, where copy puts each
    source token's attention weight on that token's (source-extended) id (See et al. 2017).

    Args:
        units: width of the attention projection.

    Call args:
        hidden: (B, Q, d) decoder states.
        memory: (B, K, d_m) source token codes.
        mask: (B, Q, K) bool, which sources each state may copy from.
    Returns:
        attention (B, Q, K) summing to 1 over allowed sources (0 when none is allowed),
        gate (B, Q, 1): the probability of generating from the vocabulary.
    """

    def __init__(self, units: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = units
        self.query_dense = keras.layers.Dense(units, name="copy_query")
        self.key_dense = keras.layers.Dense(units, name="copy_key")
        self.gate_dense = keras.layers.Dense(1, name="copy_gate")

    def build(self, hidden_shape: Shape, memory_shape: Shape) -> None:
        hidden_width, memory_width = hidden_shape[-1], memory_shape[-1]
        assert hidden_width is not None and memory_width is not None, "Dense needs known widths"
        self.query_dense.build(hidden_shape)
        self.key_dense.build(memory_shape)
        self.gate_dense.build(hidden_shape[:-1] + (hidden_width + memory_width,))

    def call(self, hidden: Tensor, memory: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        return self.attend(hidden, self.keys(memory), memory, mask)

    def keys(self, memory: Tensor) -> Tensor:
        """Attention keys (B, K, units) of the source codes; decoding computes them once."""
        return self.key_dense(memory)

    def attend(
        self, hidden: Tensor, keys: Tensor, memory: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """`call` with the keys of `memory` given."""
        query = self.query_dense(hidden)
        scores = ops.einsum("bqu,bku->bqk", query, keys) / (self.units**0.5)
        scores = ops.cast(scores, "float32")
        scores = ops.where(mask, scores, -1e9)
        attention = ops.softmax(scores, axis=-1) * ops.cast(mask, "float32")
        context = ops.einsum("bqk,bkd->bqd", ops.cast(attention, memory.dtype), memory)
        gate_logit = self.gate_dense(ops.concatenate([hidden, context], axis=-1))
        gate = ops.sigmoid(ops.cast(gate_logit, "float32"))
        # With nothing to copy from, all mass goes to the vocabulary.
        any_source = ops.any(mask, axis=-1, keepdims=True)
        gate = ops.where(any_source, gate, 1.0)
        return attention, gate
