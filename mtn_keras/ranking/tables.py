"""Lookup tables and arrays that a SavedModel keeps in its variables (the checkpoint beside
`saved_model.pb`), not as constants of the graph: the graph stays small and fast to read
whatever the size of the query log, and protobuf's 2 GB limit on a graph never applies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

if TYPE_CHECKING:
    import keras


class SavedTable(tf.Module):
    """A hash table of `keys` -> `values` (1-D arrays) answering `default` for other keys,
    saved with the variables and restored when the SavedModel loads."""

    def __init__(
        self,
        keys: tf.Tensor | np.ndarray | Sequence[str],
        values: tf.Tensor | np.ndarray,
        default: int | float,
    ) -> None:
        super().__init__()
        keys, values = tf.convert_to_tensor(keys), tf.convert_to_tensor(values)
        self.table = tf.lookup.experimental.MutableHashTable(keys.dtype, values.dtype, default)
        self.table.insert(keys, values)

    def lookup(self, keys: tf.Tensor) -> tf.Tensor:
        """The values of `keys` (any shape), in the keys' shape."""
        values = self.table.lookup(keys)
        values.set_shape(keys.shape)
        return values


def saved_array(
    values: tf.Tensor | np.ndarray | Sequence[str], dtype: tf.DType | None = None
) -> tf.Variable:
    """A constant array kept as a (non-trainable) variable."""
    return tf.Variable(tf.convert_to_tensor(values, dtype), trainable=False)


def track_variables_only(module: tf.Module, name: str, layer: keras.Layer | None) -> None:
    """Set `module.<name>` to the Keras `layer` (or None) and have a SavedModel of `module` keep the
    tf.Variables of the layer's weights (as `<name>_variables`) instead of the Keras object.

    A Keras 3 variable exports as two variables: the tf.Variable that traced functions
    capture, and a copy made from it that the object graph and the checkpoint hold. Only
    `tf.saved_model.load` rebinds the captures to the copy; the loaders that run the graph's
    restore op (TensorFlow Serving, `saved_model_cli`, the C++ and TF1 APIs) leave the captured
    ones uninitialised ("Could not find variable ..."). Tracked directly, each tf.Variable is
    exported once, captured and restored alike.
    """
    setattr(module, name, layer)
    module._delete_tracking(name)  # tf.Module's only way to hold an attribute untracked
    # Its weights, not all its variables: the dropout layers' seed states are read by
    # training alone (a captured one would stop tf.saved_model.save as untracked).
    variables = [variable.value for variable in getattr(layer, "weights", [])]
    wrong = [type(v).__name__ for v in variables if not isinstance(v, tf.Variable)]
    if wrong:
        raise TypeError(f"{name}: Keras variables of {', '.join(set(wrong))}, not tf.Variable")
    setattr(module, f"{name}_variables", variables)
