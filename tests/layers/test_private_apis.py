"""The private (or experimental) APIs this project relies on, pinned by what it relies on, so
that an upgrade that changes them fails here, loudly, by name:

- `layers/cached_decoder.py` reads `TransformerDecoder._cross_attention_layer` and its
  `_key_dense` / `_value_dense` to fill the cross-attention cache once per session
  (keras-hub has no public call that only fills it);
- `models/base.py` overrides `keras.Model._maybe_symbolic_build`, which Keras calls at the
  start of `fit`, to skip a build that fails for dict inputs under multi-worker
  strategies (keras-team/keras#20329);
- `base/scoped.py` reads and puts back Keras's and TensorFlow's global seed state;
- `app/query_input.py` overrides Textual's `Input._on_key` and `_on_paste`; the app tests read
  `App._notifications`;
- `ranking/tables.py` keeps its tables in `tf.lookup.experimental.MutableHashTable`;
- `base/xla_setup.py` sets XLA's flags by their strings (an unknown one aborts TensorFlow);
- `ranking/blocklist.py` reads better-profanity's word list by its file name."""

import inspect
import os
import random
import subprocess
import sys
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from mtn_keras.layers.cached_decoder import start_decoder_cache

REPO = Path(__file__).resolve().parents[2]


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
    from tensorflow.python.eager import context

    assert callable(context.global_seed), "tensorflow's context.global_seed is gone"
    from mtn_keras.base.scoped import seeded

    with seeded(1):  # sets a global seed, and so an op-seed generator; put back after it
        assert isinstance(getattr(context.context(), "_rng", None), random.Random), (
            "TensorFlow's eager context no longer draws op seeds from `_rng`: see base/scoped.py"
        )


def test_textual_input_still_has_the_handlers_query_input_overrides():
    """Textual dispatches `_on_<event>` of each class of the widget's MRO: QueryInput's
    `_on_key` (enter) and `_on_paste` (several lines) run before Input's and stop them."""
    from textual.message_pump import MessagePump
    from textual.widgets import Input

    for name in ("_on_key", "_on_paste"):
        handler = Input.__dict__.get(name)
        assert handler is not None, f"textual's Input.{name} is gone: see app/query_input.py"
        assert list(inspect.signature(handler).parameters) == ["self", "event"], name
    assert inspect.iscoroutinefunction(Input._on_key), "Input._on_key is no longer async"
    source = inspect.getsource(MessagePump._get_dispatch_methods)
    assert 'f"_{method_name}"' in source, "textual no longer dispatches to `_on_<event>`"


async def test_textual_app_keeps_its_notifications_where_the_app_tests_read_them():
    from textual.app import App

    app = App()
    async with app.run_test() as pilot:
        app.notify("hello")
        await pilot.pause()
        assert [note.message for note in getattr(app, "_notifications", ())] == ["hello"], (
            "textual's App._notifications is gone: the app tests read the notes there"
        )


def test_tensorflows_mutable_hash_table_saves_and_loads_as_saved_table_uses_it(tmp_path):
    from mtn_keras.ranking.tables import SavedTable

    assert hasattr(tf.lookup.experimental, "MutableHashTable"), (
        "tf.lookup.experimental.MutableHashTable is gone: see ranking/tables.py"
    )
    table = SavedTable(tf.constant(["rome", "paris"]), tf.constant([1, 2], tf.int64), -1)
    module = tf.Module()
    module.table = table
    module.lookup = tf.function(table.lookup, input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    found = loaded.lookup(tf.constant(["paris", "oslo", "rome"])).numpy().tolist()
    assert found == [2, -1, 1]


@pytest.mark.slow
def test_tensorflow_accepts_the_xla_flags_set_up_xla_sets(tmp_path):
    """An unknown flag in XLA_FLAGS aborts TensorFlow at its first compilation; the cache flag
    of TF_XLA_FLAGS must leave compilations in the folder."""
    code = (
        "from mtn_keras.base.xla_setup import set_up_xla, cache_folder; set_up_xla(); "
        "import tensorflow as tf; "
        "f = tf.function(lambda x: tf.reduce_sum(x * 2.0), jit_compile=True); "
        "assert float(f(tf.ones([3]))) == 6.0; print(cache_folder())"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    for name in ("XLA_FLAGS", "TF_XLA_FLAGS"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, f"TensorFlow refused xla_setup's flags: {done.stderr[-2000:]}"
    folder = Path(done.stdout.split()[-1])
    assert folder == tmp_path / "mtn-keras" / "xla" and any(folder.iterdir()), (
        "XLA kept no compilation in the folder of --tf_xla_persistent_cache_directory"
    )


def test_better_profanity_still_ships_its_word_list_by_that_name():
    from importlib import resources

    from mtn_keras.ranking import blocklist

    source = inspect.getsource(blocklist)
    assert '"profanity_wordlist.txt"' in source
    words = resources.files("better_profanity").joinpath("profanity_wordlist.txt")
    assert words.is_file(), (
        "better-profanity renamed profanity_wordlist.txt: see ranking/blocklist.py"
    )
    assert len(words.read_text("utf-8").split()) > 100
