"""SR@k and MRR@k of the beam's next query on a prepared split's pairs, each session read
with its user's earlier queries when the model was trained with `history_queries` (the
third level, measured against the same model trained without it).

    python benchmarks/bench_history.py --run runs/aol90-mtn-history --data data/aol-90

The beam as `evaluate`'s Table 2 (beam 8, alpha 2.0, no filters, the last query itself not
suggested), through model.start / model.step, so that the history can be passed; prints
one JSON line.
"""

import argparse
import json
import time

import numpy as np
import tensorflow as tf

from mtn_keras.data.encode import encode_session
from mtn_keras.data.history import split_histories
from mtn_keras.data.prepared import load_split, load_users
from mtn_keras.decoding.beam_search import beam_search
from mtn_keras.scorecard.metrics import mean_reciprocal_rank, success_rate
from mtn_keras.training.artifacts import load_trained

BEAM, ALPHA, BATCH = 8, 2.0, 128


def pairs_of(lines, limit):
    """(line, context, next query) of each pair of the lines, in order, the first `limit`."""
    pairs = [
        (i, line[: t + 1], line[t + 1])
        for i, line in enumerate(lines)
        for t in range(len(line) - 1)
    ]
    return pairs[:limit] if limit else pairs


def line_history(history, line):
    """The line's history token ids (H, n): the last H rows before it, front-padded."""
    lo, hi = history.bounds[line]
    rows = history.tokens[max(lo, hi - history.size) : hi]
    return np.pad(rows, [(history.size - len(rows), 0), (0, 0)])


def make_search(model):
    """tf.function (tokens, ext[, history]) -> the beam's ids [B, BEAM, L]."""

    def search(tokens, ext, history=None):
        return beam_search(
            model.step,
            model.start(tokens, ext, history_tokens=history),
            batch_size=tf.shape(tokens)[0],
            beam_size=BEAM,
            num_results=BEAM,
            max_length=model.config.max_query_tokens + 1,
            length_alpha=ALPHA,
            exact_stop=False,
        )["ids"]

    return tf.function(search, jit_compile=True)


def suggestions(model, vocab, pairs, history, k):
    """The first k suggestions of each pair (the last query itself left out). Sessions are
    front-padded to max_queries and the last batch filled up, as the service does: one
    compiled shape."""
    search = make_search(model)
    n, slots, size = model.config.max_query_tokens, model.config.max_queries, len(vocab)
    found = []
    for start in range(0, len(pairs), BATCH):
        chunk = pairs[start : start + BATCH]
        filled = chunk + [chunk[0]] * (BATCH - len(chunk))
        encoded = [encode_session(context, vocab, n) for _, context, _ in filled]
        pad = [(0, 0), (slots - 1, 0), (0, 0)]  # contexts hold at most slots - 1 queries
        args = [
            np.stack([np.pad(e.tokens[None], pad)[0, -slots:] for e in encoded]),
            np.stack([np.pad(e.ext[None], pad)[0, -slots:] for e in encoded]),
        ]
        if history is not None:
            args.append(np.stack([line_history(history, line) for line, _, _ in filled]))
        ids = search(*args).numpy()
        for (_, context, _), e, rows in zip(chunk, encoded, ids):
            words = [
                [vocab.tokens[t] if t < size else e.oov[t - size] for t in row if t] for row in rows
            ]
            texts = [vocab.join(w) for w in words]
            found.append([t for t in texts if t and t != context[-1]][:k])
    return found


def write_hits(path, users, pairs, found):
    """One line per pair: its user TAB the rank of its next query among the suggestions
    (0: not among them), for a paired bootstrap over users of two runs."""
    with open(path, "w", encoding="utf-8") as file:
        for (line, _, target), shown in zip(pairs, found):
            rank = shown.index(target) + 1 if target in shown else 0
            file.write(f"{users[line]}\t{rank}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="a training's output folder")
    parser.add_argument("--data", required=True, help="the prepared dataset")
    parser.add_argument("--split", default="valid")
    parser.add_argument("--pairs", type=int, default=0, help="the first N pairs (0: all)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--hits", help="write each pair's user and rank of its next query here")
    parser.add_argument(
        "--without-history", action="store_true", help="a history model read without any"
    )
    args = parser.parse_args()
    trained = load_trained(args.run, ranking=False)
    model, vocab = trained.model, trained.vocab
    pairs = pairs_of(load_split(args.data, args.split), args.pairs)
    size = model.config.history_queries
    history = None
    if size and not args.without_history:
        n = model.config.max_query_tokens
        history = split_histories(args.data, (args.split,), vocab, n, size)[args.split]
    started = time.perf_counter()
    found = suggestions(model, vocab, pairs, history, args.k)
    references = [target for _, _, target in pairs]
    if args.hits:
        write_hits(args.hits, load_users(args.data, args.split), pairs, found)
    print(
        json.dumps(
            {
                "run": args.run,
                "split": args.split,
                "pairs": len(pairs),
                "history": 0 if history is None else size,
                f"sr@{args.k}": round(success_rate(found, references, args.k), 3),
                f"mrr@{args.k}": round(mean_reciprocal_rank(found, references, args.k), 4),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
