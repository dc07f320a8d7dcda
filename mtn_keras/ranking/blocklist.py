"""Words no suggestion may hold: better-profanity's maintained list, read when a ranking
is built (the model directory and the SavedModel then carry it; nothing reads the package
at serving time), less the words whose everyday sense in a search box is innocent, plus a
few adult words it lacks."""

from importlib import resources

from mtn_keras.data.text import normalise

# better-profanity blocks these too; in queries they are mostly health, places, food, names,
# identities or plain words ("hiv test", "pawn shop", "strip steak", "free willy", "god of
# war"). A family-friendly suggester must still let people search for them.
EVERYDAY_WORDS = frozenset(
    """
    arian aryan bimbo crap damn dopey doofus drunk dummy enlargement erect extacy facial fat
    foobar gay gays god hell hemp herpes hiv homey hooch hookah hooters jerk jerked kill knob
    lesbians leper lmao lmfao len maxi menses menstruate menstruation meth moron murder nazi
    nazism nimrod ninny omg opiate opium oral orally organ ovary ovum ovums paddy pasty pastie
    pawn pee pms poop pot potty prude punky queer queers racy reich revue rum rump sandbar
    screw screwed seaman seamen sissy slave slope sniper souse soused spunk stoned strip
    stroke stupid suck sucked sucking tampon teste testes testis testicle testical thrust
    thug tinkle toots tramp transsexual tush ugly undies unwed urinal urine uterus uzi
    valium viagra virgin vixen vodka vomit vulgar wad wang weed weiner weirdo whiz willy womb
    woody wtf
""".split()
)


# Words the list lacks whose sense in a search box is adult: "britney sexy pictures" was
# suggested after "britney spears".
ADULT_WORDS = frozenset("sexy topless upskirt nudity erotica nsfw".split())


def blocked_phrases():
    """The blocked words and phrases, normalised as queries are (one or more words each)."""
    text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text("utf-8")
    phrases = {normalise(line) for line in text.splitlines()} | ADULT_WORDS
    return sorted(p for p in phrases if p and p not in EVERYDAY_WORDS)
