"""What every neural suggestion model shares: the vocabulary and copy heads, the loss,
and the decoding step interface (`start`, `step`) used by beam search and export."""

from typing import Any, Self

import keras
import keras_hub
from keras import ops

from mtn_keras.base.config import ModelConfig, model_config_from_dict
from mtn_keras.base.distribute import reducible_logs, replica_loss
from mtn_keras.data.vocab import PAD, SPECIALS, UNK
from mtn_keras.layers import CopyHead
from mtn_keras.layers.hints import State, Tensor, Tensors


def pair_mask(real: Tensor, n: int | Tensor, num_pairs: int | Tensor) -> Tensor:
    """(B, S*n) real token slots of S queries of n slots -> (B, P, S*n): pair t (which
    predicts query t+1) sees the real slots of queries 0..t. The one home of that rule."""
    query_of_slot = ops.arange(ops.shape(real)[1]) // n
    visible = query_of_slot[None, :] <= ops.arange(num_pairs)[:, None]  # (P, S*n)
    return ops.logical_and(visible[None], real[:, None, :])


def copy_source_mask(session_ext: Tensor, num_pairs: int | Tensor) -> Tensor:
    """(B, S, n) source ids -> (B, P, S*n): pair t may copy the real tokens of queries 0..t."""
    real = ops.reshape(session_ext, (ops.shape(session_ext)[0], -1)) != PAD
    return pair_mask(real, ops.shape(session_ext)[2], num_pairs)


