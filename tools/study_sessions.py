"""The judged study's 40 sessions (issue 58), written before any output was read: each a
session and what the person types next, the made-up person of
tests/fixtures/made-up-history.tsv typing them. Ten topics, ten refinements, ten slips,
ten rare names; the first 30 share nothing with that person's past, the last 10 continue it."""

# (session, typed): `typed` is what the person has typed of the next query.
STUDY = [
    # topics
    (["pizza hut", "dominos pizza"], "pap"),
    (["tax forms", "irs"], "1040"),
    (["cheap flights", "cheap flights to rome"], "rome h"),
    (["wedding dresses"], "brid"),
    (["diabetes symptoms"], "type 2"),
    (["honda accord", "honda accord 2004"], "honda acc"),
    (["nba scores"], "lak"),
    (["southwest airlines"], "southwest airlines res"),
    (["job search", "monster jobs"], "care"),
    (["lyrics", "eminem lyrics"], "50 c"),
    # refinements
    (["hotels", "hotels in chicago"], "cheap"),
    (["dog training"], "puppy"),
    (["digital cameras", "canon digital cameras"], "canon pow"),
    (["apartments for rent"], "apartments for rent in"),
    (["student loans"], "student loan cons"),
    (["home depot"], "home depot co"),
    (["weight watchers"], "weight watchers poi"),
    (["ipod", "ipod nano"], "ipod nano ca"),
    (["car insurance", "geico"], "progr"),
    (["spanish dictionary"], "english to sp"),
    # slips
    (["bank of amercia"], "bank of am"),
    (["las vegas resturant"], "las vegas"),
    (["disny world"], "disney"),
    (["pregnacy test"], "pregnancy"),
    (["nfl standings"], "nfl standigns"),
    (["flu treatmnet"], "flu"),
    (["fenway prk"], "fenway"),
    (["weather forcast"], "weather"),
    (["jennifer anniston"], "jennifer"),
    (["craiglist"], "craig"),
    # rare names, and continuing the made-up person's past
    (["seattle weather"], "seattle"),
    (["mariners", "mariners tickets"], "safe"),
    (["vegan recipes", "vegan lasagna"], "vegan"),
    (["used cars", "used subaru outback"], "subaru"),
    (["mount rainier"], "mount rainier"),
    (["portland oregon", "portland hotels"], "portland"),
    (["snoqualmie falls"], "snoq"),
    (["powells books"], "powells"),
    (["amtrak cascades"], "amtrak"),
    (["bikram yoga"], "yoga"),
]
UNRELATED = 30  # the first 30 share nothing with the made-up person's past
