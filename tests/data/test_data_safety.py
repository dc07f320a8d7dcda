"""The safety rule (mtn_keras/data/safety.py): what it calls child-unsafe and explicit, what it
leaves alone, and where data enters: prepare drops a session that holds such a query (its
pairs, its words, its history), the log index leaves it out, the app's history never stores
it; the graph's twin of the rule agrees with Python's on every text."""

import datetime
import itertools
import json

import pytest

from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.safety import child_unsafe, explicit
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.scorecard.redteam import PREFIXES, SPELLINGS
from mtn_tui.history.filter import HistoryFilter

# Made of the rule's own words: terms, a word for a minor beside a sexual word, ages.
CHILD_UNSAFE = [
    "pthc",
    "teen porn",
    "preteen models",
    "young nude girls",
    "12 yo nude",
    "nude 13 year old",
    "kids sex",
    "underage pics",
    "lolitas",
    "little girls naked",
    "schoolgirl xxx",
    "free teenporn",
    "boys naked",
    "14yo bikini",
    # a word for a minor beside a body part, an act or a gallery word, whatever else stands
    "teen boys penis",
    "schoolboy twinks tgp",
    "young models galleries",
    "boys kissing boys thumbs",
    "teen pics",
    "free boys pics",
    "free boy pics",
    "young girl pics",
    "baby butts",
]
EXPLICIT = [
    "free porn",
    "nude pics",
    "sexy girls",
    "pornstars",
    "xxx videos",
    "playboy",
    "p0rn",
    "hot naked women",
    "erotic stories",
    "topless beach",
    "milf",
    "dominatrix vacation",
    "hentai",
]
# Ordinary searches with the rule's words in them, or near them.
INNOCENT = [
    "kids party games",
    "teen summer camps",
    "little league",
    "young and the restless",
    "sex offender registry",
    "baby sex chart",
    "household chores for 13 year old boys",
    "pedometer",
    "magna cum laude",
    "pussycat dolls",
    "naked juice",
    "essex county",
    "middlesex hospital",
    "sussex",
    "hardcore punk",
    "lingerie store",
    "nipple piercing",
    "rape crisis center",
    "sexual harassment at work",
    "fukui prefecture",
    "cheap flights",
    "",
    "booby trap",
    "the naked chef",
    # a word for a minor beside a picture word, where parents and fans search
    "baby pictures",
    "kids photos",
    "baby shower games",
    "boy scout pictures",
    "the beach boys gallery",
    "young jeezy pics",
    "chris young pictures",
]


# Searches beside a word for a minor that the rule leaves out, knowingly: information on abuse
# (no search box completes it), and words that mostly seek what the rule forbids, hidden alone
# unless asked.
LEFT_OUT = ["child sex offenders", "sex education for teens", "child sexual abuse facts"]
HIDDEN = ["preteen clothing", "preteen", "lolita nabokov"]


def test_the_rule_finds_what_it_must_and_leaves_ordinary_searches():
    assert all(map(child_unsafe, LEFT_OUT)) and all(map(explicit, HIDDEN))
    assert not any(map(child_unsafe, HIDDEN))
    assert all(map(child_unsafe, CHILD_UNSAFE)), [q for q in CHILD_UNSAFE if not child_unsafe(q)]
    assert all(map(explicit, CHILD_UNSAFE + EXPLICIT)), [q for q in EXPLICIT if not explicit(q)]
    assert not any(map(child_unsafe, EXPLICIT)), [q for q in EXPLICIT if child_unsafe(q)]
    assert not any(map(explicit, INNOCENT)), [q for q in INNOCENT if explicit(q)]


@pytest.mark.slow
def test_the_graphs_rule_agrees_with_pythons():
    from mtn_keras.base.quiet import import_tensorflow

    tf = import_tensorflow()
    from mtn_keras.ranking.filters import seeks_minors, unsafe

    words = ["teen", "nude", "sex", "offender", "kids", "pics", "12", "yo", "cheap", "porn"]
    texts = [" ".join(p) for n in (1, 2, 3) for p in itertools.product(words, repeat=n)]
    texts += CHILD_UNSAFE + EXPLICIT + INNOCENT + PREFIXES + SPELLINGS
    graph = tf.constant(texts)
    assert seeks_minors(graph).numpy().tolist() == [child_unsafe(t) for t in texts]
    assert unsafe(graph).numpy().tolist() == [explicit(t) for t in texts]
    assert unsafe(graph, True).numpy().tolist() == [child_unsafe(t) for t in texts]


START = datetime.datetime(2006, 3, 1)


def write_log(path, sessions):
    """An AOL-format log of `sessions` (user, [queries]) a minute apart, two hours between."""
    lines, clock = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"], 0
    for user, queries in sessions:
        for query in queries:
            clock += 60
            stamp = (START + datetime.timedelta(seconds=clock)).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(f"{user}\t{query}\t{stamp}\t\t")
        clock += 7200
    path.write_text("\n".join(lines) + "\n")
    return path


def test_prepare_drops_a_session_that_seeks_abuse_material_whole(tmp_path):
    topics = ["cheap flights", "garden tools", "cat food", "movie times"]
    sessions = [
        (str(u), [f"{t} {w}" for w in ("deals", "reviews", "online")])
        for u in range(30)
        for t in topics
    ]
    unsafe = ["zanzibar ferries", "zanzibar hotels", "preteen models", "zanzibar beaches"]
    sessions += [("900", unsafe), ("900", ["nude pics", "nude art"])]
    log = write_log(tmp_path / "log.txt", sessions)
    out = tmp_path / "data"
    stats = prepare([str(log)], str(out), min_count=1, progress=False)
    assert stats["dropped_sessions"]["child_unsafe"] == 1
    assert stats["dropped_rows"]["session_child_unsafe"] == 4
    names = ("train.tsv", "valid.tsv", "test.tsv", "history.tsv", "vocab.txt")
    written = "\n".join((out / name).read_text() for name in names)
    assert "preteen" not in written and "zanzibar" not in written
    assert "nude pics" in written  # explicit, not child-unsafe: kept for --explicit
    saved = json.loads((out / "stats.json").read_text())
    assert saved["dropped_sessions"]["child_unsafe"] == 1


def test_the_log_index_leaves_such_a_session_out():
    sessions = [["cheap flights", "teen porn", "rome hotels"], ["cheap flights", "rome hotels"]]
    index = QueryLogIndex.build(sessions)
    assert "teen porn" not in index.queries and "teen" not in index.words
    assert index.follow_count("cheap flights", "rome hotels") == 1


def test_the_apps_history_never_stores_such_a_query(tmp_path):
    kept = HistoryFilter(tmp_path / "none").kept
    assert kept("Teen PORN") is None and kept("12 yo nude") is None
    assert kept("kids party games") == "kids party games" and kept("nude pics") == "nude pics"
