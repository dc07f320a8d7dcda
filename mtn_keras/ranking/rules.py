"""The filters' rules in plain Python, for what runs outside the graph (the query-log index,
the evaluation's quality counts, the anchors' filtering, the ranker's lists). Their graph
twins are in `filters.py`; tests/ranking/test_ranking_rules.py checks that both agree."""


def repeats_session(text, context):
    """The suggestion equals a query of the session or its words all lie inside one."""
    words = set(text.split())
    return any(words <= set(query.split()) for query in context)


def repeats_a_word(text):
    """Some word of the suggestion appears twice."""
    words = text.split()
    return len(set(words)) != len(words)


def blocks(text, phrases):
    """True when the normalised `text` holds one of `phrases` as whole words."""
    padded = f" {text} "
    return any(f" {phrase} " in padded for phrase in phrases)


def word_set(text):
    """The key of a suggestion's words in any order: two suggestions with the same key are
    the same suggestion, and only the better is shown."""
    return " ".join(sorted(text.split()))
