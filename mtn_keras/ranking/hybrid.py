"""The suggestion lists: the beam's n-best alone, or the candidates of the beam, the log and
the user's history ranked together by the ranker, after the filters, above the confidence
threshold.

The user's history has two jobs, to bring back what they searched before and to leave room
for what is new to them (three next queries in four on AOL). Ranked by probability alone,
their recent queries filled every list whatever the session (SR@5 on new pairs 0.00 against
0.34 without history, 54% of shown items unrelated, on the AOL dev log's validation users).
So while nothing is typed: the session's own candidates (the beam's and the log's) are
scored and held to the threshold as without a history, and their RESERVED best are always
shown; an earlier query that relates to nothing in the session (`filters.related`) comes
after every related suggestion, at most two of them. That balance is a setting
(DecodeConfig.unrelated_history and unrelated_place: how many such queries may stand, last or
where the ranker puts them; by default one, where the ranker puts them, never first: the
curve in docs/ranking.md). Typed words relate every completion, and there the ranker's order
stands (pinning cost completions with history 3 points). While nothing is typed the log's
popular next queries (popular.py) may follow the ranked suggestions."""

from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.base.config import UNRELATED_PLACES
from mtn_keras.ranking.candidates import CandidatePool, Pool
from mtn_keras.ranking.columns import evidence_of, source_names, typed_before
from mtn_keras.ranking.features import candidate_features, without_history
from mtn_keras.ranking.filters import related, revisited, same_words_as_better, shares_content
from mtn_keras.ranking.history_lookup import HISTORY_EVIDENCE
from mtn_keras.ranking.log_lookup import EVIDENCE
from mtn_keras.ranking.popular import PopularQueries, appended
from mtn_keras.ranking.prefix_lookup import completes
from mtn_keras.ranking.scoring import Scored
from mtn_keras.ranking.shown import NEG_INF, Shown, Table
from mtn_keras.ranking.tables import track_variables_only
from mtn_keras.ranking.typos import FIXED_WEIGHT
from mtn_keras.ranking.words import joined

if TYPE_CHECKING:
    import keras

RESERVED = 2  # the session's own best always shown beside a history, placed "last"
GENERATED = 5  # the most words of a phrase the beam wrote that a list shows
GENERIC = 100  # the log's most frequent queries: generic after a session sharing no word
# The evidence that a candidate followed a session query, in the log and in the history.
DIRECT_FOLLOWS = ("follow_last", "follow_earlier")
HISTORY_FOLLOWS = ("history_follow_last", "history_follow_session")


def followed_in_history(history: tf.Tensor) -> tf.Tensor:
    """[B, M]: the history's evidence (HistoryLookup.evidence) says the candidate followed
    a session query in the user's history."""
    return evidence_of(history, HISTORY_FOLLOWS, HISTORY_EVIDENCE)


def size_of(words: tf.Tensor) -> tf.Tensor:
    """[B, M]: how many words each candidate of `words` [B, M, L] holds."""
    return tf.reduce_sum(tf.cast(words != "", tf.int32), axis=-1)


