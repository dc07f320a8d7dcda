"""`python -m mtn_keras.compare --data DIR --out DIR`: the paper's comparison on one budget.

Trains each row below with the same preset, epochs and seed into OUT/ROW (by
`mtn_keras.fitting.fit_model`, as `mtn_keras.train` does), evaluates it on the test split
with the anchors, and writes OUT/compare.json, OUT/compare.md (the paper's Table 2 layout,
then parameters, seconds per epoch and perplexity) and OUT/bleu.png. A row already trained
in OUT is evaluated again, not retrained; an interrupted one resumes. `--quick`: the tiny
preset, 1 epoch and a few hundred sessions, to see the whole thing run.

Rows: MTN with and without the copy head; the four peers; and the paper's Table 3
ablation, MTN without its session layers (levels=1). The `transformer` row is that table's
other arm: its Q+S encoder and D decoder layers are as many as MTN's Q+S+D.
"""

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from mtn_keras.base.config import MODEL_NAMES, PRESETS, configure
from mtn_keras.base.quiet import import_tensorflow, show_tensorflow_logs
from mtn_keras.cli import add_verbose, fail, file_name, needs_tensorflow
from mtn_keras.data.prepared import load_split, load_stats
from mtn_keras.data.vocab import Vocabulary

ROWS = [  # (row, model, --set overrides)
    ("mtn", "mtn", []),
    ("mtn-no-copy", "mtn", ["copy=false"]),
    ("mtn-no-session", "mtn", ["levels=1"]),
    ("transformer", "transformer", []),
    ("hred", "hred", []),
    ("mnsrf", "mnsrf", []),
    ("seq2seq", "seq2seq", []),
]
QUICK_SESSIONS = {"train": 400, "valid": 100, "test": 100}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mtn_keras.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=file_name, required=True, help="prepared dataset directory")
    parser.add_argument(
        "--out", type=file_name, required=True, help="output directory, one folder per row"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny preset, 1 epoch, the first few hundred sessions of each split",
    )
    parser.add_argument("--preset", help="paper, small or tiny (default small; tiny with --quick)")
    parser.add_argument("--epochs", type=int, help="epochs of every row (default: the preset's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--models",
        default=",".join(MODEL_NAMES),
        help="comma-separated models whose rows to run (default: all)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field in every row",
    )
    add_verbose(parser)
    args = parser.parse_args(argv)
    args.models = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = sorted(set(args.models) - set(MODEL_NAMES))
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {sorted(MODEL_NAMES)}")
    args.preset = args.preset or ("tiny" if args.quick else "small")
    if args.preset not in PRESETS:
        parser.error(f"unknown preset {args.preset!r}; choose one of {sorted(PRESETS)}")
    if args.quick and args.epochs is None:
        args.epochs = 1
    show_tensorflow_logs(args.verbose)
    return args


def train_row(
    row: str,
    model: str,
    overrides: list[str],
    args: argparse.Namespace,
    vocab: Vocabulary,
    stats: dict[str, Any],
    splits: dict[str, list[list[str]]],
) -> dict[str, Any]:
    """Train one row into OUT/ROW unless it is there already; its training summary."""
    out = os.path.join(args.out, row)
    summary_path = os.path.join(out, "train_summary.json")
    if os.path.isfile(summary_path):
        print(f"compare: {row}: trained already in {out}", file=sys.stderr)
    else:
        import_tensorflow()
        import keras

        from mtn_keras.training.fitting import fit_model

        keras.backend.clear_session()
        sets = args.set + overrides
        model_config, train_config = configure(
            args.preset, stats, len(vocab), epochs=args.epochs, seed=args.seed, overrides=sets
        )
        os.makedirs(out, exist_ok=True)
        print(f"compare: training {row}", file=sys.stderr)
        fit_model(
            model,
            model_config,
            train_config,
            vocab,
            splits["train"],
            splits["valid"],
            out,
            verbose=2,
            data_dir=args.data,
        )
    with open(summary_path) as handle:
        return json.load(handle)


def training_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Size and cost of each row, and its test perplexity (comparable across losses)."""
    lines = [
        "| Model | Parameters | Epochs | Seconds per epoch | Perplexity |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for row, result in results.items():
        t = result["training"]
        lines.append(
            f"| {row} | {t['parameters']:,} | {t['epochs']} | "
            f"{t['seconds_per_epoch']:.1f} | {result['perplexity']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if code := needs_tensorflow("compare"):
        return code
    try:
        vocab = Vocabulary.load(os.path.join(args.data, "vocab.txt"))
        stats = load_stats(args.data)
        splits = {name: load_split(args.data, name) for name in QUICK_SESSIONS}
    except (OSError, ValueError) as error:
        return fail("compare", error, args.verbose)
    if args.quick:
        splits = {name: sessions[: QUICK_SESSIONS[name]] for name, sessions in splits.items()}
    rows = [row for row in ROWS if row[1] in args.models]

    from mtn_keras.model_reports import evaluate
    from mtn_keras.scorecard import bleu_chart, markdown_table, table_rows, write_json
    from mtn_keras.training.artifacts import load_trained

    results: dict[str, dict[str, Any]] = {}
    for row, model, overrides in rows:
        training = train_row(row, model, overrides, args, vocab, stats, splits)
        trained = load_trained(os.path.join(args.out, row))
        results[row] = {**evaluate(trained, splits["test"], splits["train"]), "training": training}
        write_json(results, os.path.join(args.out, "compare.json"))  # each row as it finishes
    table = markdown_table(table_rows(results)) + "\n" + training_table(results)
    with open(os.path.join(args.out, "compare.md"), "w") as handle:
        handle.write(table)
    bleu_chart(table_rows(results), os.path.join(args.out, "bleu.png"))
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
