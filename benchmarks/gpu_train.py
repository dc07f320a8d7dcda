"""The `paper` MTN trained under JAX for a fixed number of steps, in mixed precision on a GPU:
steps per second, sessions per second, the loss and the peak memory, and the full AOL
epoch's time they imply (docs/scaling.md's estimate is what this tests).

Why: the GPU machines at hand hold JAX, not TensorFlow, and reach no package registry; this
is the run prepared for one (issue 50). Batches are train's own (mtn_keras.data.batches,
seeded), from a prepared dataset's training split (--data), else as bench_train.py takes
them (the AOL dev log's when ../shared/data is there, else made-up), full batches only (a
last, smaller batch of a bucket is one more shape to compile); the optimizer is train's
(compile_model). A step whose batch shape is new compiles; those steps are counted apart,
and the rates are of the other steps. Stops early, saying so, after --budget seconds.

On the GPU machine (Python 3.12, no registry), the wheels of benchmarks/gpu_wheels.txt go
beside the code (4.5 MB), fetched here with
  pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \\
    --platform manylinux2014_x86_64 -d .whl -r benchmarks/gpu_wheels.txt
and there:
  pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site:. KERAS_BACKEND=jax python3 benchmarks/gpu_train.py [--data DIR]

Run: KERAS_BACKEND=jax python benchmarks/gpu_train.py [--steps 300] [--batch-size 128]
[--precision auto|mixed_float16|float32] [--preset paper] [--data DIR] [--budget 420]
"""

import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
from bench_train import real_sessions  # noqa: E402

from mtn_keras.base.config import configure  # noqa: E402
from mtn_keras.data.batches import SessionBatches  # noqa: E402
from mtn_keras.data.prepared import load_split, load_stats  # noqa: E402
from mtn_keras.data.vocab import Vocabulary  # noqa: E402
from mtn_keras.models import build_model  # noqa: E402
from mtn_keras.training.fitting import accelerator  # noqa: E402
from mtn_keras.training.optimizer import compile_model  # noqa: E402

AOL_SESSIONS = 1_680_000  # one epoch of the full AOL collection (docs/scaling.md)


def training_data(args):
    """The training sessions and vocabulary: a prepared dataset's, or made-up ones."""
    if args.data:
        vocab = Vocabulary.load(os.path.join(args.data, "vocab.txt"))
        return load_split(args.data, "train"), vocab, load_stats(args.data), args.data
    sessions, vocab, source = real_sessions(args.sessions, "/tmp/gpu_train")
    return sessions, vocab, {}, source


def peak_memory_mb():
    """The device's peak bytes in use (a GPU's, as JAX counts them), else the process's
    peak resident size."""
    if keras.config.backend() == "jax":
        import jax

        stats = jax.local_devices()[0].memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            return stats["peak_bytes_in_use"] / 2**20, "device"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "process (max RSS)"


def full_batches(batches, size):
    """The full batches of `batches`, epoch after epoch, in their seeded order."""
    if not any(len(rows) == size for _, rows in batches.plan()):
        raise ValueError(f"no number of queries has {size} sessions: lower --batch-size")
    while True:
        for index, (_, rows) in enumerate(batches.plan()):
            if len(rows) == size:
                yield batches[index]
        batches.epoch += 1


def train_steps(model, batches, steps, budget):
    """Runs up to `steps` training steps; the seconds of the steps that compiled (a new
    batch shape) and of the others, and the last loss."""
    shapes, started = set(), time.perf_counter()
    times = {"compile": [], "run": []}
    loss = None
    for _, (x, y) in zip(range(steps), batches):
        if time.perf_counter() - started > budget:
            break
        shape = x["session_tokens"].shape
        begin = time.perf_counter()
        loss = float(model.train_on_batch(x, y, return_dict=True)["loss"])  # waits for it
        times["compile" if shape not in shapes else "run"].append(time.perf_counter() - begin)
        shapes.add(shape)
    return times, loss


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--precision", default="auto", help="auto: mixed_float16 on a GPU")
    parser.add_argument("--data", help="a prepared dataset (default: made-up sessions)")
    parser.add_argument("--sessions", type=int, default=16_384, help="sessions sampled or made up")
    parser.add_argument("--budget", type=float, default=420, help="seconds of steps at most")
    args = parser.parse_args(argv)
    device = accelerator()
    precision = args.precision
    if precision == "auto":
        precision = "mixed_float16" if device == "gpu" else "float32"
    sessions, vocab, stats, source = training_data(args)
    keras.mixed_precision.set_global_policy(precision)
    model_config, train_config = configure(
        args.preset, stats, len(vocab), batch_size=args.batch_size
    )
    keras.utils.set_random_seed(train_config.seed)
    model = build_model("mtn", model_config)
    model.build()
    compile_model(model, model_config, train_config)
    batch = train_config.batch_size
    batches = SessionBatches(
        sessions, vocab, model_config.max_query_tokens, batch, shuffle=True, seed=0
    )
    times, loss = train_steps(model, full_batches(batches, batch), args.steps, args.budget)
    run = times["run"]
    steps_per_second = len(run) / sum(run) if run else None
    memory, memory_of = peak_memory_mb()
    report = {
        "backend": keras.config.backend(),
        "device": device,
        "precision": precision,
        "preset": args.preset,
        "parameters": int(model.count_params()),
        "data": f"{source}: {len(sessions)} sessions, vocabulary {len(vocab)}",
        "batch_size": batch,
        "steps": len(run) + len(times["compile"]),
        "stopped_by_budget": len(run) + len(times["compile"]) < args.steps,
        "compile_steps": len(times["compile"]),
        "compile_seconds": round(sum(times["compile"]), 1),
        "steps_per_second": steps_per_second and round(steps_per_second, 3),
        "sessions_per_second": steps_per_second and round(steps_per_second * batch, 1),
        "aol_epoch_minutes": steps_per_second
        and round(AOL_SESSIONS / (steps_per_second * batch) / 60, 1),
        "loss": loss,
        "peak_memory_mb": round(memory, 1),
        "peak_memory_of": memory_of,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
