"""The training losses of a preset's MTN on the first batches of a prepared dataset, one per
step, from given initial weights, under whichever backend KERAS_BACKEND names: run it once
per backend and compare (tests/training/test_training_jax.py; docs/scaling.md has the
figures). Without TensorFlow under JAX, since its batches are mtn_keras.data.batches'.

The weights file is written first when it does not exist, so that both runs start alike
(the backends draw different random numbers from one seed). Dropout is turned off for the
same reason. Prints JSON: the backend and the losses.

Run: KERAS_BACKEND=jax python tools/backend_losses.py --data DIR --weights W.weights.h5
[--steps 20] [--preset tiny]
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras

from mtn_keras.base.config import configure
from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.prepared import load_split, load_stats
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.models import build_model
from mtn_keras.training.optimizer import compile_model


def first_losses(data, weights, steps, preset_name):
    """The loss of each of the first `steps` training steps on epoch 0's seeded batches."""
    vocab = Vocabulary.load(os.path.join(data, "vocab.txt"))
    model_config, train_config = configure(
        preset_name, load_stats(data), len(vocab), overrides=["dropout=0"]
    )
    keras.utils.set_random_seed(train_config.seed)
    model = build_model("mtn", model_config)
    model.build()
    if not os.path.isfile(weights):
        model.save_weights(weights)
    model.load_weights(weights)
    compile_model(model, model_config, train_config)
    batches = SessionBatches(
        load_split(data, "train"),
        vocab,
        model_config.max_query_tokens,
        train_config.batch_size,
        shuffle=True,
        seed=train_config.seed,
    )
    losses = []
    for index in range(steps):
        x, y = batches[index % len(batches)]
        losses.append(float(model.train_on_batch(x, y, return_dict=True)["loss"]))
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a prepared dataset directory")
    parser.add_argument("--weights", required=True, help="initial weights (.weights.h5)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--preset", default="tiny")
    args = parser.parse_args(argv)
    losses = first_losses(args.data, args.weights, args.steps, args.preset)
    print(json.dumps({"backend": keras.config.backend(), "losses": losses}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
