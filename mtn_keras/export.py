"""`python -m mtn_keras.export --model DIR --out OUT`: a SavedModel that turns raw session
strings into suggestions with plain TensorFlow (signatures in docs/contracts.md)."""

import argparse
import json
import os
from dataclasses import asdict

from mtn_keras import cli
from mtn_keras.base.config import DecodeConfig
from mtn_keras.base.outputs import OutputError, check_out_path, staged_directory
from mtn_keras.training.artifacts import ModelDirError, TrainedModel, load_trained


def export(trained: TrainedModel, out: str, decoding: DecodeConfig = DecodeConfig()) -> None:
    """Write the SavedModel of a loaded `TrainedModel` to `out`, replacing it. It is written
    beside `out` and renamed into place, so a killed export leaves no half of one."""
    import tensorflow as tf

    from mtn_keras.serving.service import SuggestionService
    from mtn_keras.serving.warmup import write_warmup

    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    signatures = {
        "serving_default": service.suggest,
        "suggest": service.suggest,
        "complete": service.complete,
        "session_attention": service.session_attention,
    }
    # The history's candidates are ranked with the others; a third level reads it too.
    if service.hybrid is not None or trained.config.history_queries:
        signatures["suggest_with_history"] = service.suggest_with_history
        signatures["complete_with_history"] = service.complete_with_history
    ranking = None
    if service.hybrid is not None:
        info = trained.ranking.info if trained.ranking is not None else None
        assert info is not None, "a hybrid comes of a ranking, and a ranking has its info"
        ranking = {
            **info,
            "threshold": service.hybrid.threshold,
            "history_threshold": service.hybrid.history_threshold,
        }
    with staged_directory(out, "export") as temp:
        tf.saved_model.save(service, temp, signatures=signatures)
        write_warmup(temp, trained.name, signatures)
        with open(os.path.join(temp, "export.json"), "w") as handle:
            json.dump(
                {
                    "model": trained.name,
                    **asdict(decoding),
                    "alpha": service.alpha,
                    "max_queries": service.max_queries,
                    "max_query_tokens": service.n,
                    "vocab_size": service.vocab_size,
                    "history_size": service.history.size,
                    "ranking": ranking,
                },
                handle,
                indent=2,
            )


# What an export writes; --force replaces a folder of these and nothing else.
SAVEDMODEL_FILES = {
    "saved_model.pb",
    "variables",
    "assets",
    "assets.extra",
    "fingerprint.pb",
    "export.json",
}


def check_out(out: str, model: str, force: bool) -> None:
    """Raises OutputError if `out` cannot be written: a file, the model's own folder or one
    that holds it, not empty without `force`, or (with force) holding anything but a
    SavedModel (a training run, notes): --force never deletes what an export did not write.
    A new folder inside the model's (`RUN/savedmodel`, where the app looks) is fine."""
    check_out_path(out)
    where, source = os.path.realpath(out), os.path.realpath(model)
    if os.path.commonpath([where, source]) == where:
        raise OutputError(
            f"--out {out} is the model's folder {model} or holds it; choose another --out"
        )
    if not os.path.isdir(out) or not os.listdir(out):
        return
    if not force:
        raise OutputError(f"{out} exists; pass --force to replace it")
    others = sorted(set(os.listdir(out)) - SAVEDMODEL_FILES)
    if others:
        raise OutputError(
            f"--out {out} holds files that are not an exported SavedModel ({', '.join(others[:3])}"
            f"{', ...' if len(others) > 3 else ''}); --force replaces only a SavedModel"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.export", description=__doc__)
    cli.add_model_option(parser, cli.TRAINED_HELP)
    parser.add_argument(
        "--out", type=cli.file_name, required=True, help="SavedModel directory to create"
    )
    cli.add_decode_arguments(parser, fixed=True)
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)
    if code := cli.needs_tensorflow("export", args.verbose):
        return code
    try:
        check_out(args.out, args.model, args.force)
        trained = load_trained(args.model)
        export(trained, args.out, cli.decode_config(args))
    except (ModelDirError, OutputError, OSError) as error:
        return cli.fail("export", error, args.verbose)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    cli.run(main, "export")
