"""The reports of `evaluate` and `compare` on session pairs: a trained model's (in this
process, with its perplexity), an export's through its client (mtn_keras.load), and the
`--prefix` report of either's completions. The commands' wiring of the scorecard to the
clients and the trained models, which the scorecard beneath them does not import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mtn_keras.base.config import DecodeConfig
from mtn_keras.client.answer import Answer
from mtn_keras.client.suggester import Suggester
from mtn_keras.data.history import PairHistories, latest
from mtn_keras.data.pairs import session_pairs
from mtn_keras.scorecard import model_report
from mtn_keras.scorecard.anchors import BatchSuggester, Scored
from mtn_keras.scorecard.completion import Completer
from mtn_keras.scorecard.evaluation import (
    BOOTSTRAP_SEED,
    bootstrap_groups,
    model_perplexity,
    model_suggester,
    score_with_anchors,
    suggester,
)
from mtn_keras.training.artifacts import TrainedModel


def client_suggester(
    model: Suggester, k: int | None = None, history: bool = False
) -> BatchSuggester:
    """A batch suggester over the answers of `model`, a client of mtn_keras.load (an export,
    or a run folder): contexts -> lists of (text, score) as model_suggester's."""

    def call(contexts: list[list[str]], histories: list[list[str]] | None = None) -> list[Scored]:
        answers = model.suggest(contexts, histories)
        return [[(item.text, item.score) for item in answer] for answer in answers]

    return suggester(call, k, history)


def completer(model: Suggester, k: int, history: bool = False) -> Completer:
    """A batch completer over the answers of `model` (a client of mtn_keras.load): (contexts,
    prefixes) -> lists of the first `k` texts; with `history`, it takes the rows' histories
    too (their last queries, `latest`)."""

    def texts(answers: Sequence[Answer]) -> list[list[str]]:
        return [[item.text for item in answer[:k]] for answer in answers]

    def complete(contexts: list[list[str]], prefixes: list[str]) -> list[list[str]]:
        return texts(model.complete(contexts, prefixes))

    def complete_with_history(
        contexts: list[list[str]], prefixes: list[str], histories: list[list[str]]
    ) -> list[list[str]]:
        return texts(model.complete(contexts, prefixes, [list(latest(h)) for h in histories]))

    return complete_with_history if history else complete


def completions(
    model: Suggester,
    name: str,
    sessions: list[list[str]],
    train_sessions: list[list[str]] | None,
    users: list[str] | None,
    chars: Sequence[int],
    k: int,
    histories: PairHistories | None = None,
    batch_size: int = 64,
    resamples: int = 1000,
    typos: bool = False,
    every: int = 1,
) -> dict[str, Any]:
    """The `--prefix` report (scorecard.completion) of `model` (a Suggester of mtn_keras.load:
    a run folder's or an export's) named `name`, its first `k` completions, through
    `complete`; with the sessions' `histories` (their users' earlier queries) also through
    `complete_with_history`. `resamples` bootstrap draws; `typos` and `every` as
    completion_report takes them."""
    from mtn_keras.scorecard.completion import completion_report

    if histories is not None:
        model.check_history()
    if not train_sessions:
        raise ValueError("--prefix needs the training split that MPC counts (--train-data)")
    _, note = bootstrap_groups(sessions, users, resamples)
    return note | completion_report(
        completer(model, k),
        name,
        sessions,
        train_sessions,
        users,
        chars,
        k,
        batch_size,
        resamples,
        BOOTSTRAP_SEED,
        histories,
        completer(model, k, history=True) if histories is not None else None,
        typos,
        every,
    )


def evaluate(
    trained: TrainedModel,
    sessions: list[list[str]],
    train_sessions: list[list[str]] | None = None,
    decoding: DecodeConfig = DecodeConfig(),
    batch_size: int = 64,
    users: list[str] | None = None,
    bootstrap: int = 1000,
    histories: list[list[str]] | None = None,
) -> dict[str, Any]:
    """The report of one trained model on `sessions` (every pair of every session): its
    suggestions as `decoding` says, and with a ranking also its beam's alone ("NAME (beam)").
    `users` (one per session, or None) and `bootstrap` (resamples, 0: none) give the
    intervals, see `bootstrap_groups`. With `histories` (one per pair, the user's earlier
    queries), also its suggestions with them ("NAME + history") and the `history` anchor."""
    from dataclasses import replace

    from mtn_keras.serving.service import SuggestionService

    pairs = session_pairs(sessions)
    if not pairs:
        raise ValueError("no (context, next query) pair to evaluate")
    k = decoding.k
    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    suggesters = {trained.name: model_suggester(service.suggest)}
    if histories is not None:
        suggesters[f"{trained.name} + history"] = model_suggester(
            service.suggest_with_history, history=True
        )
    if service.hybrid is not None:
        beam = SuggestionService(
            trained.model, trained.vocab.tokens, replace(decoding, source="beam")
        )
        suggesters[f"{trained.name} (beam)"] = model_suggester(beam.suggest)
    groups, note = bootstrap_groups(sessions, users, bootstrap)
    scores, anchors = score_with_anchors(
        trained.name, pairs, suggesters, train_sessions, k, batch_size, groups, bootstrap, histories
    )
    ppl = model_perplexity(trained.model, sessions, trained.vocab, batch_size)
    return model_report(scores, anchors, ppl, round(trained.model.size_mb, 3)) | note


def evaluate_savedmodel(
    model: Suggester,
    name: str,
    sessions: list[list[str]],
    train_sessions: list[list[str]] | None = None,
    k: int | None = None,
    batch_size: int = 64,
    users: list[str] | None = None,
    bootstrap: int = 1000,
    histories: list[list[str]] | None = None,
) -> dict[str, Any]:
    """The report of the export `name` on `sessions`, through its client (`model`, a
    Suggester of mtn_keras.load) as docs/contracts.md has it: the first `k` of its lists (default
    DecodeConfig's k; at most the export's), the anchors beside them, no perplexity and no
    size (a SavedModel has no Keras model); intervals as `evaluate`'s. With `histories`, also
    with them ("NAME + history")."""
    pairs = session_pairs(sessions)
    if not pairs:
        raise ValueError("no (context, next query) pair to evaluate")
    k = min(k or DecodeConfig().k, model.settings.get("k", DecodeConfig().k))
    suggesters = {name: client_suggester(model, k)}
    if histories is not None:
        model.check_history()
        suggesters[f"{name} + history"] = client_suggester(model, k, history=True)
    groups, note = bootstrap_groups(sessions, users, bootstrap)
    scores, anchors = score_with_anchors(
        name, pairs, suggesters, train_sessions, k, batch_size, groups, bootstrap, histories
    )
    return model_report(scores, anchors, None, None) | note
