"""What the serving steps (steps.py) build from a query log's `Ranking`: the candidate pool
and its ranker, the spelling and the word starts that read a typed word, where queries end,
and the phrases the beam may write. Without a ranking (or with the beam's lists alone) most
are None, and the steps answer from the model alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.vocab import SPECIALS
from mtn_keras.data.wordpiece import SUFFIX
from mtn_keras.ranking import thresholds
from mtn_keras.ranking.candidates import CandidatePool
from mtn_keras.ranking.fragments import Fragments
from mtn_keras.ranking.history_lookup import HistoryLookup
from mtn_keras.ranking.hybrid import HybridRanker
from mtn_keras.ranking.popular import PopularQueries
from mtn_keras.serving.encoding import SessionEncoder
from mtn_keras.serving.grounding import PhraseConstraint, slip_ids
from mtn_keras.serving.spelling import Spelling
from mtn_keras.serving.word_starts import WordStarts

if TYPE_CHECKING:
    from mtn_keras.ranking import Ranking


class LogParts(NamedTuple):
    """The steps' parts that read the log: the `pool` of candidates and the `hybrid` ranker
    (None for the beam's lists alone), the `spelling` that reads a typed slip, the ends of
    queries (`fragments`, None with that filter off), the `starts` of the words known (None:
    nothing is corrected), the `phrases` the beam may write (None: any) and the vocabulary
    ids of the log's slips, which the beam never writes."""

    pool: CandidatePool | None
    hybrid: HybridRanker | None
    spelling: Spelling
    fragments: Fragments | None
    starts: WordStarts | None
    phrases: PhraseConstraint | None
    slips: set[int]


def log_parts(
    encoder: SessionEncoder,
    vocab_tokens: Sequence[str],
    decoding: DecodeConfig,
    ranking: Ranking | None,
    history: HistoryLookup,
    blocked: Sequence[str],
) -> LogParts:
    """The `LogParts` of a model's steps (its `encoder` and `vocab_tokens`, read with the
    `decoding` settings) from its `ranking` (or None), the `history` lookup the pool reads and
    the `blocked` phrases of the popular queries."""
    pool, hybrid = None, None
    if ranking is not None and decoding.source == "hybrid":
        pool = CandidatePool(ranking.index, history, encoder.max_queries)
        shown = thresholds(ranking.threshold, ranking.history_threshold, decoding.threshold)
        popular = PopularQueries(
            ranking.index, decoding.popular, shown[0], blocked, decoding.filters, decoding.explicit
        )
        hybrid = HybridRanker(
            pool,
            ranking.ranker,
            *shown,
            decoding.unrelated_history,
            decoding.unrelated_place,
            popular,
        )
    lookup = pool and pool.lookup
    spelling = Spelling(encoder, lookup and lookup.word_ids, lookup and lookup.slips)
    logged = ranking.index if ranking is not None and pool is not None else None
    fragments = None  # the log says where queries end only to the ranked lists
    if "fragments" in decoding.filters:
        fragments = Fragments(logged.queries, logged.counts) if logged else Fragments([], [])
    if logged is None:  # without a pool, nothing is corrected and the beam writes anything
        return LogParts(pool, hybrid, spelling, fragments, None, None, set())
    words = [t for t in vocab_tokens[len(SPECIALS) :] if not t.startswith(SUFFIX)]
    starts = WordStarts([*words, *logged.words])
    if encoder.tokenise.pieces:  # the phrases are of words, not of WordPiece pieces
        return LogParts(pool, hybrid, spelling, fragments, starts, None, set())
    # With a log, the beam writes only the phrases people type, never its slips.
    phrases = PhraseConstraint(logged.queries, vocab_tokens)
    slips = slip_ids(vocab_tokens, logged)
    return LogParts(pool, hybrid, spelling, fragments, starts, phrases, slips)
