"""model.fit's inputs: each epoch reads the seeded order of its own number, under
TensorFlow (a tf.data pass per epoch) and as the PyDataset other backends read."""

import numpy as np
import pytest

from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.vocab import SPECIALS, Vocabulary
from mtn_keras.training.inputs import EpochBatches

VOCAB = Vocabulary(list(SPECIALS) + ["red", "blue", "green", "kites"])
SESSIONS = [["red", "blue"] * (1 + i % 2) for i in range(12)] + [["green", "kites red"]] * 9


def orders(first_epoch, count):
    """The targets of each batch, epoch by epoch, as SessionBatches orders them."""
    found = []
    for epoch in range(first_epoch, first_epoch + count):
        batches = SessionBatches(SESSIONS, VOCAB, 3, 4, shuffle=True, seed=5)
        batches.epoch = epoch
        found.append([y.tobytes() for _, y in batches])
    return found


def test_the_pydataset_moves_to_the_next_epochs_order_at_each_epochs_end():
    data = EpochBatches(SessionBatches(SESSIONS, VOCAB, 3, 4, shuffle=True, seed=5), 2)
    seen = []
    for _ in range(2):
        seen.append([data[i][1].tobytes() for i in range(len(data))])
        data.on_epoch_end()
    assert seen == orders(2, 2)


@pytest.mark.slow
def test_under_tensorflow_each_pass_is_the_next_epoch():
    pytest.importorskip("tensorflow")
    from mtn_keras.training.inputs import tf_input

    dataset = tf_input(SessionBatches(SESSIONS, VOCAB, 3, 4, shuffle=True, seed=5), 1)
    assert dataset.cardinality().numpy() == len(orders(0, 1)[0])
    seen = [[np.asarray(y).tobytes() for _, y in dataset] for _ in range(2)]
    assert seen == orders(1, 2)
    x, _ = next(iter(dataset))
    assert x["session_tokens"].shape[1] in (2, 4)  # S is left free: one spec for all buckets
