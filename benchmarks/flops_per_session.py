"""Training FLOPs of one session for the MTN of a preset, counted from its layer sizes.

Why: docs/scaling.md estimates the time an epoch of the full AOL collection takes on
hardware not at hand from this count and a device's sustained FLOP/s. Counted: the
multiply-adds of every dense map, attention product and the tied output softmax on the
padded shapes the model runs (n tokens per query, n + 1 per target), the softmax only
on real target tokens (as the TensorFlow loss gathers them); one multiply-add is 2 FLOPs,
and a training step (forward and backward) is 3 forward passes. Layer norms, softmax
exponentials and embeddings lookups are left out (a few percent).

Run: python benchmarks/flops_per_session.py [--preset paper] [--queries 3.5] [--vocab 100000]
"""

import argparse

from mtn_keras.base.config import preset


def encoder_layer(tokens, d, ff):
    """Multiply-adds of one Transformer encoder layer over a sequence of `tokens`."""
    return 4 * tokens * d * d + 2 * tokens * tokens * d + 2 * tokens * d * ff


def forward_macs(config, queries, target_words, vocab):
    """Multiply-adds of one forward pass over a session of `queries` queries."""
    n, m, d, e, ff = (
        config.max_query_tokens,
        config.max_query_tokens + 1,
        config.d_model,
        config.embed_dim,
        config.ff_dim,
    )
    pairs = queries - 1
    macs = (queries * n + pairs * m) * e * d if e != d else 0  # embeddings to d_model
    macs += queries * config.query_layers * encoder_layer(n, d, ff)
    macs += queries * n * d  # query projection over the n positions
    macs += (config.levels - 1) * config.session_layers * encoder_layer(queries, d, ff)
    decoder = (
        4 * m * d * d
        + 2 * m * m * d  # masked self-attention
        + 2 * m * d * d
        + 2 * n * d * d
        + 2 * m * n * d  # cross-attention to query t
        + 2 * m * d * ff
    )
    macs += pairs * config.decoder_layers * decoder
    if config.copy:  # copy head: queries, keys, scores over the session's tokens, gate
        macs += (
            pairs * m * d * d + queries * n * d * d + pairs * m * queries * n * d + pairs * m * d
        )
    real_targets = pairs * (target_words + 1)  # the words and <eos>
    macs += real_targets * ((d * e if e != d else 0) + e * vocab)  # tied output softmax
    return macs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="paper")
    parser.add_argument(
        "--queries", type=float, default=3.5, help="mean queries per session (paper protocol: 3..5)"
    )
    parser.add_argument("--target-words", type=float, default=2.5, help="mean words per query")
    parser.add_argument("--vocab", type=int, default=100_000)
    args = parser.parse_args(argv)
    config, _ = preset(args.preset)
    config.vocab_size = args.vocab
    macs = forward_macs(config, args.queries, args.target_words, args.vocab)
    softmax = forward_macs(config, args.queries, args.target_words, 0)
    print(
        f"preset {args.preset}, {args.queries} queries of {args.target_words} words, "
        f"vocabulary {args.vocab:,}"
    )
    print(
        f"training FLOPs per session: {6 * macs / 1e9:.3f} G "
        f"({6 * (macs - softmax) / 1e9:.3f} G of them in the output softmax)"
    )


if __name__ == "__main__":
    main()
