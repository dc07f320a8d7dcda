"""`python -m mtn_keras.train`: train a suggestion model on a prepared dataset with model.fit.

Writes OUT/model.keras (the best epoch by validation loss), OUT/vocab.txt, OUT/config.json
and OUT/train_summary.json; OUT/backup lets `--resume` continue an interrupted run.
"""

import argparse
import json
import os
import sys

from mtn_keras.config import MODEL_NAMES, apply_overrides, preset
from mtn_keras.data.prepare import load_split, load_stats
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.quiet import import_tensorflow


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.train", description=__doc__)
    parser.add_argument("--data", required=True, help="prepared dataset directory")
    parser.add_argument("--model", default="mtn", choices=sorted(MODEL_NAMES))
    parser.add_argument("--preset", default="small", help="paper, small or tiny")
    parser.add_argument("--out", required=True, help="output directory, e.g. saved_models/NAME")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override any config field, e.g. --set copy=false")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run in --out from its last finished epoch")
    parser.add_argument("--steps-per-epoch", type=int, help="cap batches per epoch (smoke runs)")
    parser.add_argument("--verbose", type=int, default=1, choices=range(4),
                        help="Keras progress: 0 none, 1 a bar, 2 a line per epoch; "
                        "3 as 2, and TensorFlow's own log lines")
    return parser.parse_args(argv)


def configure(args, stats, vocab_size):
    """The model and training configs: preset, then the data's sizes, then overrides."""
    model_config, train_config = preset(args.preset)
    options = stats.get("options", {})
    model_config.vocab_size = vocab_size
    model_config.max_query_tokens = options.get("max_query_tokens", model_config.max_query_tokens)
    model_config.max_queries = options.get("max_queries", model_config.max_queries)
    for name in ("epochs", "batch_size", "seed"):
        if getattr(args, name) is not None:
            setattr(train_config, name, getattr(args, name))
    apply_overrides([model_config, train_config], args.set)
    return model_config, train_config


def check_out(out, resume):
    """Never overwrite a finished or running training silently."""
    backup = os.path.join(out, "backup")
    if resume:
        if not os.path.isdir(backup):
            raise SystemExit(f"train: --resume: no interrupted run in {out} (no {backup})")
    elif os.path.isdir(out) and os.listdir(out):
        raise SystemExit(
            f"train: {out} exists and is not empty; pass --resume to continue it, "
            "or choose another --out"
        )


def main(argv=None):
    args = parse_args(argv)
    for name in ("vocab.txt", "train.tsv", "valid.tsv", "stats.json"):
        path = os.path.join(args.data, name)
        if not os.path.isfile(path):
            raise SystemExit(f"train: {path} is missing; run `python -m mtn_keras.data prepare` first")
    check_out(args.out, args.resume)
    vocab = Vocabulary.load(os.path.join(args.data, "vocab.txt"))
    stats = load_stats(args.data)
    try:
        model_config, train_config = configure(args, stats, len(vocab))
    except ValueError as error:
        raise SystemExit(f"train: {error}")
    os.makedirs(args.out, exist_ok=True)

    import_tensorflow(args.verbose >= 3)  # after the checks, silently unless asked
    from mtn_keras.training import fit_model

    summary = fit_model(
        args.model, model_config, train_config, vocab,
        train_sessions=load_split(args.data, "train"),
        valid_sessions=load_split(args.data, "valid"),
        out=args.out, resume=args.resume, steps_per_epoch=args.steps_per_epoch,
        verbose=min(args.verbose, 2), data_dir=args.data,
    )
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
