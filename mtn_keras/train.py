"""`python -m mtn_keras.train`: train a suggestion model on a prepared dataset with model.fit.

Writes OUT/model.keras (the best epoch by validation loss), OUT/vocab.txt, OUT/config.json
and OUT/train_summary.json; OUT/backup lets `--resume` continue an interrupted run (one
killed before its first epoch ends starts again), and is removed only once model.keras is
written. A run holds OUT/.train.lock while it works: a second run into OUT is refused.
`--strategy` trains on several devices or machines through tf.distribute (see
mtn_keras/base/distribute.py and docs/scaling.md); then only the chief writes OUT.
"""

import argparse
import contextlib
import dataclasses
import importlib.util
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from mtn_keras.base.config import MODEL_NAMES, ModelConfig, TrainConfig, configure
from mtn_keras.base.distribute import (
    STRATEGIES,
    Cluster,
    local_gpus,
    on_cluster,
    read_cluster,
    resolve,
)
from mtn_keras.base.outputs import OutputError, check_out_path, lock_owner, owner_note, try_lock
from mtn_keras.base.parsing import positive_int
from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.cli import fail, file_name, run
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.training.artifacts import CONFIG, run_config
from mtn_keras.training.prepared_input import (
    STREAM_CHOICES,
    STREAM_FROM_BYTES,
    check_streamed,
    load_data,
    streams,
)

LOCK = ".train.lock"


class TrainInputError(Exception):
    """Training cannot start on this input; says what and where."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.train", description=__doc__)
    parser.add_argument("--data", type=file_name, required=True, help="prepared dataset directory")
    parser.add_argument("--model", default="mtn", choices=sorted(MODEL_NAMES))
    parser.add_argument("--preset", default="small", help="paper, small or tiny")
    parser.add_argument(
        "--out", type=file_name, required=True, help="output directory, e.g. saved_models/NAME"
    )
    parser.add_argument("--epochs", type=positive_int)
    parser.add_argument("--batch-size", type=positive_int)
    parser.add_argument("--seed", type=int)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any config field, e.g. --set copy=false",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run in --out from its last finished epoch",
    )
    parser.add_argument(
        "--strategy",
        default="auto",
        choices=STRATEGIES,
        help="auto (default): multi-worker when TF_CONFIG names more than one "
        "worker, mirrored when more than one GPU is visible, else one; "
        "--batch-size is per replica",
    )
    parser.add_argument(
        "--stream-input",
        default="auto",
        choices=STREAM_CHOICES,
        help="read the training batches from .npy files built once beside train.tsv "
        "(in DATA/streamed/) and memory-mapped, instead of holding the split in memory: "
        f"yes, no, or auto (default): yes when train.tsv is {STREAM_FROM_BYTES >> 20} MiB "
        "or more; the batches are the same either way",
    )
    parser.add_argument(
        "--steps-per-epoch", type=positive_int, help="cap batches per epoch (smoke runs)"
    )
    parser.add_argument(
        "--verbose",
        type=int,
        default=1,
        choices=range(4),
        help="Keras progress: 0 none, 1 a bar (a line per epoch when not a "
        "terminal), 2 a line per epoch; "
        "3 as 2, with TensorFlow's own log lines and the traceback of an error",
    )
    return parser.parse_args(argv)


def check_out(out: str, resume: bool) -> None:
    """Never overwrite a finished or running training silently; `--resume` continues a run
    that started (its config.json is there) and has not finished (no model.keras)."""
    try:
        check_out_path(out)
    except OutputError as error:
        raise TrainInputError(str(error)) from None
    names = set(os.listdir(out)) - {LOCK} if os.path.isdir(out) else set()
    if resume:
        if "model.keras" in names and "backup" not in names:
            raise TrainInputError(
                f"--resume: the run in {out} finished (model.keras is there); nothing to resume"
            )
        if "config.json" not in names and "backup" not in names:
            raise TrainInputError(f"--resume: no interrupted run in {out} (no config.json)")
    elif names:
        raise TrainInputError(
            f"{out} exists and is not empty; pass --resume to continue it, or choose another --out"
        )


def lock_run(out: str) -> TextIO:
    """Holds the run folder's lock for this process (released when it ends, even by a
    kill); raises TrainInputError naming the owner when another run holds it."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, LOCK)
    handle = try_lock(path, owner_note("train"))
    if handle is None:
        raise TrainInputError(
            f"{out} is in use by a running training ({lock_owner(path)}); "
            "wait for it to end, or choose another --out"
        )
    return handle


def check_options(train_config: TrainConfig, model_config: ModelConfig) -> None:
    """Raises TrainInputError for a setting no run can use: a number that is not finite,
    a negative weight decay or a seed outside [0, 2**32)."""
    values = {**dataclasses.asdict(model_config), **dataclasses.asdict(train_config)}
    for key, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise TrainInputError(f"{key} must be a finite number, not {value}")
    if values["weight_decay"] < 0:
        raise TrainInputError(f"weight_decay must be at least 0, not {values['weight_decay']}")
    if not 0 <= values["seed"] < 2**32:
        raise TrainInputError(f"--seed must be in [0, 2**32), not {values['seed']}")


def check_history(data: str, model: str, model_config: ModelConfig) -> None:
    """Raises TrainInputError when `history_queries` is set for a model other than MTN, or
    on a dataset prepared before users' histories were kept."""
    if not model_config.history_queries:
        return
    if model != "mtn":
        raise TrainInputError(f"history_queries is read by the mtn model only, not {model}")
    if not os.path.isfile(os.path.join(data, "history.tsv")):
        raise TrainInputError(
            f"history_queries: {data} has no history.tsv; prepare the dataset again"
        )


