"""The log's popular next queries: which the log holds, which a session is offered,
and where they stand in a list: after the ranked suggestions, at most the setting's number,
none a shown suggestion already is, none while words are typed."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.base.config import FILTERS, DecodeConfig  # noqa: E402
from mtn_keras.ranking.hybrid import placed  # noqa: E402
from mtn_keras.ranking.log_index import QueryLogIndex  # noqa: E402
from mtn_keras.ranking.popular import (  # noqa: E402
    POOL,
    WITH_HISTORY,
    Offered,
    PopularQueries,
    appended,
    most_followed,
)
from mtn_keras.ranking.shown import Shown  # noqa: E402

NEG_INF = float("-inf")
SESSIONS = [
    ["weather", "google"],
    ["news", "google"],
    ["maps", "google"],
    ["shoes", "ebay"],
    ["ebay", "nude pics"],
    ["jobs", "ebay"],
    ["cars", "yahoo"],
    ["yahoo mail", "google"],
]


@pytest.fixture(scope="module")
def index():
    return QueryLogIndex.build(SESSIONS)


def words_of(texts, width=3):
    return tf.constant([[(t.split() + [""] * width)[:width]] for t in texts])


def test_the_most_followed_queries_and_their_shares(index):
    texts, shares = most_followed(index, 3)
    assert texts == ["google", "ebay", "nude pics"]  # followed 4, 2 and once of 8 pairs
    assert np.allclose(shares, [4 / 8, 2 / 8, 1 / 8])
    assert most_followed(index, 0)[0] == []


def test_what_each_session_is_offered(index):
    popular = PopularQueries(index, 3, 0.0, ["nude"], FILTERS)
    assert popular.texts == ["google", "ebay", "yahoo"]
    history = tf.constant([["", ""], ["", ""], ["ebay", "x"], ["", ""]])
    typed = tf.constant([False, False, False, True])
    last = words_of(["google maps", "cheap flights", "cheap flights", "cheap flights"])
    scores = popular.offered(last, history, typed).scores.numpy()
    shares = np.array([4, 2, 1]) / 8
    assert np.isneginf(scores[0, 0]) and np.allclose(scores[0, 1:], shares[1:])  # in "google maps"
    assert np.allclose(scores[1], shares)
    # with a history: scaled down, and what the user typed before is the history's own
    assert np.isneginf(scores[2, 1]) and np.allclose(
        scores[2, [0, 2]], WITH_HISTORY * shares[[0, 2]]
    )
    assert np.isneginf(scores[3]).all()  # nothing while words are typed
    held = PopularQueries(index, 3, 0.3, [], FILTERS).offered(last, history, typed).scores.numpy()
    assert np.isneginf(held[1, 1:]).all() and held[1, 0] > 0  # under the threshold: not offered
    assert POOL >= DecodeConfig().popular and PopularQueries(index, 0, 0.0, [], FILTERS).cap == 0


def test_popular_queries_stand_after_the_ranked_and_are_capped():
    scores = tf.constant([[0.002, 0.001, NEG_INF]])
    texts = tf.constant([["cheap hotels", "google", "hotel deals"]])
    sources = tf.constant([["model", "log", "log"]])
    copied = tf.ones([1, 3, 4])
    offered = Offered(
        tf.constant([[0.6, 0.2, 0.1, 0.05]]),
        tf.constant([["google", "ebay", "hotel deals", "yahoo"]]),
    )
    grown, after = appended(Shown(scores, texts, sources, copied), offered, 2)
    joined, columns = grown.scores, grown[1:]
    shown_scores = joined.numpy()[0]
    # "google" is shown already; "hotel deals" is a candidate not shown, so it may stand
    assert np.isneginf(shown_scores[3]) and shown_scores[4:6].tolist() == pytest.approx([0.2, 0.1])
    assert np.isneginf(shown_scores[6])  # the cap: two at most
    assert [s.decode() for s in columns[1].numpy()[0][3:]] == ["popular"] * 4
    assert not columns[2].numpy()[0, 3:].any()  # nothing copied
    mine = tf.zeros_like(after)
    chosen = placed(joined, mine, after, tf.constant([False]), 5, False, after).numpy()[0]
    order = [columns[0].numpy()[0][c].decode() for c in chosen if shown_scores[c] > NEG_INF]
    assert order == ["cheap hotels", "google", "ebay", "hotel deals"]  # never before the ranked


def test_ranked_lists_hold_the_popular_queries_as_the_setting_allows(ranked):
    from mtn_keras.serving.service import SuggestionService

    sessions = tf.constant(
        [["cheap flights", "best cheap flights"], ["used cars", "zzyzx gadgets"]]
    )
    top, _ = most_followed(ranked.ranking.index, POOL)

    def lists(**decoding):
        # ten places: the ranked suggestions of the grounded beam fill five
        config = DecodeConfig(k=10, beam=6, xla=False, threshold=0.0, **decoding)
        service = SuggestionService(ranked.model, ranked.vocab.tokens, config, ranked.ranking)
        out = service.suggest(sessions)
        texts = [[t.decode() for t in row] for row in out["suggestions"].numpy()]
        sources = [[s.decode() for s in row] for row in out["sources"].numpy()]
        return texts, sources, service

    texts, sources, service = lists(popular=5)
    shown = [
        (t, s) for row, kinds in zip(texts, sources) for t, s in zip(row, kinds) if s == "popular"
    ]
    assert shown and all(t in top for t, _ in shown)
    for row, kinds in zip(texts, sources):
        found = [i for i, s in enumerate(kinds) if s == "popular"]
        others = [i for i, s in enumerate(kinds) if s and s != "popular"]
        assert not others or not found or max(others) < min(found)  # after the ranked
        assert len({t for t in row if t}) == len([t for t in row if t])
    assert all(s != "popular" for row in lists(popular=0)[1] for s in row)
    one = lists(popular=1)[1]
    assert all(row.count("popular") <= 1 for row in one)
    typed = service.complete(sessions, tf.constant(["che", "us"]))
    assert b"popular" not in typed["sources"].numpy()
