"""The two private APIs of Keras and keras-hub this project relies on, pinned by what it
relies on, so that an upgrade that changes them fails here, loudly, by name:

- `layers/cached_decoder.py` reads `TransformerDecoder._cross_attention_layer` and its
  `_key_dense` / `_value_dense` to fill the cross-attention cache once per session
  (keras-hub has no public call that only fills it);
- `models/base.py` overrides `keras.Model._maybe_symbolic_build`, which Keras calls at the
  start of `fit`, to skip a build that fails for dict inputs under multi-worker
  strategies (keras-team/keras#20329)."""

import inspect

import keras
import keras_hub
import numpy as np
from keras import ops

from mtn_keras.layers.cached_decoder import start_decoder_cache


def test_keras_hub_fills_the_cross_attention_cache_as_start_decoder_cache_does():
    """The public call, asked to fill the cross cache, gives what the private layers give."""
    layer = keras_hub.layers.TransformerDecoder(intermediate_dim=8, num_heads=2)
    memory = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    mask = np.ones((2, 3), bool)
    layer(np.zeros((2, 1, 4), "float32"), memory)  # builds the sublayers
    assert hasattr(layer, "_cross_attention_layer"), (
        "keras-hub renamed TransformerDecoder's cross attention"
    )
    attention = layer._cross_attention_layer
    assert hasattr(attention, "_key_dense") and hasattr(attention, "_value_dense"), (
        "keras's MultiHeadAttention renamed its key/value projections"
    )
    state = start_decoder_cache([layer], ops.convert_to_tensor(memory), mask, 5, 2)
    _, _, filled = layer(
        np.zeros((2, 1, 4), "float32"),
        memory,
        encoder_padding_mask=mask,
        self_attention_cache=state["self_cache_0"],
        self_attention_cache_update_index=0,
        cross_attention_cache=ops.zeros_like(state["context"]["cross_cache_0"]),
        cross_attention_cache_update_index=0,
    )
    np.testing.assert_allclose(
        ops.convert_to_numpy(filled),
        ops.convert_to_numpy(state["context"]["cross_cache_0"]),
        atol=1e-6,
    )


def test_keras_model_still_has_the_symbolic_build_hook_fit_calls():
    hook = getattr(keras.Model, "_maybe_symbolic_build", None)
    assert hook is not None, "keras.Model._maybe_symbolic_build is gone: see models/base.py"
    assert list(inspect.signature(hook).parameters) == ["self", "iterator", "data_batch"]
    source = inspect.getsource(keras.src.backend.tensorflow.trainer.TensorFlowTrainer.fit)
    assert "_maybe_symbolic_build" in source, "fit no longer calls _maybe_symbolic_build"


def test_the_global_seed_state_that_scoped_seeded_puts_back_is_still_there():
    """`mtn_keras/base/scoped.py` restores Keras's and TensorFlow's global seeds by these names
    (neither library has a public getter)."""
    from keras.src.backend.common import global_state
    from keras.src.random import seed_generator
    from keras.src.utils import rng_utils
    from tensorflow.python.framework import random_seed

    assert isinstance(rng_utils.GLOBAL_RANDOM_SEED, str)
    assert isinstance(seed_generator.GLOBAL_SEED_GENERATOR, str)
    assert callable(global_state.get_global_attribute) and callable(
        global_state.set_global_attribute
    )
    assert len(random_seed.get_seed(None)) == 2
