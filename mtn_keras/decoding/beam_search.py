"""Beam search and greedy search over a step function, in core TensorFlow ops only.

Runs inside a `tf.function` and a SavedModel served by stock TensorFlow Serving.
"""

import tensorflow as tf

NEG_INF = float("-inf")


def length_penalty(length, alpha):
    """GNMT length penalty ((5 + len) / 6) ** alpha, len counting eos."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def top_k(x, k, chunk=256):
    """`tf.math.top_k` over the last axis of x [B, M], searching only the k chunks with the
    largest maxima (they hold the top k): TF's CPU top_k is slow on long rows."""
    size = tf.shape(x)[1]
    padded = tf.pad(
        x, [[0, 0], [0, tf.maximum(k * chunk - size, -size % chunk)]], constant_values=NEG_INF
    )
    chunks = tf.reshape(padded, [tf.shape(x)[0], -1, chunk])
    _, best = tf.math.top_k(tf.reduce_max(chunks, axis=-1), k)
    candidates = tf.gather(chunks, best, batch_dims=1)
    values, position = tf.math.top_k(tf.reshape(candidates, [-1, k * chunk]), k)
    index = tf.gather(best, position // chunk, batch_dims=1) * chunk + position % chunk
    return values, tf.minimum(index, size - 1)


def collapse_duplicates(seqs, scores):
    """Set to -inf the score of every hypothesis whose multiset of ids equals a better one's.

    seqs int32 [B, M, L] (0-padded), scores float32 [B, M]; ties keep the earlier index.
    """
    keys = tf.sort(seqs, axis=-1)
    same = tf.reduce_all(keys[:, :, None, :] == keys[:, None, :, :], axis=-1)
    return tf.where(beaten(same, scores), NEG_INF, scores)


def beaten(same, scores):
    """[B, M]: an item `same` [B, M, M] as one of higher score, or as an earlier one of
    equal score."""
    index = tf.range(tf.shape(scores)[1])
    earlier = index[None, :] < index[:, None]
    better = (scores[:, None, :] > scores[:, :, None]) | (
        (scores[:, None, :] == scores[:, :, None]) & earlier[None]
    )
    return tf.reduce_any(same & better, axis=-1)


def block_repeated_words(log_probs, seqs, t):
    """-inf for every token already in its hypothesis (`seqs` [N, L], generated before
    step t): no word twice in a suggestion."""
    earlier = tf.range(tf.shape(seqs)[1])[None, :] < t
    ids = tf.where(earlier, seqs, 0)  # column 0 (<pad>) is never a result anyway
    rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
    indices = tf.reshape(tf.stack([rows, ids], axis=-1), [-1, 2])
    return tf.tensor_scatter_nd_min(log_probs, indices, tf.fill([tf.shape(indices)[0]], NEG_INF))


def block_repeated_bigrams(log_probs, previous, seqs, t):
    """-inf for every token that would repeat a bigram of its hypothesis (the tokens that
    already followed `previous` [N] in `seqs` [N, L], generated before step t) or repeat
    `previous` itself. Fixed shapes (no tf.where of indices), which XLA compiles well."""
    earlier = tf.range(tf.shape(seqs)[1])[None, :] < t - 1
    hits = (seqs == previous[:, None]) & earlier
    # Non-hits point at column 0 (<pad>), which is never a result anyway.
    following = tf.where(hits, tf.roll(seqs, -1, axis=1), 0)
    ids = tf.concat([following, previous[:, None]], axis=1)  # [N, L + 1]
    rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
    indices = tf.reshape(tf.stack([rows, ids], axis=-1), [-1, 2])
    return tf.tensor_scatter_nd_min(log_probs, indices, tf.fill([tf.shape(indices)[0]], NEG_INF))


def beam_search(
    step_fn,
    state,
    *,
    batch_size,
    beam_size,
    num_results,
    max_length,
    bos_id=2,
    eos_id=3,
    banned_ids=(0, 1, 2),
    length_alpha=0.6,
    prefix=None,
    dedupe=True,
    no_repeat_bigrams=True,
    no_repeat_words=False,
    trace=None,
    exact_stop=True,
):
    """The `num_results` best finished hypotheses of each batch row, best first.

    `step_fn(tokens [N], state, t) -> (log_probs [N, V_ext], state)` with N = batch * beam;
    `state` has leading dimension `batch_size` and is tiled to N here; after each step it
    is reordered with the beams, except what sits under a "context" key (see `reorder`).
    `prefix` int32 [B, P] (0-padded) forces the first tokens of each row. Returns a dict
    of `ids` int32 [B, k, L] (0-padded, no eos), `lengths` int32 [B, k] (tokens in `ids`),
    `scores` float32 [B, k] (length-normalised, -inf where fewer than k) and `log_probs`
    float32 [B, k] (raw sums).
    `no_repeat_bigrams` keeps a hypothesis from repeating one of its bigrams or a word twice
    in a row: queries hardly ever do, and long-favouring length normalisation otherwise
    lets beams loop. `no_repeat_words` is stricter: no word twice at all.

    `trace(state) -> [N, X]` names a float quantity that `step_fn` accumulates in the state
    along each hypothesis (e.g. how much it copied from each source token); the result then
    has `trace` float32 [B, k, X]: its value for each hypothesis as its last token was chosen.

    The search stops when no alive hypothesis can beat the worst of a full pool: with
    `exact_stop`, at any length up to max_length (exact, but with alpha > 0 an alive
    hypothesis could in principle still win at max_length, so the search seldom stops
    early); otherwise at its next length, the usual heuristic (as in Hugging Face's default),
    which can miss a long hypothesis whose later tokens cost less than its length gains.
    """
    B, K, F, L = batch_size, beam_size, num_results, max_length
    blocked_ids = tf.constant(sorted(set(banned_ids) | {eos_id}), tf.int32)
    blocked_inf = tf.fill(tf.shape(blocked_ids), NEG_INF)
    max_penalty = length_penalty(L, length_alpha)
    rows = tf.range(B)[:, None] * K
    if prefix is not None:
        prefix = tf.pad(tf.cast(prefix, tf.int32), [[0, 0], [0, 1]])
        prefix_last = tf.shape(prefix)[1] - 1

    def body(t, tokens, state, alive_seq, alive_logp, pool, done):
        pool_seq, pool_score, pool_logp, pool_trace = pool
        alive_trace = tf.reshape(trace(state), [B, K, -1]) if trace else pool_trace
        log_probs, state = step_fn(tokens, state, t)
        log_probs = tf.cast(log_probs, tf.float32)
        vocab_size = tf.shape(log_probs)[1]
        block = tf.scatter_nd(blocked_ids[:, None], blocked_inf, [vocab_size])
        extend = log_probs + block
        if no_repeat_words:
            extend = block_repeated_words(extend, tf.reshape(alive_seq, [B * K, L]), t)
        elif no_repeat_bigrams:
            extend = block_repeated_bigrams(extend, tokens, tf.reshape(alive_seq, [B * K, L]), t)
        eos = log_probs[:, eos_id]
        if prefix is not None:
            # Rows within their prefix keep only the forced token, even a banned one.
            forced_id = tf.repeat(tf.gather(prefix, tf.minimum(t, prefix_last), axis=1), K)
            forced = forced_id != 0
            forced_logp = tf.where(forced, tf.gather(log_probs, forced_id, batch_dims=1), NEG_INF)
            extend = tf.where(forced[:, None], NEG_INF, extend)
            at = tf.stack([tf.range(tf.shape(forced_id)[0]), forced_id], axis=1)
            extend = tf.tensor_scatter_nd_max(extend, at, forced_logp)
            eos = tf.where(forced, NEG_INF, eos)
        eos = tf.where(t == 0, NEG_INF, eos)

        # Alive hypotheses ending with eos now join the pool of finished ones.
        end_logp = alive_logp + tf.reshape(eos, [B, K])
        end_score = end_logp / length_penalty(t + 1, length_alpha)
        seqs = tf.concat([pool_seq, alive_seq], axis=1)
        scores = tf.concat([pool_score, end_score], axis=1)
        logps = tf.concat([pool_logp, end_logp], axis=1)
        if dedupe:
            scores = collapse_duplicates(seqs, scores)
        pool_score, keep = tf.math.top_k(scores, F)
        pool_seq = tf.gather(seqs, keep, batch_dims=1)
        pool_logp = tf.gather(logps, keep, batch_dims=1)
        if trace:
            traces = tf.concat([pool_trace, alive_trace], axis=1)
            pool_trace = tf.gather(traces, keep, batch_dims=1)

        # The alive beams continue with their best beam_size non-eos extensions.
        total = alive_logp[:, :, None] + tf.reshape(extend, [B, K, vocab_size])
        alive_logp, flat = top_k(tf.reshape(total, [B, K * vocab_size]), K)
        parent, token = flat // vocab_size, flat % vocab_size
        alive_seq = tf.gather(alive_seq, parent, batch_dims=1)
        alive_seq = tf.where(tf.range(L) == t, token[:, :, None], alive_seq)
        state = reorder(state, tf.reshape(rows + parent, [-1]))

        # Stop once no alive beam can still beat the worst of a full pool.
        best_alive = tf.reduce_max(alive_logp, axis=1)
        next_penalty = length_penalty(t + 2, length_alpha)
        penalty = tf.maximum(max_penalty, next_penalty) if exact_stop else next_penalty
        done = tf.reduce_all((best_alive / penalty < pool_score[:, -1]) | (best_alive == NEG_INF))
        tokens = tf.reshape(token, [-1])
        pool = (pool_seq, pool_score, pool_logp, pool_trace)
        return t + 1, tokens, state, alive_seq, alive_logp, pool, done

    first_beam = tf.where(tf.range(K) == 0, 0.0, NEG_INF)
    state = tf.nest.map_structure(lambda x: tf.repeat(x, K, axis=0), state)
    width = tf.shape(trace(state))[1] if trace else 0
    pool = (
        tf.zeros([B, F, L], tf.int32),
        tf.fill([B, F], NEG_INF),
        tf.fill([B, F], NEG_INF),
        tf.zeros([B, F, width]),
    )
    loop_vars = (
        tf.constant(0),
        tf.fill([B * K], bos_id),
        state,
        tf.zeros([B, K, L], tf.int32),
        tf.broadcast_to(first_beam, [B, K]),
        pool,
        tf.constant(False),
    )
    out = tf.while_loop(
        lambda *loop: tf.logical_not(loop[-1]), body, loop_vars, maximum_iterations=L
    )
    ids, scores, log_probs, traces = out[5]
    found = scores > NEG_INF
    ids = tf.where(found[:, :, None], ids, 0)
    result = {
        "ids": ids,
        "lengths": tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=-1),
        "scores": scores,
        "log_probs": tf.where(found, log_probs, NEG_INF),
    }
    if trace:
        result["trace"] = tf.where(found[:, :, None], traces, 0.0)
    return result


def reorder(state, order):
    """The state's tensors gathered along axis 0 by `order`, except those under a "context"
    key (at any depth): they are the same for every beam of a batch row."""
    if isinstance(state, dict):
        return {
            key: value if key == "context" else reorder(value, order)
            for key, value in state.items()
        }
    return tf.nest.map_structure(lambda x: tf.gather(x, order), state)


def greedy_search(step_fn, state, **kwargs):
    """The single best hypothesis per row: beam search with one beam and one result."""
    return beam_search(step_fn, state, beam_size=1, num_results=1, **kwargs)