def merged(
    beam: Scored, scored: Scored, pooled_source: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """The beam's candidates and the pool's (`scored`, proposed by `pooled_source` [C]) side
    by side: their `texts` [B, M] and `words` [B, M, L], which are `offered` [B, M] (a
    text the model can score) and the `source` [M] that proposed each."""
    width = tf.shape(beam.words)[2]
    log_words = tf.pad(scored.words, [[0, 0], [0, 0], [0, width - tf.shape(scored.words)[2]]])
    words = tf.concat([beam.words, log_words], axis=1)
    texts = joined(words)
    log_probs = tf.concat([beam.log_probs, scored.log_probs], axis=1)
    source = tf.concat([tf.fill(tf.shape(beam.words)[1:2], "model"), pooled_source], 0)
    return texts, words, (texts != "") & (log_probs > NEG_INF), source


def found_by(
    texts: tf.Tensor, offered: tf.Tensor, source: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """[B, M] each, of the `offered` candidates `texts` proposed by `source` [M]: whether
    the beam, the log (slips corrected or not) and the history proposed the same text, and
    whether an earlier column already holds it (`repeated`)."""
    same = (texts[:, :, None] == texts[:, None, :]) & offered[:, None, :] & offered[:, :, None]

    def by(proposer: tf.Tensor) -> tf.Tensor:
        return tf.reduce_any(same & proposer[None, None, :], axis=-1)

    index = tf.range(tf.shape(texts)[1])
    repeated = tf.reduce_any(same & (index[None, :] < index[:, None])[None], axis=-1)
    logged = (source == "log") | (source == "fixed")
    return by(source == "model"), by(logged), by(source == "history"), repeated


class HybridRanker(tf.Module):
    """The beam's and the pool's candidates, scored by the model, the log and the history,
    ranked by the ranker (a Keras model of the features, giving a logit), shown above the
    threshold.

    Args:
        pool: the `CandidatePool` whose tables (the log's, the prefixes', the history's)
            give each candidate's evidence.
        ranker: the Keras ranker of a `Ranking`.
        threshold: the smallest ranker probability shown in `suggest` (0 shows k whenever
            possible). Completions are not held to it: typed words say more of the next
            query than the threshold, chosen on untyped pairs, does.
        history_threshold: the threshold for a session with the user's history
            (ranking.thresholds resolves both).
        unrelated: at most this many earlier queries that relate to nothing in the session.
        place: where they stand, one of UNRELATED_PLACES (see `placed`).
        popular: the log's most frequent next queries (popular.PopularQueries; None: none),
            shown after the ranked suggestions (with `last`, after every other one).
    """

    def __init__(
        self,
        pool: CandidatePool,
        ranker: "keras.Model",
        threshold: float,
        history_threshold: float,
        unrelated: int,
        place: str,
        popular: PopularQueries | None = None,
    ) -> None:
        super().__init__()
        if place not in UNRELATED_PLACES:
            places = ", ".join(UNRELATED_PLACES)
            raise ValueError(f"unrelated_place must be one of {places}, not {place!r}")
        self.unrelated, self.last = int(unrelated), place == "last"
        self.pool = pool
        track_variables_only(self, "ranker", ranker)
        self.threshold = float(threshold)
        self.history_threshold = float(history_threshold)
        self.popular = popular

    def table(
        self,
        queries: tf.Tensor,
        session_words: tf.Tensor,
        known_words: tf.Tensor,
        beam: Scored,
        gathered: Pool,
        scored: Scored,
    ) -> Table:
        """Every candidate of the beam (`beam`, scoring.Scored) and the pool (`gathered`,
        candidates.Pool: its `source` [C] names the log's, the session's earlier queries
        that what was typed returns to, the user's history's; `scored`, their words and
        model scores) once, as a `Table` with their features, after the session's queries
        [B, S'] (words [B, S', n]; `known_words` [B], the share of the last query's words
        in the vocabulary)."""
        texts, words, offered, source = merged(beam, scored, gathered.source)
        in_beam, from_log, from_history, repeated = found_by(texts, offered, source)
        typed = gathered.typed
        # A completion that returns to an earlier session query, whoever proposed it (or to
        # the last, typed again with a slip).
        from_session, returns = revisited(texts, queries, typed != "", gathered.retyped)
        lookup = self.pool.lookup
        evidence = lookup.evidence(queries, texts, gathered.rare)
        history = self.pool.history.evidence(gathered.history, queries, texts, words)
        fixed, prefix = self.prefix_evidence(texts, gathered)
        known = tf.stack([tf.cast(lookup.ids(queries[:, -1]) >= 0, tf.float32), known_words], -1)
        features = candidate_features(
            tf.concat([beam.log_probs, scored.log_probs], axis=1),
            tf.concat([beam.lengths, scored.lengths], axis=1),
            tf.concat([beam.unknown, scored.unknown], axis=1),
            (in_beam, from_log, from_history, returns),
            evidence,
            words,
            session_words,
            known,
            history,
            prefix,
        )
        unlisted = self.unlisted(texts, words, session_words, typed, from_log, from_history)
        unlisted |= alone(size_of(words), lookup.ids(texts) >= 0, from_history | from_session)
        # The witness for `unrelated`: more than one person of the log went from a session
        # query to the candidate. One searcher's habit, however often repeated, is none
        # ("big soccer" five times after "bank of america", all one person's).
        logged = lookup.witnessed(queries, texts)
        # An earlier query relates when it directly followed a session query, in the log or
        # in the user's history: a later query of some log session vouches for a log
        # candidate (`witness`), not for the user's past.
        followed = evidence_of(evidence, DIRECT_FOLLOWS, EVIDENCE) | followed_in_history(history)
        return Table(
            texts,
            words,
            source_names(in_beam, from_log, from_history, from_session, fixed),
            tf.concat([beam.copied, scored.copied], axis=1),
            listed=offered & ~repeated & ~unlisted,
            witness=logged | from_history,
            features=features,
            fixed=fixed,
            in_history=typed_before(history),
            related=related(words, session_words, followed, typed != ""),
        )

    def prefix_evidence(self, texts: tf.Tensor, gathered: Pool) -> tuple[tf.Tensor, tf.Tensor]:
        """Of the candidates `texts` [B, M] after what was typed (`gathered.typed`): which
        complete it only with a slip corrected (`fixed` [B, M]), and their prefix features
        [B, M, P], a fixed one's among the log's corrected completions."""
        typed = gathered.typed
        fixed = (typed != "")[:, None] & ~completes(texts, typed) & (texts != "")
        prefix = tf.where(
            fixed[:, :, None],
            self.pool.prefixes.features(texts, gathered.fixed, typed),
            self.pool.prefixes.features(texts, gathered.completions, typed),
        )
        return fixed, prefix

    def unlisted(
        self,
        texts: tf.Tensor,
        words: tf.Tensor,
        session_words: tf.Tensor,
        typed: tf.Tensor,
        from_log: tf.Tensor,
        from_history: tf.Tensor,
    ) -> tf.Tensor:
        """[B, M]: the candidates never listed, whoever scores them: the log's `generic`
        queries (unless the history proposed them too), and the beam's phrases past
        GENERATED words, which ramble through common words ("type 2002 prices and floor
        plans for new jersey"), each triple of them attested."""
        generic = self.generic(self.pool.lookup.ids(texts), words, session_words, typed)
        rambling = (size_of(words) > GENERATED) & ~from_log & ~from_history
        return (generic & ~from_history) | rambling

    def generic(
        self, ids: tf.Tensor, words: tf.Tensor, session_words: tf.Tensor, typed: tf.Tensor
    ) -> tf.Tensor:
        """[B, M]: of the candidates whose log ids are `ids` [B, M] (-1: none), with nothing
        typed, the log's GENERIC most frequent queries ("google", "ebay", "yahoo") where they
        share no word with the session: what people type after
        anything is no suggestion for this session. The user's own habits come
        as history candidates, which this leaves alone."""
        shares = shares_content(words, session_words)
        return (ids >= 0) & (ids < GENERIC) & ~shares & (typed == "")[:, None]

    def probabilities(self, features: tf.Tensor) -> tf.Tensor:
        """The ranker's probability [B, M] that each candidate is the next query."""
        flat = tf.reshape(features, [-1, tf.shape(features)[-1]])
        logits = tf.reshape(self.ranker(flat), tf.shape(features)[:-1])
        return tf.sigmoid(tf.cast(logits, tf.float32))

    def __call__(
        self,
        table: Table,
        valid: tf.Tensor,
        k: int,
        typed: tf.Tensor,
        last_words: tf.Tensor,
        history: tf.Tensor,
    ) -> Shown:
        """The k `Shown` of the `table` (`table` above), by the ranker's probabilities, of
        the candidates `valid` [B, M] (listed and passing the filters), with the log's
        popular next queries (`popular`) after the sessions' last queries (`last_words`
        [B, 1, n]) and the kept `history` [B, T]; `typed` [B]: the row's candidates
        complete typed words."""
        probs = self.probabilities(table.features)
        mine = table.in_history & ~typed[:, None]  # the history's, while nothing is typed
        own = self.probabilities(without_history(table.features))
        probs = tf.where(mine | typed[:, None], probs, own)
        probs = tf.where(table.fixed, probs * FIXED_WEIGHT, probs)
        untyped = tf.where(mine, self.history_threshold, self.threshold)
        threshold = tf.where(typed[:, None], 0.0, untyped)
        scores = tf.where(valid & (probs >= threshold), probs, NEG_INF)
        scores = tf.where(same_words_as_better(table.words, scores), NEG_INF, scores)
        assert table.related is not None  # a ranked table (`table` above) has its `related`
        loose = mine & ~table.related
        scores = capped(scores, loose, self.unrelated)
        # The past never opens a list: with nothing related to show, it shows none either.
        related_shown = tf.reduce_any(~loose & (scores > NEG_INF), axis=1, keepdims=True)
        scores = tf.where(loose & ~related_shown, NEG_INF, scores)
        shown, after = Shown(scores, table.texts, table.sources, table.copied), None
        if self.popular is not None and self.popular.cap:
            offered = self.popular.offered(last_words, history, typed)
            shown, after = appended(shown, offered, self.popular.cap)
            mine, loose = (tf.concat([m, after[:, tf.shape(m)[1] :]], 1) for m in (mine, loose))
        chosen = placed(shown.scores, mine, loose, typed, k, self.last, after)
        return Shown(*(tf.gather(column, chosen, batch_dims=1) for column in shown))


def alone(size: tf.Tensor, logged: tf.Tensor, own: tf.Tensor) -> tf.Tensor:
    """[B, M]: the candidates of one word (`size` [B, M] words) that nobody typed alone: no
    query of the log (`logged`), the session or the history (`own`). A word alone is a query
    only where someone typed it so: the beam's one-word completions that no query is
    ("progress", "programs" while typing "progr") were junk, and so was one that only
    repeats the typed letters ("signs", "stand": docs/quality.md)."""
    return (size == 1) & ~logged & ~own


def capped(scores: tf.Tensor, loose: tf.Tensor, unrelated: int) -> tf.Tensor:
    """`scores` [B, M] with the `loose` [B, M] candidates beyond the best `unrelated` of them
    not shown (-inf): applied to the scores the list returns, so that none comes back as one
    of the k when fewer than k others are shown."""
    return tf.where(loose & (rank_among(scores, loose) >= unrelated), NEG_INF, scores)


def placed(
    scores: tf.Tensor,
    mine: tf.Tensor,
    loose: tf.Tensor,
    typed: tf.Tensor,
    k: int,
    last: bool,
    after: tf.Tensor | None = None,
) -> tf.Tensor:
    """The k columns shown of candidates scored `scores` [B, M] (-inf: not shown; `capped`
    already), best first. `mine` [B, M]: the history's (while nothing is typed); `loose`
    [B, M]: those of them that relate to nothing in the session; `typed` [B]. With `last`,
    loose ones come after every other, and the session's own RESERVED best are always among
    the k; else the k best by score, the best related one first and those `after` [B, M]
    (the log's popular queries, also loose) after the rest."""
    if not last:  # the k best; the best related one first, so the past never opens a list
        _, chosen = tf.math.top_k(scores, k)
        best = tf.argmax(tf.where(loose, NEG_INF, scores), axis=1, output_type=tf.int32)
        first = (tf.range(tf.shape(scores)[1])[None, :] == best[:, None]) & ~loose
        later = scores if after is None else tf.where(after, scores - 2.0, scores)
        ordered = tf.where(first, scores + 2.0, later)
        ordered = tf.gather(ordered, chosen, batch_dims=1)
        return tf.gather(chosen, tf.math.top_k(ordered, k)[1], batch_dims=1)
    session = ~mine & ~typed[:, None]
    reserved = session & (rank_among(scores, session) < RESERVED) & (scores > NEG_INF)
    # Which k are shown: the reserved, then the best; in what order: by score, loose last.
    lowered = tf.where(loose, scores - 4.0, scores)
    _, chosen = tf.math.top_k(tf.where(reserved, scores + 2.0, lowered), k)
    ordered = tf.gather(tf.where(loose, scores - 2.0, scores), chosen, batch_dims=1)
    _, order = tf.math.top_k(ordered, k)
    return tf.gather(chosen, order, batch_dims=1)


def rank_among(scores: tf.Tensor, members: tf.Tensor) -> tf.Tensor:
    """[B, M]: each member's rank (0: best) by score among the `members` [B, M] of its row;
    M for the others."""
    width = tf.shape(scores)[1]
    ranked = tf.where(members, scores, NEG_INF)
    order = tf.argsort(ranked, axis=1, direction="DESCENDING", stable=True)
    rank = tf.argsort(order, axis=1, stable=True)
    return tf.where(members, rank, width)
