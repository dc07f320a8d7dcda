"""`python -m mtn_keras.export --model DIR --out OUT`: a SavedModel that turns raw session
strings into suggestions with plain TensorFlow (signatures in docs/contracts.md)."""

import argparse
import json
import os
import sys

from mtn_keras.artifacts import ModelDirError, load_trained


def export(trained, out, k=5, beam=8, alpha=0.6):
    """Write the SavedModel of a loaded `TrainedModel` to `out`."""
    import tensorflow as tf

    from mtn_keras.serving import SuggestionService

    service = SuggestionService(trained.model, trained.vocab.tokens, k, beam, alpha)
    signatures = {
        "serving_default": service.suggest,
        "suggest": service.suggest,
        "complete": service.complete,
        "session_attention": service.session_attention,
    }
    tf.saved_model.save(service, out, signatures=signatures)
    with open(os.path.join(out, "export.json"), "w") as handle:
        json.dump({"model": trained.name, "source": os.path.abspath(trained.path), "k": k,
                   "beam": beam, "alpha": alpha, "max_queries": service.max_queries,
                   "max_query_tokens": service.n, "vocab_size": service.vocab_size}, handle, indent=2)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.export", description=__doc__)
    parser.add_argument("--model", required=True, help="a directory written by mtn_keras.train")
    parser.add_argument("--out", required=True, help="SavedModel directory to create")
    parser.add_argument("--k", type=int, default=5, help="suggestions per session (fixed)")
    parser.add_argument("--beam", type=int, default=8, help="beam width (fixed)")
    parser.add_argument("--alpha", type=float, default=0.6, help="length normalisation")
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and os.listdir(args.out) and not args.force:
        print(f"export: {args.out} exists; pass --force to replace it", file=sys.stderr)
        return 2
    try:
        trained = load_trained(args.model)
    except ModelDirError as error:
        print(f"export: {error}", file=sys.stderr)
        return 2
    export(trained, args.out, args.k, args.beam, args.alpha)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