class SuggestionModel(keras.Model):
    """Base of the neural models: subclasses provide `forward`, `encode_for_decoding`
    and `decoder_step`; this class turns decoder states into next-token distributions.

    `forward(inputs, training)` returns decoder states (B, P, m, d) for every pair of the
    session and the source token codes (B, S*n, d) the copy head attends to.
    """

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = model_config_from_dict(config)
        self.config = config
        # One token embedding for sources and targets, tied to the output softmax: on
        # logs of this size it halves the parameters and helps the rare words.
        self.token_embedding = keras_hub.layers.ReversibleEmbedding(
            config.vocab_size, config.embed_dim, name="token_embedding"
        )
        self.output_projection = (
            keras.layers.Dense(config.embed_dim, name="output_projection")
            if config.embed_dim != config.d_model
            else None
        )
        self.copy_head = CopyHead(config.d_model, name="copy_head") if config.copy else None
        self.nll_tracker = keras.metrics.Mean(name="nll")

    def build(self, input_shape: object = None) -> None:
        """Build every layer by running a one-session dummy batch through them."""
        n = self.config.max_query_tokens
        dummy = ops.ones((1, 2, n), "int32")
        inputs = {"session_tokens": dummy, "session_ext": dummy, "decoder_input": dummy[:, :1]}
        if self.config.history_queries:
            inputs["history_tokens"] = ops.ones((1, self.config.history_queries, n), "int32")
        self.call(inputs)
        self.vocab_logits(ops.zeros((1, self.config.d_model)))
        self.built = True

    def get_config(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {**super().get_config(), "config": asdict(self.config)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Self:
        return cls(**config)

    # --- training -------------------------------------------------------------------

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        """Keras builds a model under a tf.distribute strategy from a first batch reduced
        across replicas, which fails for dict inputs across workers (keras-team/keras#20329);
        a built model with a built optimizer needs nothing from that batch."""
        if self.built and self.optimizer is not None and self.optimizer.built:
            return
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def compute_metrics(
        self, x: Tensors, y: Tensor, y_pred: Tensors, sample_weight: Tensor | None = None
    ) -> dict[str, Any]:
        """The step's logs, shaped so that Keras can reduce them across workers."""
        return reducible_logs(super().compute_metrics(x, y, y_pred, sample_weight))

    def call(self, inputs: Tensors, training: bool = False) -> dict[str, Tensor]:
        """Decoder states (B, P, m, d) of every pair, and with the copy head its copy
        attention (B, P*m, S*n) over the session's tokens and its gate (B, P*m, 1)."""
        hidden, memory = self.forward(inputs, training=training)
        outputs = {"hidden": hidden}
        if self.copy_head is not None:
            batch, pairs, length, d = (ops.shape(hidden)[i] for i in range(4))
            mask = copy_source_mask(inputs["session_ext"], pairs)
            outputs["copy_attention"], outputs["gate"] = self.copy_head(
                ops.reshape(hidden, (batch, pairs * length, d)),
                memory,
                ops.repeat(mask, length, axis=1),
            )
        return outputs

    def compute_loss(
        self,
        x: Tensors | None = None,
        y: Tensor | None = None,
        y_pred: Tensors | None = None,
        sample_weight: Tensor | None = None,
        training: bool = True,
    ) -> Tensor:
        """Masked cross-entropy of the next queries, with label smoothing on the
        vocabulary softmax and (M-NSRF) an entropy term; logits only where targets are real."""
        assert x is not None and y_pred is not None, "Keras's train step passes both"
        nll, smooth, entropy, weight = self.token_losses(x, y, y_pred)
        eps = self.config.label_smoothing
        per_token = (1.0 - eps) * nll + eps * smooth
        if self.config.entropy_weight:
            per_token = per_token - self.config.entropy_weight * entropy
        total = ops.maximum(ops.sum(weight), 1.0)
        self.nll_tracker.update_state(ops.sum(nll * weight) / total, sample_weight=total)
        return replica_loss(ops.sum(per_token * weight), ops.sum(weight))

    def token_losses(
        self, x: Tensors, y: Tensor, y_pred: Tensors
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Per real target token: NLL, smoothing term, vocabulary entropy, and weight."""
        hidden = y_pred["hidden"]
        batch = ops.shape(y)[0]
        target = ops.reshape(y, (-1,))
        valid = target != PAD
        columns = [ops.reshape(hidden, (-1, ops.shape(hidden)[-1])), target]
        if self.copy_head is not None:
            k = ops.shape(y_pred["copy_attention"])[-1]
            source = ops.reshape(x["session_ext"], (batch, 1, k))
            hits = ops.reshape(y, (batch, -1, 1)) == source
            copied = ops.sum(y_pred["copy_attention"] * ops.cast(hits, "float32"), axis=-1)
            columns += [ops.reshape(copied, (-1,)), ops.reshape(y_pred["gate"], (-1,))]
        columns, weight = _select(valid, columns)
        h, tgt = columns[0], columns[1]
        log_p_vocab = ops.log_softmax(ops.cast(self.vocab_logits(h), "float32"), axis=-1)
        in_vocab = tgt < self.config.vocab_size
        safe = ops.where(in_vocab, tgt, UNK)
        log_p_target = ops.take_along_axis(log_p_vocab, safe[:, None], axis=-1)[:, 0]
        if self.copy_head is None:
            nll = -log_p_target
        else:
            copied, gate = columns[2], columns[3]
            p_vocab = ops.where(in_vocab, ops.exp(log_p_target), 0.0)
            nll = -ops.log(gate * p_vocab + (1.0 - gate) * copied + 1e-9)
        smooth = -ops.mean(log_p_vocab, axis=-1)
        entropy = -ops.sum(ops.exp(log_p_vocab) * log_p_vocab, axis=-1)
        return nll, smooth, entropy, weight

    # --- decoding -------------------------------------------------------------------

    def start(
        self, session_tokens: Tensor, session_ext: Tensor, history_tokens: Tensor | None = None
    ) -> State:
        """Encode sessions (B, S, n) for decoding their next query, with the user's earlier
        queries `history_tokens` (B, H, n) where given (MTN); see docs/contracts.md."""
        if history_tokens is None:
            state = self.encode_for_decoding(session_tokens)
        else:
            state = self.encode_for_decoding(session_tokens, history_tokens)
        batch = ops.shape(session_ext)[0]
        context = state["context"]
        if "session_attention" not in context:  # the flat models have none (zero layers)
            context["session_attention"] = self.session_attention(session_tokens)
        context["source_ext"] = ops.reshape(session_ext, (batch, -1))
        state["copied"] = ops.zeros(ops.shape(context["source_ext"]), "float32")
        if self.copy_head is not None:
            context["copy_keys"] = self.copy_head.keys(context["copy_memory"])
        return state

    def step(self, tokens: Tensor, state: State, t: int | Tensor) -> tuple[Tensor, State]:
        """Log probabilities (N, V + S*n) of the token after `tokens` at position t; the
        state's `copied` (N, S*n) sums the copy weights (1 - g) * attention of the steps."""
        hidden, state = self.next_hidden(tokens, state, t)
        log_probs, copy = self.next_log_probs(hidden, state)
        if copy is not None:
            state["copied"] = state["copied"] + copy
        return log_probs, state

    def next_log_probs(self, hidden: Tensor, state: State) -> tuple[Tensor, Tensor | None]:
        """Log probabilities (N, V + S*n) of the next token from decoder states (N, d), and
        the copy weights (1 - g) * attention (N, S*n) (None without the copy head)."""
        log_probs = unknown_as_rarest(
            ops.log_softmax(ops.cast(self.vocab_logits(hidden), "float32"), axis=-1)
        )
        source_ext = state["context"]["source_ext"]
        padding = ops.full(ops.shape(source_ext), -float("inf"), "float32")
        if self.copy_head is None:
            return ops.concatenate([log_probs, padding], axis=-1), None
        attention, gate = self.copy_attention(hidden, state)
        copy = (1.0 - gate) * attention
        log_probs = ops.concatenate([log_probs + ops.log(gate), padding], axis=-1)
        return add_copy_mass(log_probs, copy, source_ext), copy

    def target_log_probs(
        self, hidden: Tensor, targets: Tensor, state: State
    ) -> tuple[Tensor, Tensor | None]:
        """`next_log_probs` of one given target per row: log probabilities (N,) of `targets`
        (N,; extended ids) from decoder states (N, d), and the copy weights (N, S*n) (None
        without the copy head). No distribution over the extended vocabulary is built."""
        logits = ops.cast(self.vocab_logits(hidden), "float32")
        in_vocab = targets < self.config.vocab_size
        ids = ops.where(in_vocab, targets, UNK)[:, None]
        picked = ops.take_along_axis(unknown_as_rarest(logits), ids, axis=1)[:, 0]
        log_p = ops.where(in_vocab, picked - ops.logsumexp(logits, axis=-1), -float("inf"))
        if self.copy_head is None:
            return log_p, None
        attention, gate = self.copy_attention(hidden, state)
        copy = (1.0 - gate) * attention
        hits = targets[:, None] == state["context"]["source_ext"]
        mass = ops.sum(ops.where(hits, copy, 0.0), axis=-1)
        return with_copy_mass(log_p + ops.log(gate[:, 0]), mass), copy

    def teacher_forced_hidden(self, tokens: Tensor, state: State) -> Tensor:
        """Decoder states (N, L, d) after each of `tokens` (N, L; L static) from `start`'s
        state: what L calls of `next_hidden` give (here step by step; models whose decoder
        allows it run all positions in one pass). Scores whole candidates at once."""
        hidden = []
        for t in range(tokens.shape[1]):
            h, state = self.next_hidden(tokens[:, t], state, t)
            hidden.append(h)
        return ops.stack(hidden, axis=1)

    def next_hidden(self, tokens: Tensor, state: State, t: int | Tensor) -> tuple[Tensor, State]:
        """Decoder state (N, d) after `tokens` (N,) at position t; a copied word outside the
        vocabulary is fed back as <unk>."""
        return self.decoder_step(ops.where(tokens >= self.config.vocab_size, UNK, tokens), state, t)

    def session_attention(self, session_tokens: Tensor) -> Tensor:
        """Session-level attention (B, layers, heads, S, S); none for flat models."""
        batch, size = ops.shape(session_tokens)[0], ops.shape(session_tokens)[1]
        return ops.zeros((batch, 0, 1, size, size))

    def vocab_logits(self, hidden: Tensor) -> Tensor:
        """Logits over the vocabulary from states (..., d), through the tied embedding."""
        if self.output_projection is not None:
            hidden = self.output_projection(hidden)
        # A 2-D einsum, not the layer's reverse call, which transposes the whole table at
        # every decoding step; with "..." TensorFlow's gradient would build a (V, d, T) tensor.
        flat = ops.reshape(hidden, (-1, ops.shape(hidden)[-1]))
        logits = ops.einsum("nd,vd->nv", flat, self.token_embedding.embeddings)
        return ops.reshape(logits, (*ops.shape(hidden)[:-1], -1))

    def copy_attention(self, hidden: Tensor, state: State) -> tuple[Tensor, Tensor]:
        """Copy attention (N, S*n) and gate (N, 1) of decoder states (N, d)."""
        assert self.copy_head is not None, "called by models with the copy head only"
        context = state["context"]
        mask = context["source_ext"] != PAD
        attention, gate = self.copy_head.attend(
            hidden[:, None, :], context["copy_keys"], context["copy_memory"], mask[:, None, :]
        )
        return attention[:, 0], gate[:, 0]

    @property
    def size_mb(self) -> float:
        """Model size in MB as float32 parameters (the paper's Table 2 column)."""
        return self.count_params() * 4 / 2**20


def unknown_as_rarest(scores: Tensor) -> Tensor:
    """Logits or log-probabilities [N, V] with the <unk> column set to the row's least likely
    word. Decoding scores a word outside the vocabulary (a typed word, a log candidate's) as
    no likelier than any word the model knows: the <unk> logit is the mass of every rare
    word, which the beam never proposes. Training still learns <unk> as it is."""
    words = scores[:, len(SPECIALS) :]
    column = ops.arange(ops.shape(scores)[-1]) == UNK
    rarest = ops.min(words, axis=-1, keepdims=True, initial=float("inf"))  # no rows: no error
    return ops.where(column[None, :], rarest, scores)


def add_copy_mass(log_probs: Tensor, copy: Tensor, source_ext: Tensor) -> Tensor:
    """log(exp(log_probs) + copy mass) (N, V_ext), the mass copy (N, K) put on the ids
    source_ext (N, K). Only the sources' ids are touched: a log/exp pass over the whole
    extended vocabulary at every decoding step is what this avoids."""
    rows, num_sources = ops.shape(source_ext)[0], ops.shape(source_ext)[1]
    same = ops.cast(source_ext[:, :, None] == source_ext[:, None, :], copy.dtype)
    mass = ops.sum(copy[:, None, :] * same, axis=-1)  # each source's id's total
    current = ops.take_along_axis(log_probs, source_ext, axis=1)
    mixed = with_copy_mass(current, mass)
    index = ops.stack(
        [ops.repeat(ops.arange(rows), num_sources), ops.reshape(source_ext, (-1,))], axis=1
    )
    return ops.scatter_update(log_probs, index, ops.reshape(mixed, (-1,)))


def with_copy_mass(log_probs: Tensor, mass: Tensor) -> Tensor:
    """log(exp(log_probs) + mass), elementwise; log_probs where no mass was copied."""
    return ops.where(
        mass > 0, ops.logaddexp(log_probs, ops.log(ops.maximum(mass, 1e-30))), log_probs
    )


def _select(valid: Tensor, columns: list[Tensor]) -> tuple[list[Tensor], Tensor]:
    """The rows of `columns` where `valid`, and their weights: gathered under TensorFlow
    (so only real target tokens reach the vocabulary projection), masked elsewhere."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        picked = [tf.boolean_mask(c, valid) for c in columns]
        return picked, ops.ones(ops.shape(picked[1]), "float32")
    return columns, ops.cast(valid, "float32")
