"""Latency of the top-5 next-query suggestions for one session of three queries, ours
against keras-hub's BeamSampler, on the same weights: driven by the models' own cached
`step` (what our search itself is worth) and without a key/value cache (what the cached step
interface is worth).

Why: suggestions are shown while the user types, so one session should decode in about
10 ms on this 2-core CPU, and the cached step interface (`model.start`/`model.step`) has
to earn its keep against the stock sampler's usual use, which recomputes the decoder over
the whole prompt at every step.

Timed, in one process, each call interleaved with the others so load hits all alike:
- search: the service's numeric core, `SuggestionService.core` (XLA-compiled, as the
  service and the export run it by default): `model.start` and `beam_search` with the
  product's decoding (DecodeConfig: length normalisation, de-duplication, one extra result
  for the dropped last query, copy weights traced) at beam 5, k 5, on the encoded session;
- the same without XLA (`--no-xla`: for servers without XLA);
- suggest: `SuggestionService.suggest` on the [1, 3] strings: normalisation, vocabulary
  lookup, the XLA search, words and copy attention;
- suggest, ranked: the product's `suggest` when the model has a ranking (DecodeConfig's
  defaults: beam 8, the query log's candidates scored by the model in the same XLA call,
  the ranker, the filters and the threshold);
- complete, ranked: the same with two characters of the next query typed (`complete`: the
  beam constrained to them, the log's candidates that start with them and its most frequent
  completions of them);
- suggest_with_history, H=200: the same with a made-up history of 200 earlier queries (its
  candidates scored in the same call, its evidence for every candidate); target p50 at most
  1.5 times the ranked suggest's;
- keras-hub: `BeamSampler(num_beams=5, return_all_beams=True)` in a `tf.function` whose
  `next` runs the model's decoder layers over the whole prompt (causal mask, no caches)
  and returns the same next-token distribution as `model.step` (`model.next_log_probs`;
  <pad>, <unk>, <bos> and a first <eos> banned as ours does; a beam that has emitted
  <eos> is frozen by giving <pad> probability 1, which the sampler has no notion of).
  `next` returns log-probabilities, so the sampler takes `exp` of them
  instead of a softmax, which would renormalise around the banned tokens. The ratio target
  is against this; the same sampler compiled with XLA is timed too, and its ratio printed;
- keras-hub, cached step: the same sampler whose `next` is `model.step` on the state of
  `model.start` (the sampler tiles it to the beams and reorders it with them), with and
  without XLA: the same work per step as ours, so its ratio to ours is the search's own
  (the pool of finished hypotheses, the stop rule, de-duplication, repeat blocking).
All of them encode the session inside the timed function.

The check: with length normalisation and de-duplication off, our best sequence should be
keras-hub's, with the same log-probability (same distribution, same beam width). They can
differ: keras-hub keeps an <eos> ending only when it is among the top 5 extensions, ours
offers every alive beam's <eos> ending to a separate pool of finished hypotheses.

Run: python benchmarks/bench_decode.py [--model DIR] [--runs 50] [--threads N]
Without --model (or if DIR is missing) an untrained `small` MTN is timed. Its steps cost
what a trained one's do, but it rarely ends a beam, so both searches run the full n + 1
steps where a trained model stops after about 6: its times are upper bounds.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras_hub
import numpy as np
import tensorflow as tf

from mtn_keras.base.config import DecodeConfig, preset
from mtn_keras.data.encode import encode_session
from mtn_keras.data.text import normalise
from mtn_keras.data.vocab import BOS, EOS, PAD, SPECIALS, UNK, Vocabulary
from mtn_keras.decoding import beam_search
from mtn_keras.models.mtn import MTN
from mtn_keras.serving.service import SuggestionService
from mtn_keras.training.artifacts import load_trained

SESSION = ["cheap flights", "cheap flights to paris", "paris hotels"]
VOCAB_SIZE = 10289  # the vocabulary of the AOL training split
BEAM = K = 5
TARGET_P50_MS, TARGET_RATIO = 10.0, 5.0
HISTORY = 200  # earlier queries of the made-up searcher


def made_up_history(tokens, size):
    """`size` earlier queries of two or three vocabulary words, some typed twice, some that
    share a word with SESSION: what a searcher's history looks like to the graph."""
    rng = np.random.default_rng(0)
    words = [t for t in tokens[4:] if not t.startswith("##")][:2000]
    queries = [" ".join(rng.choice(words, size=int(rng.integers(2, 4)))) for _ in range(size)]
    for i in range(0, size, 7):
        queries[i] = queries[i // 2]
    queries[-1] = SESSION[-1]
    return queries


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a directory written by python -m mtn_keras.train")
    parser.add_argument("--preset", default="small", help="untrained model's size (default small)")
    parser.add_argument("--runs", type=int, default=50, help="timed runs of each (default 50)")
    parser.add_argument("--threads", type=int, help="TF intra- and inter-op threads (default TF's)")
    return parser.parse_args(argv)


def load_model(path, preset_name):
    """(model, vocabulary, description, ranking): the trained model in `path` (with its
    ranking or None), else an untrained one (no ranking)."""
    if path and os.path.isdir(path):
        trained = load_trained(path)
        return trained.model, trained.vocab, f"trained {trained.name} from {path}", trained.ranking
    config, _ = preset(preset_name)
    config.vocab_size = VOCAB_SIZE
    model = MTN(config)
    model.build()
    words = list(dict.fromkeys(w for q in SESSION for w in q.split()))
    fillers = [f"word{i}" for i in range(VOCAB_SIZE - len(SPECIALS) - len(words))]
    missing = f" ({path} is missing)" if path else ""
    return (
        model,
        Vocabulary([*SPECIALS, *words, *fillers]),
        f"untrained {preset_name} MTN{missing}",
        None,
    )


def encoded_session(vocab, n):
    """The session's token and extended ids, int32 [1, 3, n] each."""
    encoded = encode_session([normalise(q) for q in SESSION], vocab, n)
    return tf.constant(encoded.tokens[None]), tf.constant(encoded.ext[None])


def make_plain_search(model):
    """tf.function (tokens, ext) -> beam_search's dict over model.start/model.step, ranked
    as keras-hub ranks: no length normalisation, no de-duplication."""

    @tf.function
    def plain_search(tokens, ext):
        return beam_search(
            model.step,
            model.start(tokens, ext),
            batch_size=tf.shape(tokens)[0],
            beam_size=BEAM,
            num_results=K,
            max_length=model.config.max_query_tokens + 1,
            length_alpha=0.0,
            exact_stop=True,
            dedupe=False,
        )

    return plain_search


class LogProbBeamSampler(keras_hub.samplers.BeamSampler):
    """keras-hub's BeamSampler on a `next` that returns log-probabilities."""

    def compute_probabilities(self, logits):
        return tf.exp(tf.cast(logits, tf.float32))


def constrained(log_probs, prompt, index):
    """Log-probabilities [N, V_ext] at `index` with <pad>, <unk>, <bos> and a first <eos>
    banned as ours does, and a beam that has emitted <eos> frozen (<pad> probability 1)."""
    ids = tf.range(tf.shape(log_probs)[1])
    banned = (ids <= BOS) | ((ids == EOS) & (index == 1))
    log_probs = tf.where(banned, -np.inf, log_probs)
    frozen = tf.where(ids == PAD, 0.0, -np.inf)
    finished = tf.reduce_any(prompt == EOS, axis=1)[:, None]
    return tf.where(finished, frozen, log_probs)


def bos_prompt(batch, m):
    """[batch, m + 1]: <bos>, then room for m tokens."""
    return tf.pad(tf.fill([batch, 1], BOS), [[0, 0], [0, m]])


def make_reference(model, jit_compile=False):
    """tf.function (tokens, ext) -> (prompts [B, beam, n+2], log_probs [B, beam]) of
    keras-hub's BeamSampler, re-running the decoder over the whole prompt every step."""
    sampler = LogProbBeamSampler(num_beams=BEAM, return_all_beams=True)
    vocab_size, m = model.config.vocab_size, model.config.max_query_tokens + 1

    @tf.function(jit_compile=jit_compile)
    def reference(tokens, ext):
        codes, token_mask, *_ = model.encode(tokens)
        batch, d = tf.shape(codes)[0], tf.shape(codes)[3]

        def tile(x):
            return tf.repeat(x, BEAM, axis=0)

        memory, memory_mask = tile(codes[:, -1]), tile(token_mask[:, -1])
        context = {
            "copy_memory": tile(tf.reshape(codes, [batch, -1, d])),
            "source_ext": tile(tf.reshape(ext, [batch, -1])),
        }
        if model.copy_head is not None:
            context["copy_keys"] = model.copy_head.keys(context["copy_memory"])
        copy_state = {"context": context}

        def next_fn(prompt, cache, index):
            inputs = tf.where(prompt[:, :m] >= vocab_size, UNK, prompt[:, :m])
            y = model.embed(model.target_positions, inputs)
            for layer in model.decoder_layers:
                y = layer(y, memory, encoder_padding_mask=memory_mask)
            log_probs, _ = model.next_log_probs(tf.gather(y, index - 1, axis=1), copy_state)
            return constrained(log_probs, prompt, index), None, cache

        return sampler(next_fn, bos_prompt(batch, m), index=1, stop_token_ids=[EOS])

    return reference


def make_cached_reference(model, jit_compile=False):
    """As `make_reference`, with `next` the model's own cached step: `model.step` feeds the
    last token on the state of `model.start`, which the sampler carries as its cache."""
    sampler = LogProbBeamSampler(num_beams=BEAM, return_all_beams=True)
    m = model.config.max_query_tokens + 1

    @tf.function(jit_compile=jit_compile)
    def reference(tokens, ext):
        def next_fn(prompt, state, index):
            log_probs, state = model.step(prompt[:, index - 1], state, index - 1)
            return constrained(log_probs, prompt, index), None, state

        return sampler(
            next_fn,
            bos_prompt(tf.shape(tokens)[0], m),
            cache=model.start(tokens, ext),
            index=1,
            stop_token_ids=[EOS],
        )

    return reference


def words_of(ids, vocab, ext):
    """Ids -> words, extended ids as the session word they copy."""
    copies = {i: w for q, row in zip(SESSION, ext.numpy()[0]) for w, i in zip(q.split(), row)}
    out = []
    for i in ids:
        if i in (EOS, PAD):
            break
        out.append(vocab.tokens[i] if i < len(vocab) else copies.get(i, f"<copy {i}>"))
    return " ".join(out)


def check_same_best(model, reference, cached, vocab, tokens, ext):
    """Print our best sequence (no length normalisation, no de-duplication) beside keras-hub's,
    and whether keras-hub's on the cached step is the same as without cache."""
    found = make_plain_search(model)(tokens, ext)
    prompts, log_probs = reference(tokens, ext)
    cached_prompts, cached_log_probs = cached(tokens, ext)
    same = (
        np.array_equal(cached_prompts.numpy()[0, 0], prompts.numpy()[0, 0])
        and abs(float(cached_log_probs[0, 0]) - float(log_probs[0, 0])) < 1e-3
    )
    print(
        f"check: keras-hub's best on the cached step is {'the same as' if same else 'NOT'} "
        "without cache"
    )
    ours = words_of(found["ids"].numpy()[0, 0], vocab, ext)
    theirs = words_of(prompts.numpy()[0, 0, 1:], vocab, ext)
    ours_lp, theirs_lp = float(found["log_probs"][0, 0]), float(log_probs[0, 0])
    print(f"best sequence, ours:      {ours!r} (log p {ours_lp:.4f})")
    print(f"best sequence, keras-hub: {theirs!r} (log p {theirs_lp:.4f})")
    if ours == theirs and abs(ours_lp - theirs_lp) < 1e-3:
        print("check: same best sequence and log-probability")
    else:
        unfinished = "" if EOS in prompts.numpy()[0, 0] else ", keras-hub's unfinished"
        print(
            f"check: different best sequence{unfinished}; ours is "
            f"{'less' if ours_lp < theirs_lp else 'at least as'} likely. keras-hub keeps an "
            f"<eos> ending only when it ranks in the top {BEAM} of all extensions (then it "
            "holds a beam); ours offers every alive beam's <eos> ending to a separate pool"
        )


def time_interleaved(contenders, runs):
    """Milliseconds of `runs` calls of each (name -> thunk), calls interleaved A, B, C, A..."""
    times = {name: [] for name in contenders}
    for _ in range(runs):
        for name, thunk in contenders.items():
            start = time.perf_counter()
            tf.nest.map_structure(lambda x: x.numpy(), thunk())
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: np.percentile(t, [50, 95]) for name, t in times.items()}


