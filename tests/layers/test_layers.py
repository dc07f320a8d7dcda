"""The custom layers, each put through the keras-hub style layer test: its config round
trip (and serialization), its output shapes, and a training step that moves every weight."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from mtn_keras.layers import CopyHead, MaskedSessionEncoder, QueryProjection, SessionAddNorm

B, S, N, D = 2, 3, 4, 8
RNG = np.random.default_rng(0)


def floats(*shape):
    return tf.constant(RNG.normal(size=shape).astype("float32"))


def masks(*shape):
    """A bool mask with some False, never a row of all False."""
    mask = RNG.random(shape) < 0.7
    mask[..., 0] = True
    return tf.constant(mask)


def run_layer_test(layer, inputs, expected_shapes, unmoved=()):
    """keras-hub's `run_layer_test` in short: a config round trip gives the same layer, the
    outputs have the expected shapes, and one SGD step on their squares changes every
    trainable weight (each gets a finite, non-zero gradient) but those named in `unmoved`."""
    outputs = tf.nest.flatten(layer(*inputs))
    assert [tuple(o.shape) for o in outputs] == expected_shapes

    clone = layer.__class__.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    revived = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(revived) is type(layer) and revived.get_config() == layer.get_config()
    assert [tuple(o.shape) for o in tf.nest.flatten(clone(*inputs))] == expected_shapes

    before = [w.numpy().copy() for w in layer.trainable_weights]
    assert before, "a layer with no weight to train"
    with tf.GradientTape() as tape:
        loss = sum(
            tf.reduce_sum(tf.square(tf.cast(o, "float32"))) for o in tf.nest.flatten(layer(*inputs))
        )
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)
    keras.optimizers.SGD(0.1).apply_gradients(zip(grads, layer.trainable_weights))
    # Float noise moves a weight by about 1e-9; a real gradient by far more than 1e-6.
    still = [
        w.path
        for b, w in zip(before, layer.trainable_weights)
        if np.abs(b - w.numpy()).max() < 1e-6
    ]
    assert still == list(unmoved)


def test_query_projection():
    layer = QueryProjection()
    inputs = (floats(B, S, N, D), masks(B, S, N))
    run_layer_test(layer, inputs, [(B, S, D)])
    assert tuple(layer.compute_output_shape((B, S, N, D))) == (B, S, D)


def test_copy_head():
    inputs = (floats(B, 5, D), floats(B, S * N, 6), masks(B, 5, S * N))
    # The key bias adds the same score to every source of a state: the softmax ignores it,
    # so no loss can move it (a redundant weight, kept for the trained models' layout).
    run_layer_test(
        CopyHead(units=8, name="copy_head"),
        inputs,
        [(B, 5, S * N), (B, 5, 1)],
        unmoved=["copy_head/copy_key/bias"],
    )


def test_masked_session_encoder():
    layer = MaskedSessionEncoder(
        num_layers=2, intermediate_dim=16, num_heads=2, name="masked_session_encoder"
    )
    inputs = (floats(B, S, D), masks(B, S))
    # As in the copy head, an attention's key bias cannot move (softmax ignores it).
    key_biases = [
        f"masked_session_encoder/session_layer_{i}/self_attention_layer/key/bias" for i in range(2)
    ]
    run_layer_test(layer, inputs, [(B, S, D), (B, 2, S, S), (B, 2, S, S)], unmoved=key_biases)


def test_session_add_norm():
    run_layer_test(
        SessionAddNorm(epsilon=1e-6), (floats(B, S, N, D), floats(B, S, D)), [(B, S, N, D)]
    )


@pytest.mark.parametrize("layer", [QueryProjection(), SessionAddNorm()])
def test_the_layers_serialise_under_the_package_name(layer):
    assert keras.saving.get_registered_name(type(layer)) == f"mtn_keras>{type(layer).__name__}"
