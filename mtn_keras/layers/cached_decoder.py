"""Step-by-step decoding through a stack of keras-hub TransformerDecoder layers with a
key/value cache: the cross-attention keys and values are computed once per session."""

from keras import ops


def start_decoder_cache(layers, memory, memory_mask, max_length, num_heads):
    """State for `cached_decoder_step`: empty self-attention caches of `max_length`
    positions, and under "context" (the same for every beam) the memory and the filled
    cross-attention caches, one per layer."""
    batch, size, d = (ops.shape(memory)[i] for i in range(3))
    head_dim = d // num_heads
    context = {"memory": memory, "memory_mask": memory_mask}
    state = {"context": context}
    probe = ops.zeros((batch, 1, d), memory.dtype)
    for i, layer in enumerate(layers):
        self_cache = ops.zeros((batch, 2, max_length, num_heads, head_dim), memory.dtype)
        cross_cache = ops.zeros((batch, 2, size, num_heads, head_dim), memory.dtype)
        _, _, cross_cache = layer(
            probe,
            memory,
            encoder_padding_mask=memory_mask,
            self_attention_cache=self_cache,
            self_attention_cache_update_index=0,
            cross_attention_cache=cross_cache,
            cross_attention_cache_update_index=0,
        )
        state[f"self_cache_{i}"] = self_cache
        context[f"cross_cache_{i}"] = cross_cache
    return state


def cached_decoder_step(layers, inputs, state, t):
    """Run embedded inputs (N, 1, d) at position t through the layers; (outputs, state)."""
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