def report(stats, description, runs, loads):
    """The table, the ratios and the one-line summary."""
    print(
        f"{runs} runs each, interleaved; load average (1 min) {loads[0]:.2f} before, "
        f"{loads[1]:.2f} after, on {os.cpu_count()} CPUs"
    )
    print(f"{'':38s} {'p50 ms':>8s} {'p95 ms':>8s}")
    for name, (p50, p95) in stats.items():
        print(f"{name:38s} {p50:8.2f} {p95:8.2f}")
    ref, ref_xla = stats["keras-hub BeamSampler"][0], stats["keras-hub BeamSampler, XLA"][0]
    cached, cached_xla = (stats[f"keras-hub BeamSampler, cached step{x}"][0] for x in ("", ", XLA"))
    search, p95 = stats["search (ours)"]
    plain, full = stats["search (ours, no XLA)"][0], stats["suggest signature (ours)"][0]
    print(
        f"ratio keras-hub p50 / ours p50: search {ref / search:.1f}x (no XLA {ref / plain:.1f}x), "
        f"suggest {ref / full:.1f}x; keras-hub with XLA / search {ref_xla / search:.1f}x"
    )
    print(
        f"ratio keras-hub on the cached step p50 / ours p50 (the search itself): "
        f"XLA {cached_xla / search:.2f}x, no XLA {cached / plain:.2f}x"
    )
    verdict = "met" if search <= TARGET_P50_MS and ref / search >= TARGET_RATIO else "missed"
    ranked = ""
    if "suggest, ranked (ours)" in stats:
        alone = stats["suggest, ranked (ours)"][0]
        mine = stats[f"suggest_with_history, H={HISTORY}"][0]
        ranked = (
            f", ranked suggest p50 {alone:.1f} ms, suggest_with_history (H={HISTORY}) p50 "
            f"{mine:.1f} ms = {mine / alone:.2f}x (target <= 1.5x)"
        )
    print(
        f"summary: {description}, top-{K} of a 3-query session, {os.cpu_count()} CPUs at load "
        f"{loads[1]:.1f}: search p50 {search:.1f} ms (p95 {p95:.1f}; {plain:.1f} without XLA), "
        f"suggest p50 {full:.1f} ms{ranked}, "
        f"keras-hub BeamSampler without cache p50 {ref:.1f} ms = "
        f"{ref / search:.1f}x the search ({ref_xla:.1f} ms with XLA = {ref_xla / search:.1f}x); "
        f"target p50 <= {TARGET_P50_MS:g} ms and >= {TARGET_RATIO:g}x {verdict}"
    )


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    model, vocab, description, ranking = load_model(args.model, args.preset)
    n = model.config.max_query_tokens
    tokens, ext = encoded_session(vocab, n)
    strings = tf.constant([SESSION])
    # Held here: `suggest` keeps only a weak reference to the service.
    service = SuggestionService(model, vocab.tokens, DecodeConfig(k=K, beam=BEAM))
    plain = SuggestionService(model, vocab.tokens, DecodeConfig(k=K, beam=BEAM, xla=False))
    reference = make_reference(model)
    reference_xla = make_reference(model, jit_compile=True)
    cached = make_cached_reference(model)
    cached_xla = make_cached_reference(model, jit_compile=True)
    # The service pads sessions at the front to max_queries slots before its search.
    pad = [[0, 0], [model.config.max_queries - len(SESSION), 0], [0, 0]]
    padded = tf.pad(tokens, pad), tf.pad(ext, pad)
    contenders = {
        "search (ours)": lambda: service.core(*padded),
        "search (ours, no XLA)": lambda: plain.core(*padded),
        "suggest signature (ours)": lambda: service.suggest(strings),
        "keras-hub BeamSampler": lambda: reference(tokens, ext),
        "keras-hub BeamSampler, XLA": lambda: reference_xla(tokens, ext),
        "keras-hub BeamSampler, cached step": lambda: cached(tokens, ext),
        "keras-hub BeamSampler, cached step, XLA": lambda: cached_xla(tokens, ext),
    }
    if ranking is not None:
        ranked = SuggestionService(model, vocab.tokens, DecodeConfig(), ranking)
        history = tf.constant([made_up_history(vocab.tokens, HISTORY)])
        contenders["suggest, ranked (ours)"] = lambda: ranked.suggest(strings)
        contenders[f"suggest_with_history, H={HISTORY}"] = lambda: ranked.suggest_with_history(
            strings, history
        )
        typed = tf.constant(["ch"])
        contenders["complete, ranked (ours)"] = lambda: ranked.complete(strings, typed)
    threads = [
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
    ]
    print(
        f"model: {description}, {model.count_params():,} parameters, vocabulary {len(vocab):,}, "
        f"n {n}; session {' | '.join(SESSION)!r}; beam {BEAM}, top {K}; TF threads intra/inter "
        f"{'/'.join(str(t or 'default') for t in threads)}"
    )
    check_same_best(model, reference, cached, vocab, tokens, ext)
    print(f"top suggestion: {service.suggest(strings)['suggestions'].numpy()[0, 0].decode()!r}")
    for thunk in contenders.values():  # trace and warm up
        thunk(), thunk()
    load_before = os.getloadavg()[0]
    stats = time_interleaved(contenders, args.runs)
    report(stats, description, args.runs, (load_before, os.getloadavg()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
