"""Global state set for one piece of work and put back after it, so that training or
fitting a ranker leaves no hidden effect on the process that called it."""

import contextlib
import random


@contextlib.contextmanager
def seeded(seed):
    """keras.utils.set_random_seed(seed) inside the block; Python's, NumPy's, TensorFlow's
    and Keras's global seeds as they were after it."""
    import keras
    import numpy as np
    from keras.src.backend.common import global_state
    from keras.src.random import seed_generator
    from keras.src.utils import rng_utils

    names = (rng_utils.GLOBAL_RANDOM_SEED, seed_generator.GLOBAL_SEED_GENERATOR)
    saved = [global_state.get_global_attribute(name) for name in names]
    python_state, numpy_state = random.getstate(), np.random.get_state()
    tf_seed = _tensorflow_seed()
    keras.utils.set_random_seed(seed)
    try:
        yield
    finally:
        for name, value in zip(names, saved):
            global_state.set_global_attribute(name, value)
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if tf_seed is not False:
            import tensorflow as tf

            tf.random.set_seed(tf_seed)


def _tensorflow_seed():
    """TensorFlow's global seed (None when unset), or False when TensorFlow is not there."""
    try:
        from tensorflow.python.framework import random_seed
    except ImportError:
        return False
    return random_seed.get_seed(None)[0]


@contextlib.contextmanager
def precision_policy(name):
    """Keras's global dtype policy `name` inside the block (None: unchanged), the previous
    one after it."""
    import keras

    previous = keras.mixed_precision.global_policy()
    if name:
        keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
