"""Decoding through a stack of keras-hub TransformerDecoder layers with a key/value cache,
a step at a time or a whole target at once: the cross-attention keys and values are
computed once per session."""

from collections.abc import Mapping, Sequence
from typing import Any

import keras
from keras import ops

from mtn_keras.layers.hints import Tensor


def start_decoder_cache(
    layers: Sequence[keras.layers.Layer],
    memory: Tensor,
    memory_mask: Tensor,
    max_length: int,
    num_heads: int,
) -> dict[str, Any]:
    """State for `cached_decoder_step`: empty self-attention caches of `max_length`
    positions, and under "context" (the same for every beam) the memory and the filled
    cross-attention caches, one per layer."""
    batch, d = ops.shape(memory)[0], ops.shape(memory)[2]
    head_dim = d // num_heads
    context = {"memory": memory, "memory_mask": memory_mask}
    state = {"context": context}
    for i, layer in enumerate(layers):
        # The cross-attention keys and values of the memory, as the layer caches them
        # (keras-hub has no public call that only fills this cache).
        attention = layer._cross_attention_layer
        cross = [attention._key_dense(memory), attention._value_dense(memory)]
        context[f"cross_cache_{i}"] = ops.stack(cross, axis=1)
        state[f"self_cache_{i}"] = ops.zeros(
            (batch, 2, max_length, num_heads, head_dim), memory.dtype
        )
    return state


def cached_decoder_step(
    layers: Sequence[keras.layers.Layer], inputs: Tensor, state: Mapping[str, Any], t: int | Tensor
) -> tuple[Tensor, dict[str, Any]]:
    """Run embedded inputs (N, T, d) at positions t..t+T-1 through the layers, each seeing
    the positions before it (causal); (outputs, state)."""
    state = dict(state)
    context = state["context"]
    y = inputs
    for i, layer in enumerate(layers):
        y, state[f"self_cache_{i}"], _ = layer(
            y,
            context["memory"],
            encoder_padding_mask=context["memory_mask"],
            self_attention_cache=state[f"self_cache_{i}"],
            self_attention_cache_update_index=t,
            cross_attention_cache=context[f"cross_cache_{i}"],
            cross_attention_cache_update_index=None,
        )
    return y, state
