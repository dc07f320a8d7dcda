"""Hand-made step functions and an exhaustive reference decoder for the beam search tests."""

import itertools

import numpy as np
import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, UNK

BANNED = (PAD, UNK, BOS)


def chain(transitions, vocab_size=8):
    """Log-prob table [V, V] of a Markov chain given as {prev: {next: prob}}; unlisted: -inf."""
    table = np.full((vocab_size, vocab_size), -np.inf, np.float32)
    for prev, nexts in transitions.items():
        for token, prob in nexts.items():
            table[prev, token] = np.log(prob)
    return table


def random_tables(count, vocab_size=8, seed=0):
    """`count` random Markov chains [count, V, V] with full support (no ties)."""
    logits = np.random.default_rng(seed).normal(size=(count, vocab_size, vocab_size)) * 2
    return (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)


def markov_step(table):
    """Step function of a Markov chain: the next token depends on the fed one only."""
    table = tf.constant(table)

    def step(tokens, state, t):
        return tf.gather(table, tokens), state

    return step


def history_step(tables, max_length):
    """Step function whose log probs depend only on its state: a history of the fed tokens,
    a step counter and a per-row table index, so a wrongly reordered state changes them."""
    table_values, tables = tables, tf.constant(tables)
    modulus = tables.shape[1]

    def step(tokens, state, t):
        history = tf.where(tf.range(max_length) == t, tokens[:, None], state["history"])
        count = state["count"] + 1
        key = (tf.reduce_sum(history, axis=1) + count) % modulus
        index = tf.stack([state["table"], key, history[:, t]], axis=1)
        new_state = {"history": history, "count": count, "table": state["table"]}
        return tf.gather_nd(tables, index), new_state

    def start(table_index):
        batch = len(table_index)
        return {
            "history": tf.zeros([batch, max_length], tf.int32),
            "count": tf.zeros([batch], tf.int32),
            "table": tf.constant(table_index, tf.int32),
        }

    def log_probs(seq, row_table):
        fed = (BOS,) + tuple(seq)
        key = (sum(fed) + len(fed)) % modulus
        return table_values[row_table, key, fed[-1]]

    return step, start, log_probs


def markov_log_probs(table):
    """Next-token log probs of a Markov chain for a given sequence of content tokens."""
    return lambda seq: table[seq[-1] if seq else BOS]


def repeats_a_bigram(seq, free_from=0):
    """True when a bigram ending at position >= free_from occurred earlier in seq, or is
    one word twice."""
    pairs = list(zip(seq, seq[1:]))
    return any(
        pairs[i] in pairs[:i] or pairs[i][0] == pairs[i][1]
        for i in range(max(free_from - 1, 0), len(pairs))
    )


def exhaustive(
    log_probs,
    *,
    vocab_size,
    max_length,
    num_results,
    alpha=0.6,
    prefix=(),
    dedupe=True,
    banned=BANNED,
    no_repeat_bigrams=True,
):
    """The best `num_results` (seq, log_prob, score) by enumerating every hypothesis."""
    words = [i for i in range(vocab_size) if i not in banned and i != EOS]
    prefix = tuple(int(i) for i in prefix if i)
    found = []
    for n in range(max(1, len(prefix)), max_length):
        for tail in itertools.product(words, repeat=n - len(prefix)):
            seq = prefix + tail
            if no_repeat_bigrams and repeats_a_bigram(seq, len(prefix)):
                continue
            total = sum(log_probs(seq[:i])[seq[i]] for i in range(n)) + log_probs(seq)[EOS]
            if np.isfinite(total):
                found.append((seq, total, total / ((5 + n + 1) / 6) ** alpha))
    found.sort(key=lambda item: -item[2])
    if dedupe:
        seen, unique = set(), []
        for item in found:
            if tuple(sorted(item[0])) not in seen:
                seen.add(tuple(sorted(item[0])))
                unique.append(item)
        found = unique
    return found[:num_results]


def decoded(result, row=0):
    """The finished hypotheses of one row of a beam search result as (seq, log_prob, score)."""
    ids, lengths = result["ids"].numpy()[row], result["lengths"].numpy()[row]
    scores, log_probs = result["scores"].numpy()[row], result["log_probs"].numpy()[row]
    return [
        (tuple(ids[i, : lengths[i]].tolist()), log_probs[i], scores[i])
        for i in range(len(scores))
        if np.isfinite(scores[i])
    ]


def assert_same(actual, expected):
    """Same sequences in the same order, and the same log probs and scores."""
    assert [seq for seq, _, _ in actual] == [seq for seq, _, _ in expected]
    np.testing.assert_allclose(
        [lp for _, lp, _ in actual], [lp for _, lp, _ in expected], rtol=1e-5
    )
    np.testing.assert_allclose([s for _, _, s in actual], [s for _, _, s in expected], rtol=1e-5)
