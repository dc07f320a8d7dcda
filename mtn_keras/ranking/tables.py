"""Lookup tables and arrays that a SavedModel keeps in its variables (the checkpoint beside
`saved_model.pb`), not as constants of the graph: the graph stays small and fast to read
whatever the size of the query log, and protobuf's 2 GB limit on a graph never applies."""

import tensorflow as tf


class SavedTable(tf.Module):
    """A hash table of `keys` -> `values` (1-D arrays) answering `default` for other keys,
    saved with the variables and restored when the SavedModel loads."""

    def __init__(self, keys, values, default):
        super().__init__()
        keys, values = tf.convert_to_tensor(keys), tf.convert_to_tensor(values)
        self.table = tf.lookup.experimental.MutableHashTable(keys.dtype, values.dtype, default)
        self.table.insert(keys, values)

    def lookup(self, keys):
        """The values of `keys` (any shape), in the keys' shape."""
        values = self.table.lookup(keys)
        values.set_shape(keys.shape)
        return values


def saved_array(values, dtype=None):
    """A constant array kept as a (non-trainable) variable."""
    return tf.Variable(tf.convert_to_tensor(values, dtype), trainable=False)
