"""Beam search over a step function, in core TensorFlow ops only, in named steps (as
OpenNMT-tf's BeamSearch: initialize, step, finalize).

Runs inside a `tf.function` and a SavedModel served by stock TensorFlow Serving.
"""

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeAlias

import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, UNK
from mtn_keras.decoding.blocking import (
    NEG_INF,
    block_repeated_bigrams,
    block_repeated_words,
    collapse_duplicates,
)

# What the step function carries along the hypotheses: a tf.nest structure of tensors
# (`beam_search` tiles and reorders it), whatever the model's steps keep.
State: TypeAlias = Any
# `step_fn(tokens [N], state, t) -> (log_probs [N, V_ext], state)`, as `beam_search` says.
StepFn: TypeAlias = Callable[[tf.Tensor, State, tf.Tensor], tuple[tf.Tensor, State]]


def length_penalty(length: int | tf.Tensor, alpha: float) -> tf.Tensor:
    """GNMT length penalty ((5 + len) / 6) ** alpha, len counting eos."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def top_k(x: tf.Tensor, k: int, chunk: int = 256) -> tuple[tf.Tensor, tf.Tensor]:
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


class Beams(NamedTuple):
    """The alive hypotheses: their last tokens [N], the step function's state (leading
    dimension N = batch * beam), their ids [B, K, L] and log-probabilities [B, K]."""

    tokens: tf.Tensor
    state: State
    seqs: tf.Tensor
    log_probs: tf.Tensor


class Finished(NamedTuple):
    """The best finished hypotheses of each row so far: ids [B, F, L], length-normalised
    scores [B, F] (-inf in an empty slot), log-probabilities [B, F] and traces [B, F, X]."""

    seqs: tf.Tensor
    scores: tf.Tensor
    log_probs: tf.Tensor
    traces: tf.Tensor


class BeamSearch:
    """One search's settings and its steps, run by `beam_search`: `initialize`, then
    `step` until `should_stop` (each step: `next_scores`, `add_finished`, `extend_alive`),
    then `finalize`.

    `step_fn` is `beam_search`'s. `prefix` int32 [B, P] (0-padded) forces the first tokens
    of each row. `no_repeat_bigrams` keeps a hypothesis from repeating one of its bigrams or
    a word twice in a row: queries hardly ever do, and long-favouring length normalisation
    otherwise lets beams loop. `no_repeat_words` is stricter: no word twice at all; under a
    WordPiece vocabulary `continuing` (bool [V]) marks the pieces that continue a word,
    which may repeat.

    `trace(state) -> [N, X]` names a float quantity that `step_fn` accumulates in the state
    along each hypothesis (e.g. how much it copied from each source token); the result then
    has `trace` float32 [B, k, X]: its value for each hypothesis as its last token was chosen.

    `length_alpha` and `exact_stop` have no defaults here: DecodeConfig holds the product's
    (decode_config.py), and a search is always told which it runs under. The search stops when no
    alive hypothesis can beat the worst of a full pool: with `exact_stop`, at any length up
    to max_length (exact, but with alpha > 0 an alive hypothesis could in principle still
    win at max_length, so the search seldom stops early); otherwise at its next length, the
    usual heuristic (as in Hugging Face's default), which can miss a long hypothesis whose
    later tokens cost less than its length gains."""

    def __init__(
        self,
        step_fn: StepFn,
        *,
        # its size
        batch_size: int | tf.Tensor,
        beam_size: int,
        num_results: int,
        max_length: int,
        # its scores, and when it stops (no defaults: DecodeConfig holds the product's)
        length_alpha: float,
        exact_stop: bool,
        dedupe: bool = True,
        # the tokens a hypothesis starts with, ends with, never holds, and begins with
        bos_id: int = BOS,
        eos_id: int = EOS,
        banned_ids: Iterable[int] = (PAD, UNK, BOS),
        prefix: tf.Tensor | None = None,
        # what a hypothesis may not repeat
        no_repeat_bigrams: bool = True,
        no_repeat_words: bool = False,
        continuing: tf.Tensor | None = None,
        # what the steps accumulate along a hypothesis
        trace: Callable[[State], tf.Tensor] | None = None,
    ) -> None:
        self.step_fn, self.trace = step_fn, trace
        self.B, self.K, self.F, self.L = batch_size, beam_size, num_results, max_length
        self.bos_id, self.eos_id, self.alpha = bos_id, eos_id, length_alpha
        self.dedupe, self.exact_stop = dedupe, exact_stop
        self.no_repeat_bigrams, self.no_repeat_words = no_repeat_bigrams, no_repeat_words
        # One False past the vocabulary, for the ids of copied words, which never continue one.
        self.continuing = None if continuing is None else tf.pad(continuing, [[0, 1]])
        self.blocked_ids = tf.constant(sorted(set(banned_ids) | {eos_id}), tf.int32)
        self.blocked_inf = tf.fill(tf.shape(self.blocked_ids), NEG_INF)
        self.max_penalty = length_penalty(max_length, length_alpha)
        self.rows = tf.range(batch_size)[:, None] * beam_size
        self.prefix = prefix
        if prefix is not None:
            self.prefix = tf.pad(tf.cast(prefix, tf.int32), [[0, 0], [0, 1]])
            self.prefix_last = tf.shape(self.prefix)[1] - 1

    def initialize(self, state: State) -> tuple[Beams, Finished]:
        """The alive beams before step 0 (one per row fed <bos>; the others -inf, so
        they never win) with the state tiled to them, and an empty pool."""
        B, K, F, L = self.B, self.K, self.F, self.L
        state = tf.nest.map_structure(lambda x: tf.repeat(x, K, axis=0), state)
        first_beam = tf.where(tf.range(K) == 0, 0.0, NEG_INF)
        beams = Beams(
            tf.fill([B * K], self.bos_id),
            state,
            tf.zeros([B, K, L], tf.int32),
            tf.broadcast_to(first_beam, [B, K]),
        )
        width = tf.shape(self.trace(state))[1] if self.trace else 0
        pool = Finished(
            tf.zeros([B, F, L], tf.int32),
            tf.fill([B, F], NEG_INF),
            tf.fill([B, F], NEG_INF),
            tf.zeros([B, F, width]),
        )
        return beams, pool

    def step(
        self, t: int | tf.Tensor, beams: Beams, pool: Finished, done: tf.Tensor
    ) -> tuple[tf.Tensor, Beams, Finished, tf.Tensor]:
        """Step t: the alive beams' eos endings join the pool, their best other
        extensions become the alive beams; then whether to stop."""
        traces = tf.reshape(self.trace(beams.state), [self.B, self.K, -1]) if self.trace else None
        log_probs, state = self.step_fn(beams.tokens, beams.state, t)
        log_probs = tf.cast(log_probs, tf.float32)
        extend, eos = self.next_scores(log_probs, beams, t)
        pool = self.add_finished(pool, beams, eos, traces, t)
        beams = self.extend_alive(beams._replace(state=state), extend, t)
        return t + 1, beams, pool, self.should_stop(beams.log_probs, pool.scores, t)

    def next_scores(
        self, log_probs: tf.Tensor, beams: Beams, t: int | tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """The log-probabilities [N, V] of each alive beam's allowed extensions other than
        eos (banned ids, repeats and tokens off the prefix -inf), and [N] of its eos ending."""
        extend = self.block_repeats(self.block_banned(log_probs), beams, t)
        eos = log_probs[:, self.eos_id]
        if self.prefix is not None:
            extend, eos = self.force_prefix(log_probs, extend, eos, t)
        return extend, tf.where(t == 0, NEG_INF, eos)

    def block_banned(self, log_probs: tf.Tensor) -> tf.Tensor:
        """-inf for the banned ids and for eos (an eos ending goes to the pool instead)."""
        block = tf.scatter_nd(self.blocked_ids[:, None], self.blocked_inf, [tf.shape(log_probs)[1]])
        return log_probs + block

    def block_repeats(self, extend: tf.Tensor, beams: Beams, t: int | tf.Tensor) -> tf.Tensor:
        """-inf for the tokens that would repeat a word (no_repeat_words) or a bigram
        (no_repeat_bigrams) of their hypothesis."""
        seqs = tf.reshape(beams.seqs, [self.B * self.K, self.L])
        if self.no_repeat_words:
            extend = block_repeated_words(extend, seqs, t, self.continuing)
        if self.no_repeat_bigrams:  # pieces that may repeat still may not loop
            extend = block_repeated_bigrams(extend, beams.tokens, seqs, t)
        return extend

    def force_prefix(
        self, log_probs: tf.Tensor, extend: tf.Tensor, eos: tf.Tensor, t: int | tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Rows within their prefix keep only the forced token (even a banned one; its own
        log-probability) and cannot end: (extend, eos) with that applied."""
        forced_id = tf.repeat(
            tf.gather(self.prefix, tf.minimum(t, self.prefix_last), axis=1), self.K
        )
        forced = forced_id != PAD
        forced_logp = tf.where(forced, tf.gather(log_probs, forced_id, batch_dims=1), NEG_INF)
        extend = tf.where(forced[:, None], NEG_INF, extend)
        at = tf.stack([tf.range(tf.shape(forced_id)[0]), forced_id], axis=1)
        return tf.tensor_scatter_nd_max(extend, at, forced_logp), tf.where(forced, NEG_INF, eos)

    def add_finished(
        self,
        pool: Finished,
        beams: Beams,
        eos: tf.Tensor,
        traces: tf.Tensor | None,
        t: int | tf.Tensor,
    ) -> Finished:
        """The pool with the alive beams ended now (`eos` [N] their ending's log-probability,
        `traces` [B, K, X] theirs) offered to it: the best F, duplicates collapsed."""
        end_logp = beams.log_probs + tf.reshape(eos, [self.B, self.K])
        end_score = end_logp / length_penalty(t + 1, self.alpha)
        seqs = tf.concat([pool.seqs, beams.seqs], axis=1)
        scores = tf.concat([pool.scores, end_score], axis=1)
        logps = tf.concat([pool.log_probs, end_logp], axis=1)
        if self.dedupe:
            scores = collapse_duplicates(seqs, scores)
        best, keep = tf.math.top_k(scores, self.F)
        if traces is not None:
            traces = tf.gather(tf.concat([pool.traces, traces], axis=1), keep, batch_dims=1)
        return Finished(
            tf.gather(seqs, keep, batch_dims=1),
            best,
            tf.gather(logps, keep, batch_dims=1),
            pool.traces if traces is None else traces,
        )

    def extend_alive(self, beams: Beams, extend: tf.Tensor, t: int | tf.Tensor) -> Beams:
        """The alive beams' best K extensions (`extend` [N, V] their log-probabilities) as
        the new alive beams, with token t written and the state reordered with them."""
        vocab_size = tf.shape(extend)[1]
        total = beams.log_probs[:, :, None] + tf.reshape(extend, [self.B, self.K, vocab_size])
        log_probs, flat = top_k(tf.reshape(total, [self.B, self.K * vocab_size]), self.K)
        parent, token = flat // vocab_size, flat % vocab_size
        seqs = tf.gather(beams.seqs, parent, batch_dims=1)
        seqs = tf.where(tf.range(self.L) == t, token[:, :, None], seqs)
        state = reorder(beams.state, tf.reshape(self.rows + parent, [-1]))
        return Beams(tf.reshape(token, [-1]), state, seqs, log_probs)

    def should_stop(
        self, alive_logp: tf.Tensor, pool_scores: tf.Tensor, t: int | tf.Tensor
    ) -> tf.Tensor:
        """True once, in every row, no alive beam (`alive_logp` [B, K] after step t) can still
        beat the worst of a full pool (`pool_scores` [B, F]). With `exact_stop` at any length
        up to max_length, else at its next length (see `beam_search`)."""
        best_alive = tf.reduce_max(alive_logp, axis=1)
        next_penalty = length_penalty(t + 2, self.alpha)
        penalty = tf.maximum(self.max_penalty, next_penalty) if self.exact_stop else next_penalty
        return tf.reduce_all((best_alive / penalty < pool_scores[:, -1]) | (best_alive == NEG_INF))

    def finalize(self, pool: Finished) -> dict[str, tf.Tensor]:
        """The result dict of `beam_search` from the final pool."""
        found = pool.scores > NEG_INF
        ids = tf.where(found[:, :, None], pool.seqs, PAD)
        result = {
            "ids": ids,
            "lengths": tf.reduce_sum(tf.cast(ids != PAD, tf.int32), axis=-1),
            "scores": pool.scores,
            "log_probs": tf.where(found, pool.log_probs, NEG_INF),
        }
        if self.trace:
            result["trace"] = tf.where(found[:, :, None], pool.traces, 0.0)
        return result


def beam_search(step_fn: StepFn, state: State, **options: Any) -> dict[str, tf.Tensor]:
    """The `num_results` best finished hypotheses of each batch row, best first, under the
    search `options` (BeamSearch's keyword arguments: batch_size, beam_size, num_results,
    max_length, length_alpha and exact_stop always; their meaning there).

    `step_fn(tokens [N], state, t) -> (log_probs [N, V_ext], state)` with N = batch * beam;
    `state` has leading dimension `batch_size` and is tiled to N here; after each step it
    is reordered with the beams, except what sits under a "context" key (see `reorder`).
    Returns a dict of `ids` int32 [B, k, L] (0-padded, no eos), `lengths` int32 [B, k]
    (tokens in `ids`), `scores` float32 [B, k] (length-normalised, -inf where fewer than k)
    and `log_probs` float32 [B, k] (raw sums), and with a `trace` its `trace`.
    """
    search = BeamSearch(step_fn, **options)
    beams, pool = search.initialize(state)
    loop = (tf.constant(0), beams, pool, tf.constant(False))
    _, _, pool, _ = tf.while_loop(
        lambda t, beams, pool, done: tf.logical_not(done),
        search.step,
        loop,
        maximum_iterations=options["max_length"],
    )
    return search.finalize(pool)


def reorder(state: State, order: tf.Tensor) -> State:
    """The state's tensors gathered along axis 0 by `order`, except those under a "context"
    key (at any depth): they are the same for every beam of a batch row."""
    if isinstance(state, dict):
        return {
            key: value if key == "context" else reorder(value, order)
            for key, value in state.items()
        }
    return tf.nest.map_structure(lambda x: tf.gather(x, order), state)
