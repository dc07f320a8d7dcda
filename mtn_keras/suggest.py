"""`python -m mtn_keras.suggest --model DIR QUERY [QUERY ...]`: print the k best next
queries for a session (oldest query first), one `score<TAB>suggestion<TAB>source` line each
(the ranker's confidence and model/log/model+log with a ranking, else the length-normalised
log-probability and model; no source for an export that has none)."""

import argparse
import os
import sys

from mtn_keras.artifacts import ModelDirError, load_trained
from mtn_keras.cli import NOTHING_TO_SHOW, add_decode_arguments, add_verbose, decode_config, fail, needs_tensorflow
from mtn_keras.data.text import normalise
from mtn_keras.quiet import import_tensorflow
from mtn_keras.serving.savedmodel import SavedModelError, call, load, resolve


def savedmodel_suggestions(path, queries, prefix):
    """(suggestions, scores, sources) of an exported SavedModel for one session, with plain
    TensorFlow (sources are "" for an export that has none)."""
    path = resolve(path)
    tf = import_tensorflow()
    loaded, _ = load(path, ["complete" if prefix else "suggest"])
    inputs = {"session": tf.constant([queries])}
    if prefix:
        inputs["prefix"] = tf.constant([prefix])
    out = call(loaded, path, "complete" if prefix else "suggest", **inputs)
    sources = out["sources"][0] if "sources" in out else [b""] * len(out["scores"][0])
    return out["suggestions"][0], out["scores"][0], sources


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.suggest", description=__doc__)
    parser.add_argument(
        "--model", required=True,
        help="a directory written by mtn_keras.train, or an exported SavedModel (or a directory "
        "holding one in savedmodel/), as mtn-tui takes; a SavedModel's decoding was fixed at "
        "export, so of the options below only --k applies to it",
    )
    add_decode_arguments(parser)
    parser.add_argument("--prefix", default="", help="words of the next query already typed")
    parser.add_argument("queries", nargs="+", help="the session so far, oldest first")
    add_verbose(parser)
    args = parser.parse_args(argv)
    decoding = decode_config(args)
    if not any(normalise(query) for query in args.queries):
        print("suggest: no suggestion (the session has no words after normalising)", file=sys.stderr)
        return NOTHING_TO_SHOW
    if code := needs_tensorflow("suggest", args.verbose):
        return code
    trained_dir = os.path.isfile(os.path.join(args.model, "model.keras"))
    if not trained_dir and (resolve(args.model) / "saved_model.pb").is_file():
        try:
            texts, scores, sources = savedmodel_suggestions(args.model, args.queries, args.prefix)
        except SavedModelError as error:
            return fail("suggest", error, args.verbose)
        texts, scores, sources = texts[: args.k], scores[: args.k], sources[: args.k]
    else:
        try:
            trained = load_trained(args.model)
        except ModelDirError as error:
            return fail("suggest", error, args.verbose)
        import tensorflow as tf

        from mtn_keras.serving.service import SuggestionService

        service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
        session = tf.constant([args.queries])
        if args.prefix:
            result = service.complete(session, tf.constant([args.prefix]))
        else:
            result = service.suggest(session)
        texts, scores, sources = (result[key][0].numpy() for key in ("suggestions", "scores", "sources"))
    rows = zip(texts, scores, sources)
    lines = ["\t".join([f"{score:.4f}", text.decode()] + ([source.decode()] if source else []))
             for text, score, source in rows if text]
    if not lines:
        print("suggest: no suggestion passed the filters and the confidence threshold "
              "(--threshold 0 shows every candidate)", file=sys.stderr)
        return NOTHING_TO_SHOW
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
