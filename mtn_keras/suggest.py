"""`python -m mtn_keras.suggest --model DIR QUERY [QUERY ...]`: print the k best next
queries for a session (oldest query first), one `score<TAB>suggestion<TAB>source` line each
(the ranker's confidence and model/log/model+log with a ranking, else the log-probability
per length-normalised token and model)."""

import argparse
import sys

from mtn_keras.artifacts import ModelDirError, load_trained
from mtn_keras.cli import add_verbose, fail
from mtn_keras.config import add_decode_arguments, decode_config
from mtn_keras.data.text import normalise


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.suggest", description=__doc__)
    parser.add_argument("--model", required=True, help="a directory written by mtn_keras.train")
    add_decode_arguments(parser)
    parser.add_argument("--prefix", default="", help="words of the next query already typed")
    parser.add_argument("queries", nargs="+", help="the session so far, oldest first")
    add_verbose(parser)
    args = parser.parse_args(argv)
    decoding = decode_config(args)
    try:
        trained = load_trained(args.model)
    except ModelDirError as error:
        return fail("suggest", error, args.verbose)
    import tensorflow as tf

    from mtn_keras.serving import SuggestionService

    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    session = tf.constant([args.queries])
    if args.prefix:
        result = service.complete(session, tf.constant([args.prefix]))
    else:
        result = service.suggest(session)
    rows = zip(result["suggestions"][0].numpy(), result["scores"][0].numpy(), result["sources"][0].numpy())
    lines = [f"{score:.4f}\t{text.decode()}\t{source.decode()}" for text, score, source in rows if text]
    if not lines:
        if not any(normalise(query) for query in args.queries):
            print("suggest: no suggestion (the session has no words after normalising)", file=sys.stderr)
        else:
            print("suggest: no suggestion passed the filters and the confidence threshold "
                  "(--threshold 0 shows every candidate)", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
