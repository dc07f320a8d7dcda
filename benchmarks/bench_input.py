"""model.fit's epoch time under the TensorFlow backend with the two inputs it could read:
the tf.data pipeline that `train` used before (kept below, `make_dataset`) against the
numpy batches of mtn_keras.data.batches through tf.data.Dataset.from_generator
(mtn_keras.training.inputs: the seeded order JAX trains in), as a ratio.

Why: `train` keeps tf.data under TensorFlow only if it is faster there (issue 50). Each
input trains its own `small` MTN, from the same weights, on the same sessions (the AOL
dev log's paper-protocol training split when ../shared/data is there, else made-up ones);
the first epoch of each, which traces the graphs, is not timed; then the two alternate,
an epoch at a time, so that load from other jobs hits both alike; the best epoch of each
is reported.

Run: python benchmarks/bench_input.py [--sessions 1024] [--rounds 3] [--preset small]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_train import make_trainer, real_sessions  # noqa: E402

from mtn_keras.data.batches import SessionBatches  # noqa: E402
from mtn_keras.data.encode import encode_buckets  # noqa: E402
from mtn_keras.training.inputs import fit_input  # noqa: E402


def make_dataset(sessions, vocab, max_tokens, batch_size, seed=0):
    """The tf.data pipeline `train` read until issue 50: whole sessions in batches of one
    number of queries, the sessions of each bucket and then the batches shuffled anew each
    epoch by tf.data under a seed."""
    datasets, batch_counts = [], []
    for s, arrays in encode_buckets(sessions, vocab, max_tokens).items():
        x = {key: arrays[key] for key in ("session_tokens", "session_ext", "decoder_input")}
        dataset = tf.data.Dataset.from_tensor_slices((x, arrays["target"]))
        dataset = dataset.shuffle(len(arrays["target"]), seed=seed + s)
        datasets.append(dataset.batch(batch_size))
        batch_counts.append(-(-len(arrays["target"]) // batch_size))
    choices = np.repeat(np.arange(len(datasets), dtype=np.int64), batch_counts)
    order = tf.data.Dataset.from_tensor_slices(choices).shuffle(len(choices), seed=seed)
    dataset = tf.data.Dataset.choose_from_datasets(datasets, order)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(sum(batch_counts)))
    return dataset.prefetch(tf.data.AUTOTUNE)


def epoch_seconds(model, data):
    """Seconds of one model.fit epoch over `data`."""
    start = time.perf_counter()
    model.fit(data, epochs=1, verbose=0, shuffle=False)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--workdir", default="/tmp/bench_input")
    args = parser.parse_args(argv)
    sessions, vocab, source = real_sessions(args.sessions, args.workdir)
    print(f"{len(sessions)} sessions of {source}, batch {args.batch_size}, {os.cpu_count()} CPUs")
    inputs = {
        "tf.data": make_dataset(sessions, vocab, 10, args.batch_size),
        "numpy": fit_input(SessionBatches(sessions, vocab, 10, args.batch_size, True, 0)),
    }
    models = {name: make_trainer("float32", len(vocab), args.preset) for name in inputs}
    for name in inputs:
        epoch_seconds(models[name], inputs[name])  # traces every shape
    best = dict.fromkeys(inputs, float("inf"))
    for round_ in range(args.rounds):
        for name in inputs:
            seconds = epoch_seconds(models[name], inputs[name])
            best[name] = min(best[name], seconds)
            print(f"  round {round_ + 1} {name:<8} {seconds:6.2f} s", flush=True)
    for name in inputs:
        print(f"{name:<8} {len(sessions) / best[name]:7.1f} sessions/s")
    print(f"tf.data / numpy epoch time: {best['tf.data'] / best['numpy']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
