"""The safety rule, in one room low in the house: which queries seek sexual content involving
minors (never shown, never trained on, never stored, under any option) and which are sexually
explicit (hidden unless the person asks). prepare, the log index, the export's tables, the
serving graph's last check and the app's history all read these patterns, so no route keeps
a copy of its own (docs/quality.md, "Safe by default", says what is removed and why).

No maintained list of such terms is published on the package registry (the lists of child
protection bodies are shared with search engines only), so the terms below are the project's
own, written from the way such queries are typed in a search log. Each pattern is one regular
expression in the syntax shared by Python's `re` and RE2 (TensorFlow's
`tf.strings.regex_full_match`), over a normalised query padded with a space at each end.
"""

import functools
import re

from mtn_keras.data.text import normalise

# Terms that name such material outright, whatever stands beside them.
CHILD_TERMS = (
    r"pthc|ptsc|hussyfan|lolicon|shotacon|shota|loli|lolis|lolitas|lolita[a-z]+|nymphets?|"
    r"jailbait|jail bait|kiddie ?porn[a-z]*|kiddy ?porn[a-z]*|childporn[a-z]*|kinderporn[a-z]*|"
    r"preteen[a-z]*porn[a-z]*|teenporn[a-z]*|pedo|pedos|pedofil[a-z]*|pedophil[a-z]*|"
    r"paedo[a-z]*|pedobear|underage ?porn[a-z]*|child ?sex|childsex|kidsex|kiddiesex"
)
# Ages under 18 as people type them ("12 yo", "14yr", "13 year old").
AGES = r"(?:[1-9]|1[0-7]) ?(?:yo|y o|yr|yrs|year old|years old|yr old|yrs old|yearold)"
# Words for a minor: beside a sexual word, the query seeks abuse material.
MINOR_WORDS = (
    r"child|childs|children|childrens|kid|kids|kiddie|kiddies|kiddy|minor|minors|underage|"
    r"under age|illegal|preteen[a-z]*|pre teen[a-z]*|tween|tweens|teen|teens|teenie[a-z]*|"
    r"teeny|teenage|teenager|teenagers|teenz|young|younger|youngest|little|lil|schoolgirls?|"
    r"school girls?|schoolboys?|school boys?|school|schools|boy|boys|daughters?|lolita|"
    r"toddlers?|infants?|junior high|middle school|elementary|[1-9]|1[0-7]|" + AGES
)
# Words for a minor so telling that a picture word beside them is enough ("... models").
STRONG_MINOR_WORDS = r"preteen[a-z]*|pre teen[a-z]*|underage|under age|lolita"
# Words for a minor that a search log pairs with pictures to seek what the rule forbids ("...
# pics" whose clicks reach adult sites: most such queries of the AOL dev log had them);
# "baby", "kid" and "child" are left out here, as "baby pictures" and "kids photos" are what
# parents search for.
PICTURED_MINOR_WORDS = (
    r"boy|boys|young|teen|teens|teenie[a-z]*|teeny|teenage|teenager|teenagers|schoolboys?|"
    r"school boys?|schoolgirls?|school girls?|twinks?"
)
# Words for a minor beside which a body part, an act or a gallery word is enough, whatever the
# other words say: a borderline query is hidden rather than shown.
CHILD_WORDS = MINOR_WORDS + r"|baby|babies|babys|twinks?|barely legal"
BODY_WORDS = (
    r"penis|penises|pennis|penile|dicks?|vaginas?|genitals?|genitalia|crotch|bulges?|butts|booty|"
    r"breasts|underwear|speedos?|jockstraps?|briefs|wedgies?|erect[a-z]*|hung|sperm|semen"
)
ACT_WORDS = (
    r"suck[a-z]*|licking|kissing|hump[a-z]*|wank[a-z]*|jerking|jerk off|stroking|"
    r"undress[a-z]*|stripping|flashing|peeing|pissing|exposed|exposing|tied|gagged|"
    r"voyeur[a-z]*|spycams?|peeping"
)
GALLERY_WORDS = r"tgp|thumbs|thumbnails?|galleries|bbs|top ?sites|toplists?|nn|non nude"
PICTURE_WORDS = (
    r"models?|modeling|modelling|pics?|pictures?|photos?|images?|gallery|galleries|posing|"
    r"poses|portraits?|bikinis?|thongs?|bbs|tgp"
)
# ... and beside the telling words, these too ("... videos"; not beside an age: "video of a 14
# year old at boot camp" is news).
MOVING_WORDS = r"videos?|vids?|movies?|cams?|webcams?|art|nn|non nude|sets?"
# Sexual words, their stems and spellings: beside a word for a minor, and as explicit items.
SEXUAL_WORDS = (
    r"porn[a-z]*|p0rn[a-z]*|pr0n|pron|pornn[a-z]*|xxx[a-z]*|sex|sexy|sexier|sexiest|sexx[a-z]*|"
    r"sexo|sexe|secks|seks|sexual|sexually|nude[a-z]*|nudi[a-z]*|nudz|naturist[a-z]*|naked|"
    r"nakid|nekkid|desnud[a-z]*|fuck[a-z]*|fuk|fuks|fukin|fuking|fukk[a-z]*|fck[a-z]*|"
    r"phuck[a-z]*|pussy|pussies|pusy|cock|cocks|tits|titty|titties|tittys|tetas|boob[a-z]*|"
    r"hentai|h3ntai|erotic[a-z]*|rape|raped|rapes|raping|molest[a-z]*|upskirt[a-z]*|"
    r"downblouse|topless|panty|panties|incest|orgy|orgies|orgasm[a-z]*|masturb[a-z]*|"
    r"blowjob[a-z]*|blow job[a-z]*|handjob[a-z]*|cumshot[a-z]*|cum|horny|slut[a-z]*|"
    r"whore[a-z]*|putas?|hardcore|bondage|fetish[a-z]*|strip tease|striptease|strippers?|"
    r"lingerie|milfs?|dildo[a-z]*|vibrators?|gangbang[a-z]*|threesome[a-z]*|bukkake|"
    r"camgirls?|sexting|nsfw|spank[a-z]*|nipples?|ass|asses|asshole[a-z]*|ass hole|pimps?|"
    r"pimping|nasty"
)
# Sexual words that are explicit only in the child rule's company, not alone: "lingerie
# store", "hardcore punk", "rape statistics", "spanking children", "nipple piercing" are
# ordinary searches ("ass" is better-profanity's to block, as profanity; "nasty teens" was
# shown after "bank of amercia", "nasty weather" is no such search).
NOT_EXPLICIT_ALONE = frozenset(
    "sexual sexually rape raped rapes raping molest[a-z]* lingerie hardcore spank[a-z]* "
    "vibrators? panty panties nipples? ass asses asshole[a-z]* pimps? pimping nasty".split()
    + ["ass hole"]
)
# Adult sites' names, and words of adult entertainment that no other search uses.
ADULT_SITES = (
    r"pornhub|youporn|redtube|xtube|xvideos|xhamster|xnxx|brazzers|bangbros|realitykings|"
    r"naughtyamerica|adultfriendfinder|livejasmin|chaturbate|playboy|literotica|realdoll|"
    r"kink com|fleshlight|sextube|pornotube|bangbus|hustler com|"
    r"penthouse com|vivid com|xxxchurch|adultmatch|sexsearch|sexsearchcom|pornstar[a-z]*"
)
# Words never suggested unless asked for (explicit), though not explicit themselves: in a
# search log they mostly seek what the child rule forbids ("preteen" after "pret").
TELLING_ALONE = r"preteen[a-z]*|pre teens?|lolita"
# Explicit words found after the bundle's data was prepared ("dominatrix" completing "domin"
# after "pizza hut"): explicit alone here; they join SEXUAL_WORDS, and so the child rule, at
# the next retrain, when prepare drops the 4 sessions they would add.
EXPLICIT_ALONE = r"dominatrix[a-z]*|femdom|kinky|swingers?"
# Phrases of such words that are ordinary searches, read as absent before both rules run:
# gender, biology, titles.
INNOCENT_PHRASES = (
    r"same sex|opposite sex|single sex|baby sex|sex of (?:the )?baby|sex chart|"
    r"sex determination|sex and the city|sex pistols|naked chef|naked gun|"
    r"naked brothers band|naked juice|naked eye|naked mole rat|naked truth|boob tube|"
    r"cum laude|magna cum laude|summa cum laude|pussy ?cat dolls|pussy ?cat|booby traps?|"
    r"blue footed booby|sexy back|beach boys|backstreet boys|beastie boys|pet shop boys|"
    r"boy scouts?|boy george|soulja boy|chris young|neil young|young jeezy|young buck"
)
# Searches for information on abuse and health, read as absent before the explicit rule only:
# beside a word for a minor they are left out with the rest (a search box is no place to
# complete them; docs/quality.md says what that costs).
INFORMATION_PHRASES = (
    r"sex offenders?|sex offender registry|sexual offenders?|sexual predators?|"
    r"sex education|sex ed|sexual harassment|sexual health|sexual abuse|sexual assault|"
    r"sexually transmitted[a-z ]*|rape crisis|rape victims?|rape prevention|date rape drug"
)


