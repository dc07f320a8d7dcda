"""`python -m mtn_keras.train` in a process of its own, for the distributed tests.

    python train_worker.py [--cpus N] [--die-after EPOCHS] TRAIN_ARGS...

--cpus N splits the CPU into N logical devices first (MirroredStrategy then has N replicas);
--die-after kills the process at the end of that epoch, after every other callback (the
backup and log.csv are written), as a machine failure would.
"""

import functools
import os
import sys

import keras


class DieAfter(keras.callbacks.Callback):
    def __init__(self, epochs):
        super().__init__()
        self.epochs = epochs

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 >= self.epochs:
            os._exit(137)


def main(argv):
    cpus, die_after = 1, None
    while argv and argv[0] in ("--cpus", "--die-after"):
        flag, value, argv = argv[0], int(argv[1]), argv[2:]
        if flag == "--cpus":
            cpus = value
        else:
            die_after = value
    if cpus > 1:
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * cpus
        )
    from mtn_keras import train
    from mtn_keras.training import fitting

    if die_after:
        train_fit = fitting.fit_model
        fitting.fit_model = functools.partial(train_fit, extra_callbacks=[DieAfter(die_after)])
    return train.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
