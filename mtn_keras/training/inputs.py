"""What model.fit reads: the numpy batches of mtn_keras.data.batches, in each epoch's seeded
order, as a tf.data.Dataset under TensorFlow and as a Keras PyDataset under any other
backend (JAX, with TensorFlow absent)."""

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

import keras

from mtn_keras.base import distribute
from mtn_keras.data.batches import Batch, SessionBatches

if TYPE_CHECKING:
    import tensorflow as tf


def fit_input(batches: SessionBatches, first_epoch: int = 0) -> "tf.data.Dataset | EpochBatches":
    """`batches` for model.fit, from epoch `first_epoch` (a resumed run's) on: each epoch
    reads the order of its own number."""
    if keras.config.backend() == "tensorflow":
        return tf_input(batches, first_epoch)
    return EpochBatches(batches, first_epoch)


class EpochBatches(keras.utils.PyDataset):
    """`SessionBatches` as a PyDataset, moving to the next epoch's order at the end of each
    (Keras calls on_epoch_end; the next epoch's first batch is read after it)."""

    def __init__(self, batches: SessionBatches, first_epoch: int = 0) -> None:
        super().__init__()
        self.batches = batches
        self.batches.epoch = first_epoch

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, index: int) -> Batch:
        return self.batches[index]

    def on_epoch_end(self) -> None:
        self.batches.epoch += 1


def tf_input(batches: SessionBatches, first_epoch: int = 0) -> "tf.data.Dataset":
    """`batches` as a tf.data.Dataset whose every pass is the next epoch (Keras makes one
    iterator per epoch), sharded as tf.distribute expects. Not a PyDataset: under
    TensorFlow, Keras would fix S to its first two batches' shapes."""
    import tensorflow as tf

    epochs = itertools.count(first_epoch)

    def one_epoch() -> Iterator[Batch]:
        batches.epoch = next(epochs)
        yield from batches

    x, y = batches[0]
    spec = {key: tf.TensorSpec((None,) * value.ndim, value.dtype) for key, value in x.items()}
    signature = (spec, tf.TensorSpec((None,) * y.ndim, y.dtype))
    dataset = tf.data.Dataset.from_generator(one_epoch, output_signature=signature)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(len(batches)))
    return distribute.shard(dataset.prefetch(2))