def _any(words: str) -> str:
    """A group matching one of `words` (alternatives of a regular expression) whole."""
    return f"(?:{words})"


def _explicit_alone() -> str:
    """The sexual words that make a query explicit on their own."""
    kept = [w for w in SEXUAL_WORDS.split("|") if w not in NOT_EXPLICIT_ALONE]
    return "|".join(kept)


@functools.cache
def child_core() -> str:
    """The regular expression found in ` query ` (after `innocent_core`) when the query seeks
    sexual content involving minors: an outright term, a word for a minor beside a sexual
    word, a body part, an act or a gallery word, or a telling word for a minor (or an age)
    beside a picture word."""
    alternatives = [f" {_any(CHILD_TERMS)} "]
    for minor, other in (
        (CHILD_WORDS, "|".join((SEXUAL_WORDS, ADULT_SITES, BODY_WORDS, ACT_WORDS, GALLERY_WORDS))),
        (STRONG_MINOR_WORDS, PICTURE_WORDS + "|" + MOVING_WORDS),
        (PICTURED_MINOR_WORDS, PICTURE_WORDS),
        (AGES, PICTURE_WORDS),
    ):
        alternatives.append(f" {_any(minor)} (?:.* )?{_any(other)} ")
        alternatives.append(f" {_any(other)} (?:.* )?{_any(minor)} ")
    return "|".join(alternatives)


