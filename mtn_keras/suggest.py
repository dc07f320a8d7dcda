"""`python -m mtn_keras.suggest --model DIR QUERY [QUERY ...]`: print the k best next
queries for a session (oldest query first), one `score<TAB>suggestion` line each."""

import argparse
import sys

from mtn_keras.artifacts import ModelDirError, load_trained


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.suggest", description=__doc__)
    parser.add_argument("--model", required=True, help="a directory written by mtn_keras.train")
    parser.add_argument("--k", type=int, default=5, help="number of suggestions")
    parser.add_argument("--beam", type=int, default=8, help="beam width (at least k)")
    parser.add_argument("--alpha", type=float, default=0.6, help="length normalisation")
    parser.add_argument("--prefix", default="", help="words of the next query already typed")
    parser.add_argument("queries", nargs="+", help="the session so far, oldest first")
    args = parser.parse_args(argv)
    if args.k < 1 or args.beam < 1:
        parser.error("--k and --beam must be at least 1")
    try:
        trained = load_trained(args.model)
    except ModelDirError as error:
        print(f"suggest: {error}", file=sys.stderr)
        return 2
    import tensorflow as tf

    from mtn_keras.serving import SuggestionService

    service = SuggestionService(trained.model, trained.vocab.tokens, args.k, args.beam, args.alpha)
    session = tf.constant([args.queries])
    if args.prefix:
        result = service.complete(session, tf.constant([args.prefix]))
    else:
        result = service.suggest(session)
    lines = [
        f"{score:.4f}\t{text.decode()}"
        for text, score in zip(result["suggestions"][0].numpy(), result["scores"][0].numpy())
        if text
    ]
    if not lines:
        print("suggest: no suggestion (the session has no words after normalising)", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
