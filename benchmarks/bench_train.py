"""Training throughput of the `small` MTN: sessions/s and target tokens/s, fp32 at batch 64
(today's training) against the faster options, as ratios, in one process.

Why: every lever for unseen users is an experiment on a 2-core CPU, so an epoch's time
bounds how many can be run. Each option trains its own fresh model on the same fixed
stream of real batches (the AOL dev log's paper-protocol training split when
../shared/data is there, else made-up sessions), in rounds: every round runs each option
once over the stream, a slice at a time and the options' slices interleaved, so that load
from other jobs hits all options alike; the best round of each is reported (the least
disturbed). The first pass over each batch shape, which traces the graph, is not timed.

Options: `fp32` (float32, the reference), `bf16` (the `mixed_bfloat16` policy: bfloat16
matmuls, float32 variables and loss), each at batch 64, 128 and 256 (the same sessions in
fewer, larger steps; the learning-rate schedule is per step, so a larger batch also needs
its schedule checked on validation perplexity before it is adopted).

Run: python benchmarks/bench_train.py [--sessions 1536] [--rounds 2] [--options fp32-64,...]
[--preset small]
"""

import argparse
import os
import random
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras

from mtn_keras.base.config import preset
from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.models import build_model
from mtn_keras.training.optimizer import compile_model

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AOL_DEV = os.path.join(REPO, "..", "shared", "data", "aol", "aol-top1000-dev.txt.gz")
OPTIONS = ("fp32-64", "bf16-64", "fp32-128", "bf16-128", "fp32-256", "bf16-256")
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16"}


def real_sessions(count, workdir):
    """`count` sessions of the AOL dev log's paper-protocol training split (seeded sample)
    and that split's vocabulary, or made-up sessions of 3..5 queries when the log is
    absent; and the source's name."""
    if os.path.isfile(AOL_DEV):
        out = os.path.join(workdir, "aol")
        prepare([AOL_DEV], out, progress=False, force=True)
        with open(os.path.join(out, "train.tsv"), encoding="utf-8") as file:
            sessions = [line.rstrip("\n").split("\t") for line in file]
        vocab = Vocabulary.load(os.path.join(out, "vocab.txt"))
        return random.Random(0).sample(sessions, count), vocab, "AOL dev log (paper protocol)"
    rng = random.Random(0)
    words = [f"w{i}" for i in range(10_000)]
    sessions = [
        [" ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(rng.randint(3, 5))]
        for _ in range(count)
    ]
    vocab = Vocabulary.from_sessions(sessions, min_count=1)
    return sessions, vocab, "made-up sessions (AOL dev log absent)"


def batches(sessions, vocab, batch_size):
    """The fixed stream: the sessions' batches as numpy, in one seeded order (a last,
    smaller batch of each number of queries included, as in an epoch)."""
    return list(SessionBatches(sessions, vocab, 10, batch_size, shuffle=True, seed=0))


def make_trainer(policy, vocab_size, preset_name="small"):
    """A fresh MTN of the preset under `policy`, compiled as training compiles it."""
    keras.mixed_precision.set_global_policy(policy)
    try:
        model_config, train_config = preset(preset_name)
        model_config.vocab_size = vocab_size
        keras.utils.set_random_seed(0)
        model = build_model("mtn", model_config)
        model.build()
        compile_model(model, model_config, train_config)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return model


def run_stream(model, stream):
    """Seconds to train on every batch of the stream once."""
    start = time.perf_counter()
    for x, y in stream:
        model.train_on_batch(x, y)
    return time.perf_counter() - start


def slices(stream, count):
    """The stream cut into `count` consecutive slices (some empty when it is shorter)."""
    return [stream[len(stream) * i // count : len(stream) * (i + 1) // count] for i in range(count)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1536, help="sessions in the stream")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--options", default=",".join(OPTIONS))
    parser.add_argument("--workdir", default="/tmp/bench_train")
    parser.add_argument("--preset", default="small", help="the MTN's preset (default small)")
    args = parser.parse_args(argv)
    options = args.options.split(",")
    sessions, vocab, source = real_sessions(args.sessions, args.workdir)
    targets = sum(len(q.split()) + 1 for s in sessions for q in s[1:])  # words + <eos>
    print(
        f"{len(sessions)} sessions of {source}, {targets} target tokens, "
        f"vocabulary {len(vocab)}; {os.cpu_count()} CPUs"
    )
    streams = {
        size: batches(sessions, vocab, size) for size in {int(o.split("-")[1]) for o in options}
    }
    models = {}
    for option in options:
        precision, size = option.split("-")
        models[option] = make_trainer(POLICIES[precision], len(vocab), args.preset)
        shapes = {x["session_tokens"].shape: (x, y) for x, y in streams[int(size)]}
        run_stream(models[option], list(shapes.values()))  # trace the graph of each shape
    count = min(len(stream) for stream in streams.values())
    parts = {option: slices(streams[int(option.split("-")[1])], count) for option in options}
    best = {option: float("inf") for option in options}
    for round_ in range(args.rounds):
        seconds = dict.fromkeys(options, 0.0)
        for i in range(count):
            for option in options:
                seconds[option] += run_stream(models[option], parts[option][i])
        for option in options:
            best[option] = min(best[option], seconds[option])
            print(f"  round {round_ + 1} {option:<9} {seconds[option]:7.1f} s", flush=True)
    reference = best[options[0]]
    print(f"\n{'option':<10}{'sessions/s':>12}{'tokens/s':>12}{'ratio':>8}")
    for option in options:
        print(
            f"{option:<10}{len(sessions) / best[option]:>12.1f}"
            f"{targets / best[option]:>12.0f}{reference / best[option]:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
