"""`python -m mtn_keras.train`: train a suggestion model on a prepared dataset with model.fit.

Writes OUT/model.keras (the best epoch by validation loss), OUT/vocab.txt, OUT/config.json
and OUT/train_summary.json; OUT/backup lets `--resume` continue an interrupted run, and is
removed only once model.keras is written. `--strategy` trains on several devices or machines
through tf.distribute (see mtn_keras/distribute.py and docs/scaling.md); then only the chief
writes OUT.
"""

import argparse
import dataclasses
import json
import os
import sys

from mtn_keras.cli import fail, positive_int
from mtn_keras.config import MODEL_NAMES, apply_overrides, check_configs, preset
from mtn_keras.data.prepare import load_split, load_stats
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.distribute import STRATEGIES, on_cluster, read_cluster, resolve
from mtn_keras.outputs import OutputError, check_out_path
from mtn_keras.quiet import import_tensorflow


class TrainInputError(Exception):
    """Training cannot start on this input; says what and where."""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.train", description=__doc__)
    parser.add_argument("--data", required=True, help="prepared dataset directory")
    parser.add_argument("--model", default="mtn", choices=sorted(MODEL_NAMES))
    parser.add_argument("--preset", default="small", help="paper, small or tiny")
    parser.add_argument("--out", required=True, help="output directory, e.g. saved_models/NAME")
    parser.add_argument("--epochs", type=positive_int)
    parser.add_argument("--batch-size", type=positive_int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override any config field, e.g. --set copy=false")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run in --out from its last finished epoch")
    parser.add_argument("--strategy", default="auto", choices=STRATEGIES,
                        help="auto (default): multi-worker when TF_CONFIG names more than one "
                        "worker, mirrored when more than one GPU is visible, else one; "
                        "--batch-size is per replica")
    parser.add_argument("--steps-per-epoch", type=positive_int, help="cap batches per epoch (smoke runs)")
    parser.add_argument("--verbose", type=int, default=1, choices=range(4),
                        help="Keras progress: 0 none, 1 a bar (a line per epoch when not a "
                        "terminal), 2 a line per epoch; "
                        "3 as 2, with TensorFlow's own log lines and the traceback of an error")
    return parser.parse_args(argv)


def configure(preset_name, stats, vocab_size, *, epochs=None, batch_size=None, seed=None,
              overrides=()):
    """The model and training configs: the preset, then the data's sizes (`stats` of the
    prepared dataset), then `epochs`, `batch_size` and `seed` where given, then the
    `key=value` overrides."""
    model_config, train_config = preset(preset_name)
    options = stats.get("options", {})
    model_config.vocab_size = vocab_size
    model_config.max_query_tokens = options.get(
        "max_query_pieces", options.get("max_query_tokens", model_config.max_query_tokens))
    model_config.max_queries = options.get("max_queries", model_config.max_queries)
    for name, value in (("epochs", epochs), ("batch_size", batch_size), ("seed", seed)):
        if value is not None:
            setattr(train_config, name, value)
    apply_overrides([model_config, train_config], overrides)
    if model_config.vocab_size != vocab_size:
        raise ValueError(f"vocab_size is the data's ({vocab_size} tokens in vocab.txt); "
                         "it cannot be set")
    check_configs(model_config, train_config)
    return model_config, train_config


def check_out(out, resume):
    """Never overwrite a finished or running training silently."""
    try:
        check_out_path(out)
    except OutputError as error:
        raise TrainInputError(str(error)) from None
    backup = os.path.join(out, "backup")
    if resume:
        if not os.path.isdir(backup):
            raise TrainInputError(f"--resume: no interrupted run in {out} (no {backup})")
    elif os.path.isdir(out) and os.listdir(out):
        raise TrainInputError(
            f"{out} exists and is not empty; pass --resume to continue it, "
            "or choose another --out"
        )


def run_config(model, model_config):
    """What a run is started with, as config.json records it; --resume must match it."""
    return {"model": model, "model_config": dataclasses.asdict(model_config)}


def check_resume(out, model, model_config):
    """Raises TrainInputError if the interrupted run in `out` was built otherwise."""
    path = os.path.join(out, "config.json")
    if not os.path.isfile(path):
        return
    try:
        with open(path, encoding="utf-8") as handle:
            saved = json.load(handle)
    except (OSError, ValueError):
        return  # rewritten when the run ends
    wanted = run_config(model, model_config)
    saved_config = {"model": saved.get("model"), **saved.get("model_config", {})}
    differences = [
        f"{key} {saved_config.get(key)!r} -> {value!r}"
        for key, value in {"model": model, **wanted["model_config"]}.items()
        if saved_config.get(key) != value
    ]
    if differences:
        raise TrainInputError(
            f"--resume: the run in {out} was started with another configuration "
            f"({', '.join(differences[:4])}{', ...' if len(differences) > 4 else ''}); "
            "resume with its --model, --preset and --set"
        )


def load_data(directory):
    """The prepared dataset's vocabulary, stats and train/valid sessions, checked."""
    for name in ("vocab.txt", "train.tsv", "valid.tsv", "stats.json"):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise TrainInputError(f"{path} is missing; run `python -m mtn_keras.data prepare` first")
    vocab = Vocabulary.load(os.path.join(directory, "vocab.txt"))
    stats = load_stats(directory)
    splits = {name: load_split(directory, name) for name in ("train", "valid")}
    for name, what in (("train", "train on"), ("valid", "choose the best epoch by")):
        if not splits[name]:
            raise TrainInputError(
                f"{os.path.join(directory, name + '.tsv')} holds no session: nothing to {what} "
                "(prepare again with a larger share in --split)"
            )
    return vocab, stats, splits


def main(argv=None):
    args = parse_args(argv)
    try:
        vocab, stats, splits = load_data(args.data)
        cluster = read_cluster()
        # Only the chief writes --out; the other workers of a job only read its backup.
        chief = cluster.chief or not on_cluster(args.strategy, cluster)
        if chief or args.resume:
            check_out(args.out, args.resume)
        model_config, train_config = configure(
            args.preset, stats, len(vocab), epochs=args.epochs, batch_size=args.batch_size,
            seed=args.seed, overrides=args.set,
        )
        if args.resume:
            check_resume(args.out, args.model, model_config)
        tf = import_tensorflow(args.verbose >= 3)  # after the checks, silently unless asked
        strategy = resolve(args.strategy, cluster, len(tf.config.list_physical_devices("GPU")))
        if chief:
            os.makedirs(args.out, exist_ok=True)
        if chief and not args.resume:
            with open(os.path.join(args.out, "config.json"), "w", encoding="utf-8") as handle:
                json.dump(run_config(args.model, model_config), handle, indent=2)
    except (TrainInputError, ValueError, OSError) as error:  # StrategyError is a ValueError
        return fail("train", error, args.verbose >= 3)

    from mtn_keras.fitting import fit_model

    # A bar redrawn with carriage returns is one endless line in a file or a pipe.
    verbose = 2 if args.verbose == 1 and not sys.stdout.isatty() else min(args.verbose, 2)
    summary = fit_model(
        args.model, model_config, train_config, vocab,
        train_sessions=splits["train"], valid_sessions=splits["valid"],
        out=args.out, resume=args.resume, steps_per_epoch=args.steps_per_epoch,
        verbose=verbose, data_dir=args.data, strategy=strategy, chief=chief,
    )
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
