"""benchmarks/grow_log.py on a made-up log of a few users: the grown log is seeded, N times the
rows, in AOL's format, of new users only, each user's rows together and in time order."""

import datetime
import gzip

import pytest
from script_module import load_script

USERS = {
    "17": ["cheap flights", "cheap flights lisbon", "lisbon hotels", "lisbon hotels old town"],
    "42": ["weather boston", "google", "boston red sox tickets", "red sox schedule", "google"],
    "305": ["google", "fado tickets", "fado lisbon", "porto train times", "porto wine tour"],
    "911": ["yahoo mail", "sintra day trip", "sintra palace", "google", "knitting patterns"],
}


@pytest.fixture(scope="module")
def grow():
    return load_script("benchmarks/grow_log.py")


@pytest.fixture
def log(tmp_path):
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for user, queries in USERS.items():
        for minute, query in enumerate(queries):
            click = "\t1\thttp://www.example.com/" if minute % 2 else "\t\t"
            lines.append(f"{user}\t{query}\t2006-03-0{1 + minute} 10:{minute:02d}:00{click}")
    path = tmp_path / "small.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def grown(grow, log, out, factor, seed):
    assert (
        grow.main(
            ["--log", str(log), "--factor", str(factor), "--seed", str(seed)] + ["--out", str(out)]
        )
        == 0
    )
    opened = gzip.open(out, "rt") if out.suffix == ".gz" else open(out)
    with opened as text:
        return text.read()


def test_the_same_seed_grows_the_same_log_and_another_seed_another(grow, log, tmp_path):
    first = grown(grow, log, tmp_path / "a.txt", 3, seed=7)
    assert grown(grow, log, tmp_path / "b.txt.gz", 3, seed=7) == first
    assert grown(grow, log, tmp_path / "c.txt", 3, seed=8) != first


def test_the_grown_log_is_n_times_the_rows_of_new_users_in_aol_format(grow, log, tmp_path):
    text = grown(grow, log, tmp_path / "grown.txt", 5, seed=3)
    header, *rows = text.splitlines()
    assert header == "AnonID\tQuery\tQueryTime\tItemRank\tClickURL"
    assert len(rows) == 5 * sum(len(q) for q in USERS.values())
    seen, last = set(), None
    for row in rows:
        user, query, when, rank, url = row.split("\t")
        assert user not in USERS and int(user) >= grow.FIRST_ID and query
        day = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M:%S").date()
        assert grow.FIRST_DAY <= day <= grow.LAST_DAY
        assert (rank, url) in {("", ""), ("1", "http://www.example.com/")}
        if user != last:
            assert user not in seen, "a user's rows are together"
            seen.add(user)
            last, previous = user, when
        assert when >= previous, "a user's rows are in time order"
        previous = when
    assert len(seen) == 5 * len(USERS)


def test_past_the_first_copy_new_queries_and_words_are_made(grow, log, tmp_path):
    text = grown(grow, log, tmp_path / "grown.txt", 8, seed=1)
    queries = {row.split("\t")[1] for row in text.splitlines()[1:]}
    words = {w for q in queries for w in q.split()}
    source = {q for qs in USERS.values() for q in qs}
    assert source < queries
    assert len(words) > len({w for q in source for w in q.split()})


def test_made_up_words_are_all_different():
    grow = load_script("benchmarks/grow_log.py")
    made = [grow.minted_word(n) for n in range(5000)]
    assert len(set(made)) == len(made) and all(len(word) >= 6 for word in made)
