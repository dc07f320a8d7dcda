"""DenseAdam: under TensorFlow an embedding row looked up twice in a batch is updated as
Adam updates its summed gradient, as under JAX; Keras's Adam on the tf.IndexedSlices
squares the two lookups' gradients one by one."""

import numpy as np
import pytest


def test_a_row_looked_up_twice_gets_the_update_of_its_summed_gradient():
    tf = pytest.importorskip("tensorflow")
    import keras

    from mtn_keras.training.optimizer import DenseAdam

    gradient = tf.IndexedSlices(
        tf.constant([[1.0, -1.0], [1.0, 3.0]]), tf.constant([0, 0]), tf.constant([3, 2])
    )

    def stepped(optimizer, grad):
        table = keras.Variable(np.zeros((3, 2), "float32"))
        optimizer.apply([grad], [table])
        return table.numpy()

    dense = stepped(keras.optimizers.Adam(0.1), tf.convert_to_tensor(gradient))
    np.testing.assert_allclose(dense[0], [-0.1, -0.1], rtol=1e-5)  # Adam's first step: lr
    np.testing.assert_allclose(stepped(DenseAdam(0.1), gradient), dense, rtol=1e-6)
    assert not np.allclose(stepped(keras.optimizers.Adam(0.1), gradient), dense)
