"""Global state set for one piece of work and put back after it, so that training or
fitting a ranker leaves no hidden effect on the process that called it."""

import contextlib
import random
from collections.abc import Iterator


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """keras.utils.set_random_seed(seed) inside the block; after it, Python's, NumPy's, Keras's
    and TensorFlow's global seeds as they were, and TensorFlow's op-seed sequence (the op seeds
    of random ops called without one) where it had got to.

    Not put back: TensorFlow's cached kernels, which setting a seed clears, so a random op
    given its own `seed` starts its sequence again after the block, as after any
    tf.random.set_seed (what a graph holds, such as a traced function's ops, is untouched)."""
    import keras
    import numpy as np
    from keras.src.backend.common import global_state
    from keras.src.random import seed_generator
    from keras.src.utils import rng_utils

    names = (rng_utils.GLOBAL_RANDOM_SEED, seed_generator.GLOBAL_SEED_GENERATOR)
    saved = [global_state.get_global_attribute(name) for name in names]
    python_state, numpy_state = random.getstate(), np.random.get_state()
    tf_seeds = _tensorflow_seeds()
    keras.utils.set_random_seed(seed)
    try:
        yield
    finally:
        for name, value in zip(names, saved):
            global_state.set_global_attribute(name, value)
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if tf_seeds is not None:
            _set_tensorflow_seeds(*tf_seeds)


def _tensorflow_seeds():
    """TensorFlow's global (eager) seed, None when unset, and the state of the generator its op
    seeds are drawn from (None before any seed was set); None when TensorFlow is not there.
    Read without drawing an op seed, as random_seed.get_seed would."""
    try:
        from tensorflow.python.eager import context
    except ImportError:
        return None
    op_seeds = getattr(context.context(), "_rng", None)
    return context.global_seed(), None if op_seeds is None else op_seeds.getstate()


def _set_tensorflow_seeds(seed, op_seed_state) -> None:
    """Put back what _tensorflow_seeds read."""
    import tensorflow as tf
    from tensorflow.python.eager import context

    tf.random.set_seed(seed)
    if op_seed_state is not None:
        context.context()._rng.setstate(op_seed_state)


@contextlib.contextmanager
def precision_policy(name: str | None) -> Iterator[None]:
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