@functools.cache
def explicit_core() -> str:
    """The regular expression found in ` query ` (after `innocent_core` and
    `information_core`) when the query is sexually explicit: a sexual word or stem, a spelling
    of one, an adult site's name, or a word that is never suggested unless asked."""
    words = [_explicit_alone(), ADULT_SITES, CHILD_TERMS, TELLING_ALONE, EXPLICIT_ALONE]
    return f" {_any('|'.join(words))} "


def innocent_core() -> str:
    """The regular expression of the innocent phrases, each with its spaces (` same sex `)."""
    return f" {_any(INNOCENT_PHRASES)} "


def information_core() -> str:
    """The regular expression of the information phrases (` sex offender `)."""
    return f" {_any(INFORMATION_PHRASES)} "


def whole(core: str) -> str:
    """`core` as a pattern of the whole text, for `tf.strings.regex_full_match` (RE2 has no
    search)."""
    return f"(?s).*(?:{core}).*"


@functools.cache
def _compiled():
    cores = (innocent_core(), information_core(), child_core(), explicit_core())
    return tuple(map(re.compile, cores))


def without(text: str, phrases: re.Pattern) -> str:
    """`text` with each of `phrases` replaced by two spaces; twice, so that two phrases sharing
    the space between them both go (the graph's twin does the same)."""
    return phrases.sub("  ", phrases.sub("  ", text))


@functools.lru_cache(maxsize=2**16)
def child_unsafe(query: str) -> bool:
    """Whether the normalised `query` seeks sexual content involving minors."""
    innocent, _, child, _ = _compiled()
    return child.search(without(f" {query} ", innocent)) is not None


@functools.lru_cache(maxsize=2**16)
def explicit(query: str) -> bool:
    """Whether the normalised `query` is sexually explicit (child-unsafe ones are too)."""
    innocent, information, child, explicit_words = _compiled()
    text = without(f" {query} ", innocent)  # read once for both rules
    if child.search(text):
        return True
    return explicit_words.search(without(text, information)) is not None


@functools.cache
def _minor() -> re.Pattern:
    return re.compile(f" {_any(CHILD_WORDS)} ")


@functools.lru_cache(maxsize=2**16)
def names_minor(query: str) -> bool:
    """Whether the normalised `query` holds a word for a minor or an age under 18 (its
    innocent phrases read as absent): what turns a query explicit by the log's evidence
    (data/evidence.py) into one that seeks sexual content involving minors."""
    return _minor().search(without(f" {query} ", _compiled()[0])) is not None


def may_show(query: str, explicit_shown: bool = False) -> bool:
    """Whether a suggestion may be shown: never one that seeks sexual content involving
    minors, an explicit one only when `explicit_shown`. The clients' check of what a model or a
    server answers, whatever its export did."""
    text = normalise(query)
    return not (child_unsafe(text) if explicit_shown else explicit(text))
