"""Words and phrases no suggestion may hold: better-profanity's maintained list, read when a
ranking is built (the model directory and the SavedModel then carry it; nothing reads the
package at serving time), less the words whose everyday sense in a search box is innocent,
plus a few adult words it lacks and adult phrases of innocent words. What the phrases block on
the AOL dev log: benchmarks/bench_blocklist.py."""

from importlib import resources

from mtn_keras.data.safety import explicit
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


# Phrases whose words are innocent alone and adult together, as people search for them:
# "diaper punishment" and "crossdressing forum" were suggested after "dia" and "cr".
ADULT_PHRASES = frozenset(
    """
    diaper punishment, diaper discipline, diaper fetish, diaper lover, crossdressing forum,
    crossdressing stories, crossdressing pictures, crossdressing videos, forced feminization,
    spanking stories, spanking videos, spanking pictures, wife swapping, swingers club,
    adult chat, adult dating, adult personals, adult videos, adult movies, adult toys,
    naked women, naked men, naked girls, naked pictures, hot wife, hot wives, girls gone wild,
    strip club videos, lap dance videos, wet t shirt, bondage stories, foot fetish
""".replace("\n", " ").split(",")
)


def blocked_phrases(explicit_shown: bool = False) -> list[str]:
    """The blocked words and phrases, normalised as queries are (one or more words each).
    When sexually explicit suggestions are asked for (DecodeConfig.explicit), those the
    safety rule calls explicit (data/safety.py) are left out: the list then blocks the rest
    of the profanity only."""
    text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text("utf-8")
    listed = {normalise(line) for line in text.splitlines()}
    phrases = listed | ADULT_WORDS | {normalise(phrase) for phrase in ADULT_PHRASES}
    kept = (p for p in phrases if p and p not in EVERYDAY_WORDS)
    return sorted(p for p in kept if not (explicit_shown and explicit(p)))
