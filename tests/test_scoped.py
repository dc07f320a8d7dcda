"""Global state set for one piece of work and put back after it (base/scoped.py)."""

import random

import numpy as np

from mtn_keras.base.scoped import precision_policy, seeded


def test_seeded_leaves_the_global_generators_as_they_were():
    random.seed(5)
    np.random.seed(5)
    expected = random.random(), np.random.rand()
    random.seed(5)
    np.random.seed(5)
    with seeded(0):
        random.random(), np.random.rand()
    assert (random.random(), np.random.rand()) == expected


def test_seeded_leaves_tensorflows_op_seed_sequence_where_it_was():
    """Random ops without their own seed draw op seeds from a sequence of the global seed: after
    the block the next ones are those it would have drawn without the block."""
    import tensorflow as tf
    from tensorflow.python.eager import context

    try:
        tf.random.set_seed(7)
        expected = [float(tf.random.uniform([])) for _ in range(3)]
        tf.random.set_seed(7)
        found = [float(tf.random.uniform([]))]
        with seeded(0):
            tf.random.uniform([])
        found += [float(tf.random.uniform([])) for _ in range(2)]
        assert found == expected
        assert context.global_seed() == 7
        tf.random.set_seed(None)
        with seeded(0):
            pass
        assert context.global_seed() is None
    finally:
        tf.random.set_seed(None)


def test_precision_policy_is_put_back():
    import keras

    before = keras.mixed_precision.global_policy().name
    with precision_policy("mixed_float16"):
        assert keras.mixed_precision.global_policy().name == "mixed_float16"
    assert keras.mixed_precision.global_policy().name == before
