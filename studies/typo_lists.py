"""The lists a searcher sees while typing with slips, before and after: one model beside a
reference export, on made-up sessions (issue 46's rows and slips of our own), as a markdown
table (docs/quality.md, "Typing with a slip").

Usage: python -m studies.typo_lists --reference OLD_EXPORT [--model NEW_EXPORT]
"""

import argparse

# (session, what is typed of the next query); the session's queries are made up, some slipped.
CASES = [
    ([], "weahter"),
    ([], "whether"),
    ([], "bostn"),
    ([], "chease"),
    ([], "amazn"),
    (["golden retriever puppies"], "labradood"),
    ([], "pizza hut c"),
    ([], "nfl st"),
    (["weahter boston"], ""),
    (["myspce"], ""),
    (["cheap flights to orlando"], "disny"),
    (["chase bank"], "chsae onl"),
    (["home depot"], "lowse"),
    (["american idol"], "americna id"),
    (["used cars"], "kelly blu"),
    (["nfl scores"], "espn spo"),
    (["recipes for dinner"], "chiken rec"),
    (["walmart"], "targte"),
    (["britney spears"], "britny spe"),
    (["mapquest"], "driving directoins"),
    (["cerebral elastance"], "cmatose "),
    (["breast fibrous tissue"], "firous "),
    (["dinosaur invitations"], "diecut d"),
    (["cheap flights"], "zorblax "),
    (["how to electrical sockets"], "ehow ro "),
]


def shown(suggester, session, typed):
    """The list's texts, corrected ones marked ✎; "(nothing)" for an empty list."""
    found = suggester.complete(session, typed)
    items = [s.text + (" ✎" if "fixed" in s.source.split("+") else "") for s in found]
    return ", ".join(items) or "(nothing)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="the export before")
    parser.add_argument("--model", default="default", help="the export after")
    args = parser.parse_args(argv)
    import mtn_keras

    before, after = mtn_keras.load(args.reference), mtn_keras.load(args.model)
    print("| session | typed | before | after (✎: corrected) |")
    print("| --- | --- | --- | --- |")
    for session, typed in CASES:
        cells = [" > ".join(session) or "(new)", typed or "(nothing)"]
        cells += [shown(before, session, typed), shown(after, session, typed)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