def check_resume(
    out: str, model: str, model_config: ModelConfig, train_config: TrainConfig
) -> None:
    """Raises TrainInputError if the interrupted run in `out` was started with other
    settings (any but the number of epochs), naming them."""
    path = os.path.join(out, CONFIG)
    if not os.path.isfile(path):
        return
    try:
        with open(path, encoding="utf-8") as handle:
            saved = json.load(handle)
        saved_config = {
            "model": saved.get("model"),
            **saved.get("model_config", {}),
            **saved.get("train_config", {}),
        }
    except (OSError, ValueError, TypeError, AttributeError) as error:
        raise TrainInputError(f"--resume: {path} cannot be read ({error})") from None
    wanted = run_config(model, model_config, train_config)
    wanted = {"model": model, **wanted["model_config"], **wanted["train_config"]}
    differences = [
        f"{key} {saved_config[key]!r} -> {value!r}"
        for key, value in wanted.items()
        if key != "epochs" and key in saved_config and saved_config[key] != value
    ]
    if differences:
        raise TrainInputError(
            f"--resume: the run in {out} was started with other settings "
            f"({', '.join(differences[:4])}{', ...' if len(differences) > 4 else ''}); "
            "resume with its --model, --preset, --batch-size, --seed and --set"
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        setup = checked_setup(args)
    except (TrainInputError, ValueError, OSError) as error:  # StrategyError is a ValueError
        return fail("train", error, args.verbose >= 3)

    from mtn_keras.training.backup import BackupError
    from mtn_keras.training.fitting import TrainingDiverged, fit_model

    if setup.strategy == "multi-worker":
        cluster = setup.cluster
        print(
            f"train: {cluster.task} of {cluster.workers}: waiting for the other workers "
            f"({', '.join(cluster.peers)}) to join",
            file=sys.stderr,
            flush=True,
        )

    # A bar redrawn with carriage returns is one endless line in a file or a pipe.
    verbose = 2 if args.verbose == 1 and not sys.stdout.isatty() else min(args.verbose, 2)
    try:
        summary = fit_model(
            args.model,
            setup.model_config,
            setup.train_config,
            setup.vocab,
            train_sessions=setup.splits["train"],
            valid_sessions=setup.splits["valid"],
            out=args.out,
            steps_per_epoch=args.steps_per_epoch,
            verbose=verbose,
            data_dir=args.data,
            strategy=setup.strategy,
            chief=setup.chief,
        )
    except (BackupError, OSError) as error:
        return fail("train", error, args.verbose >= 3)
    except TrainingDiverged as error:
        fail("train", error, args.verbose >= 3)
        return 1
    except KeyboardInterrupt:
        print(f"train: interrupted; continue with --resume --out {args.out}", file=sys.stderr)
        return 130
    finally:
        release(setup.lock, args.out)
    print(json.dumps(summary, indent=2))
    return 0


@dataclasses.dataclass
class Setup:
    """What the checks before training found: the data, the configs, the cluster and the
    strategy, whether this worker is the chief, and the run folder's lock (None if not)."""

    vocab: Vocabulary
    splits: dict[str, list[list[str]] | str]  # train: the file's path when it streams
    model_config: ModelConfig
    train_config: TrainConfig
    cluster: Cluster
    strategy: str
    chief: bool
    lock: TextIO | None


def checked_setup(args: argparse.Namespace) -> Setup:
    """Reads the data, resolves the configs and the strategy and checks the run folder,
    taking its lock (the chief only). Raises TrainInputError, ValueError or OSError, with
    the lock released and a folder that this run made removed."""
    lock = None
    try:
        stream = streams(args.data, args.stream_input)
        vocab, stats, splits = load_data(args.data, stream)
        if not os.environ.get("TF_CONFIG", "x").strip():
            del os.environ["TF_CONFIG"]  # blank: no cluster (TensorFlow would fail to parse it)
        cluster = read_cluster()
        # Only the chief writes --out; the other workers of a job only read its backup.
        chief = cluster.chief or not on_cluster(args.strategy, cluster)
        check_out_path_only(args.out)
        model_config, train_config = configure(
            args.preset,
            stats,
            len(vocab),
            epochs=args.epochs,
            batch_size=args.batch_size,
            seed=args.seed,
            overrides=args.set,
        )
        check_options(train_config, model_config)
        check_history(args.data, args.model, model_config)
        if chief:
            lock = lock_run(args.out)  # before the checks: two runs cannot both pass them
        if chief or args.resume:
            check_out(args.out, args.resume)
        if args.resume:
            check_resume(args.out, args.model, model_config, train_config)
        if stream:
            check_streamed(args.data, vocab, model_config.max_query_tokens)
        if importlib.util.find_spec("tensorflow"):  # absent on a JAX machine
            import_tensorflow(args.verbose >= 3)  # after the checks, silently unless asked
        strategy = resolve(args.strategy, cluster, local_gpus())
    except (TrainInputError, ValueError, OSError):
        release(lock, args.out, remove_out=True)
        raise
    return Setup(vocab, splits, model_config, train_config, cluster, strategy, chief, lock)


def check_out_path_only(out: str) -> None:
    """Raises TrainInputError if --out is a file or lies under one (before it is made)."""
    try:
        check_out_path(out)
    except OutputError as error:
        raise TrainInputError(str(error)) from None


def release(lock: TextIO | None, out: str, remove_out: bool = False) -> None:
    """Releases the run folder's lock (and removes the folder if this run made it empty)."""
    if lock is None:
        return
    with contextlib.suppress(OSError):
        os.remove(os.path.join(out, LOCK))
    lock.close()
    if remove_out:
        with contextlib.suppress(OSError):
            os.rmdir(out)  # only if empty: made by lock_run for a run that never started


if __name__ == "__main__":
    run(main, "train")
