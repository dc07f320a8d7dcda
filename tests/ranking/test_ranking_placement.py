"""Where the user's history may stand in a list: the session's own best always shown, an
earlier query that relates to nothing after every related suggestion and at most two of
them (the unrelated-history setting placed `last`), and typed completions
in the ranker's order; the setting's other values (its default: one, where the ranker puts
them)."""

import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.base.config import DecodeConfig  # noqa: E402
from mtn_keras.ranking.features import FEATURES, without_history  # noqa: E402
from mtn_keras.ranking.filters import related  # noqa: E402
from mtn_keras.ranking.hybrid import RESERVED, alone, capped, placed  # noqa: E402

NEG_INF = float("-inf")
# candidates: 3 of the session (beam, log), 2 earlier queries that relate, 3 that do not
SCORES = [0.002, 0.0015, 0.001, 0.03, 0.02, 0.05, 0.04, 0.035]
MINE = [False, False, False, True, True, True, True, True]
LOOSE_ONES = [False, False, False, False, False, True, True, True]


def shown(scores=SCORES, mine=MINE, loose=LOOSE_ONES, typed=False, k=5, unrelated=2, last=True):
    """The candidates shown, in order (those capped away are -inf and left out)."""
    loose = tf.constant([loose])
    capped_scores = capped(tf.constant([scores]), loose, unrelated)
    found = placed(capped_scores, tf.constant([mine]), loose, tf.constant([typed]), k, last)
    kept = tf.gather(capped_scores, found, batch_dims=1).numpy()[0]
    return [int(c) for c, s in zip(found.numpy()[0], kept) if s > NEG_INF]


def test_the_sessions_best_stay_and_unrelated_history_comes_last_and_capped():
    defaults = DecodeConfig()
    assert RESERVED == 2 and (defaults.unrelated_history, defaults.unrelated_place) == (1, "ranked")
    found = shown()
    # related history by score (3, 4), then the session's own (0, 1, 2): no unrelated earlier
    # query pushes a related suggestion off; by probability alone the list would have been
    # 5, 6, 7, 3, 4, the past whatever the session
    assert found == [3, 4, 0, 1, 2]
    assert shown(k=8)[:7] == [3, 4, 0, 1, 2, 5, 6]  # loose ones last; the third never shown


def test_without_history_the_list_is_the_rankers_order():
    mine = [False] * len(SCORES)
    assert shown(mine=mine, loose=mine) == [5, 6, 7, 3, 4]


def test_typed_words_keep_the_rankers_order():
    none = [False] * len(SCORES)
    assert shown(mine=none, loose=none, typed=True) == [5, 6, 7, 3, 4]


def test_the_sessions_two_best_stay_beside_strong_history():
    scores = [0.002, 0.0015, 0.001, 0.03, 0.02, 0.025, 0.04, 0.035]
    mine = [False, False, False, True, True, True, True, True]
    related_history = [False] * len(scores)  # five related earlier queries, all stronger
    found = shown(scores=scores, mine=mine, loose=related_history)
    assert sorted(found) == [0, 1, 3, 6, 7] and found[-2:] == [0, 1]


def test_nothing_below_the_threshold_is_pinned():
    scores = [NEG_INF, NEG_INF, NEG_INF] + SCORES[3:]
    found = shown(scores=scores)
    assert found[:4] == [3, 4, 5, 6] and 0 not in found[:4]


def test_related_means_a_shared_word_a_follow_or_typed_words():
    words = tf.constant([[["red", "sox", ""], ["weather", "boston", ""], ["pizza", "", ""]]])
    session = tf.constant([[["red", "sox", "tickets"]]])
    followed = tf.constant([[False, False, True]])
    found = related(words, session, followed, tf.constant([False])).numpy()[0].tolist()
    assert found == [True, False, True]
    assert related(words, session, followed, tf.constant([True])).numpy().all()


def test_without_history_zeroes_the_history_columns_only():
    features = tf.ones([1, 1, len(FEATURES)])
    cleared = without_history(features).numpy()[0, 0]
    for name, value in zip(FEATURES, cleared):
        assert value == (0.0 if name.startswith("history_") or name == "from_history" else 1.0)


def test_the_setting_caps_unrelated_history_last():
    # the cap decides how many loose ones follow the related list (the rest are -inf fillers)
    assert shown(unrelated=1, k=8)[:6] == [3, 4, 0, 1, 2, 5]
    assert shown(unrelated=3, k=8) == [3, 4, 0, 1, 2, 5, 6, 7]
    # with fewer than k others, a capped one does not come back to fill the list
    assert shown(unrelated=0, k=8) == [3, 4, 0, 1, 2]


def test_ranked_places_unrelated_history_by_score_up_to_the_cap():
    # by score: 5 (0.05), 6 (0.04), 7 (0.035), 3, 4, then the session's own; no place kept
    assert shown(unrelated=5, last=False) == [3, 5, 6, 7, 4]  # the best related one first
    assert shown(unrelated=1, last=False) == [3, 5, 4, 0, 1]
    assert shown(unrelated=0, last=False) == [3, 4, 0, 1, 2]


def test_a_word_alone_is_shown_only_where_someone_typed_it_alone():
    # "progress", "progressive", "progress energy", "geico", "progr", ""
    size = tf.constant([[1, 1, 2, 1, 1, 0]])
    logged = tf.constant([[False, True, True, False, False, False]])
    own = tf.constant([[False, False, False, True, False, False]])
    found = alone(size, logged, own)
    # "progr": only the typed letters again, which nobody typed alone
    assert found.numpy().tolist() == [[True, False, False, False, True, False]]
