"""How far below a candidate that completes what was typed a corrected one stands
(typos.FIXED_WEIGHT), measured on validation users: a run folder's `complete` (no history)
on every Nth paper pair, once per weight on the same pairs, with the first 5 and 8
characters of the next query typed clean and with one seeded slip; the count of pairs whose
next query is among the five shown. How the weight was chosen (docs/quality.md).

Usage: python -m studies.typo_weight --model runs/default --input data/aol-valid-users.txt
           [--weights 0.1,0.3] [--prefix 5,8] [--every 4]
"""

import argparse


def hits(service, pairs, prefixes, batch=64):
    """How many pairs' next query is among `service.complete`'s lists for `prefixes`."""
    import tensorflow as tf

    from mtn_keras.data.padding import front_padded

    found = 0
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        sessions = front_padded([context for context, _ in chunk])
        out = service.complete(tf.constant(sessions), tf.constant(prefixes[start : start + batch]))
        lists = out["suggestions"].numpy().tolist()
        found += sum(query.encode() in row for (_, query), row in zip(chunk, lists))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/default", help="a ranked run folder")
    parser.add_argument("--input", required=True, help="the validation users' log rows")
    parser.add_argument("--weights", default="0.1,0.3", help="the weights to compare")
    parser.add_argument("--prefix", default="5,8", help="the typed characters")
    parser.add_argument("--every", type=int, default=4, help="score every Nth pair")
    args = parser.parse_args(argv)
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.data.pairs import session_pairs
    from mtn_keras.data.replay import replay_logs
    from mtn_keras.data.sessions import Protocol
    from mtn_keras.ranking import hybrid
    from mtn_keras.scorecard.typos import slipped_prefixes
    from mtn_keras.serving.service import SuggestionService
    from mtn_keras.training.artifacts import load_trained

    view, _ = replay_logs([args.input], "aol", Protocol.named("paper"), history=False)
    pairs = session_pairs(view.lines)[:: args.every]
    queries = [query for _, query in pairs]
    trained = load_trained(args.model)
    print(f"{len(pairs)} pairs")
    print("| weight | typed | clean | one slip |")
    print("| ---: | ---: | ---: | ---: |")
    for weight in (float(w) for w in args.weights.split(",")):
        hybrid.FIXED_WEIGHT = weight
        service = SuggestionService(
            trained.model, trained.vocab.tokens, DecodeConfig(), trained.ranking
        )
        for size in (int(s) for s in args.prefix.split(",")):
            clean = hits(service, pairs, [query[:size] for query in queries])
            slipped = hits(service, pairs, slipped_prefixes(queries, size))
            print(f"| {weight:g} | {size} | {clean} | {slipped} |", flush=True)


if __name__ == "__main__":
    main()
