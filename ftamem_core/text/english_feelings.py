"""English: the feelings, intentions and relations a speaker states about themselves, in their own words.

A person in a support conversation names a feeling in a word or two ("I felt ashamed all
weekend", "I'm torn", "it calms me") and a plan in a short clause ("I want to apply at the
bank"), and the people around them by how they stand to them ("my husband and kids"). The 1.5B
leaves nearly all of them out of its units (0 of 19 on a grief case), and a copy of a turn has no
anchors at all. These rules read them from the speaker's first-person
statements (setting ``stated_anchors``): the words are the speaker's, so an anchor can be
wrong only about the words around it (a negation is kept: "not happy"), never invented.

Only first-person statements count: "you seem sad" is the listener's reading, not a feeling the
person stated. The caller passes the turn's statements about its speaker (questions and
sentences about the listener left out).
"""

from __future__ import annotations

import itertools
import re

from .english_sentences import DASH_BREAK, sentences

# Feeling words as people use them after "I'm / I feel / I was" (adjectives and participles).
# Deliberately not here: "sorry" (mostly politeness), "sure", "fine", "ok", "good" (answers to
# "how are you"); "good" and "better" count after another feeling ("sad but good"); "struggling",
# a difficulty whose object is the state ("struggling with depression": read blind, ESConv valid).
FEELINGS = frozenset(
    """
    afraid agitated alarmed alive alone amazed angry annoyed anxious apprehensive ashamed awed awful awkward bad
    betrayed bitter blessed bored broken bummed burned burnt busy calm calmer comfortable concerned
    confident confused connected content crushed curious defeated dejected delighted depressed desperate determined
    devastated disappointed disconnected discouraged disgusted disheartened distraught down drained eager
    ecstatic embarrassed emotional empty energized enraged envious exasperated excited exhausted
    fearful fed frightened frustrated fulfilled furious glad gloomy grateful grieving guilty
    happy heard heartbroken helpless homesick honored hopeful hopeless horrible humbled humiliated hurt impatient insecure
    inspired irritated isolated jealous joyful lighter lonely lost loved low lucky mad miserable motivated
    nervous nostalgic numb optimistic overjoyed overwhelmed panicked panicky paranoid passionate peaceful
    pessimistic powerful proud psyched pumped rejected relaxed relieved resentful restless sad safe satisfied scared shaken shattered shocked
    shy sick stoked stressed stuck supported surprised swamped tense terrible terrified thankful thrilled tired torn
    touched troubled uncomfortable understood uneasy unhappy unmotivated unsafe upset useless valued
    vulnerable weak weird worried worthless
    gross ignored inferior invisible positive stupid trapped ugly unloved unnoticed unwanted
    """.split()
)

# "it calms me", "they motivate me", "it inspired me", "it's stressing me out": the feeling a verb
# tells, by the verb's forms
_CAUSED_FORMS = {
    "annoyed": "annoy annoys annoyed annoying",
    "calm": "calm calms calmed calming",
    "comforted": "comfort comforts comforted comforting",
    "depressed": "depress depresses depressed depressing",
    "excited": "excite excites excited exciting",
    "frightened": "frighten frightens frightened frightening",
    "frustrated": "frustrate frustrates frustrated frustrating",
    "hurt": "hurt hurts hurting",
    "inspired": "inspire inspires inspired inspiring",
    "motivated": "motivate motivates motivated motivating",
    "energized": "energize energizes energized energizing",
    "drained": "drain drains drained draining",
    "relaxed": "relax relaxes relaxed relaxing",
    "refreshed": "refresh refreshes refreshed refreshing",
    "recharged": "recharge recharges recharged recharging",
    "mesmerized": "mesmerize mesmerizes mesmerized mesmerizing",
    "sad": "sadden saddens saddened saddening",
    "scared": "scare scares scared scaring",
    "soothed": "soothe soothes soothed soothing",
    "stressed": "stress stresses stressed stressing",
    "terrified": "terrify terrifies terrified terrifying",
    "upset": "upset upsets upsetting",
    "worried": "worry worries worried worrying",
}
_CAUSED = {form: feeling for feeling, forms in _CAUSED_FORMS.items() for form in forms.split()}
# a causing verb after these is wished, tried or asked for, not felt ("They tried to scare me")
_WISHED = frozenset("to would could should might may must can will 'll please".split())

# words that may stand between "I'm" and the feeling ("I'm really not that happy"), and any other
# adverb in -ly ("I'm mainly worried", "I definitely feel worthless", "I'm so emotionally
# exhausted": ESConv seekers' turns) but a feeling in -ly ("I'm lonely", "I feel ugly"). No word
# may match two ways: "really" in both made a run of "really" exponential.
_NAMED_MODIFIERS = (
    "so+",
    "very",
    "really",
    "just",
    "a bit",
    "a little",
    "kind of",
    "kinda",
    "pretty",
    "quite",
    "too",
    "extremely",
    "also",
    "still",
    "getting",
    "feeling",
    "super",
    "totally",
    "incredibly",
    "completely",
    "absolutely",
    "truly",
    "rather",
    "somewhat",
    "honestly",
    "actually",
    "that",
    "more",
    "even",
    "always",
    "often",
    "sometimes",
    "starting to feel",
    "beginning to feel",
    "a lot",  # "a lot more": "a lot", then "more"
    "much",
    "not",
    "never",
)
# an adverb in -ly in a single place ("I actually feel"), and among the modifiers one they do not name
# ("I rarely feel happy" denies it: no adverb of frequency that negates)
_DENYING = ("barely", "hardly", "rarely", "scarcely", "seldom")
_ADVERB = rf"(?!(?:{'|'.join(sorted({w for w in FEELINGS if w.endswith('ly')} | set(_DENYING)))})\b)[a-z]+ly"
_LY_TAKEN = sorted(
    {w for w in _NAMED_MODIFIERS if w.endswith("ly")} | {w for w in FEELINGS if w.endswith("ly")} | set(_DENYING)
)
_LY = rf"(?!(?:{'|'.join(_LY_TAKEN)})\b)[a-z]+ly"
_MODIFIERS = rf"(?:{'|'.join(_NAMED_MODIFIERS)}|{_LY})"
# "I'm", also as chat writes it ("im", "Ive been")
_SELF = (
    rf"\bi(?:\s+(?:still|always|often|sometimes|usually|really|just|also|even|kind of|{_ADVERB}))?(?:'m|m| am|"
    r"(?:'ve|ve| have)(?: always| just| really| also)? been| was| feel| felt| do feel| did feel| get| got| become| became| keep feeling| still feel|"
    r"'m feeling|m feeling| am feeling| was feeling| had been| feel like i'm)"
)
_NEGATED = (
    r"\bi(?:'m not|m not| am not| wasn't| was not| don't feel| didn't feel| do not feel| did not feel| never feel)"
)
_MADE = r"\b(?:makes?|made) me(?: feel)?"
_FEELING = re.compile(
    rf"(?P<neg>{_NEGATED})?(?(neg)|(?:{_SELF}|{_MADE}))\s+(?:{_MODIFIERS}\s+)*(?P<a>[a-z]+)"
    rf"(?:\s+(?P<conj>and|but|yet)\s+(?:{_MODIFIERS}\s+)*(?P<b>[a-z]+))?",
    re.IGNORECASE,
)
# A feeling given as an answer ("How did that feel?" - "Guilty at first, honestly. But relieved."):
# a short sentence that opens with it.
_ANSWER = re.compile(
    rf"^(?:(?:but|and|honestly|mostly|just|still|a bit|pretty|really|so+|very|quite|kind of|kinda|a little|super|totally),?\s+)*"
    rf"(?P<a>[a-z]+)(?:\s+(?P<conj>and|but|yet)\s+(?:{_MODIFIERS}\s+)*(?P<b>[a-z]+))?\b",
    re.IGNORECASE,
)
ANSWER_WORDS = 6
# A feeling told without its "I" at the start of a sentence, or after a dash that follows the
# speaker's "I", with what it is about ("Super excited for what's next!", "Kinda jealous of all
# those outings", "I signed with a new team - excited for the season!"); "So happy for you!" is
# about the listener, "My daughter - excited for school" about her.
_FRAGMENT = re.compile(
    rf"(?:^|^(?=.*?\bI\b).*?{DASH_BREAK}\s*)(?:{_MODIFIERS}\s+)*(?P<a>[a-z]+)"
    rf"(?=\s+(?:for|about|to|of|with|that)\b)",
    re.IGNORECASE,
)
# "Feeling pretty down.", "Yeah, feeling a bit anxious": "I'm" left out at a sentence's start
_ELLIPTIC = re.compile(
    rf"^(?:(?:yeah|yes|well|ok|okay|honestly|still|just|been|and|but|so)\b,?\s+)*feeling\s+"
    rf"(?:{_MODIFIERS}\s+)*(?P<a>[a-z]+)",
    re.IGNORECASE,
)
# a verb after "Feeling X ...": the feeling is a sentence's subject, not the speaker's state
_SUBJECT_OF = {"is", "was", "isn't", "can", "can't", "could", "will", "won't", "makes", "helps", "means"}
# what may follow an answer's feeling ("Guilty at first", "Lonely, mostly"); "Lost my job" is no answer
_ANSWER_TAIL = re.compile(r"^(?:at first|about|now|today|mostly|honestly|again|too|really|though|lately|still)\b", re.I)
# the speaker's own waiting: at a sentence's start or after "I" / "we" ("My husband can't wait to
# ..." is his)
_OWN_WAIT = r"(?:^|[.!?]\s+|\b(?:i|we)(?:'m| am|'re| are)?\s+(?:(?:so+|really|just|also|still)\s+)?)"
# the speaker's own eagerness, in their words: dev LoCoMo turns close a plan with "Can't wait!" ("Hope
# I find one soon. Can't wait!") or answer "Looking forward to it". Not impatience ("I can't wait any
# longer", "can't wait around for him"), not "Looking forward, I want to ..." (from now on), not
# waiting for the listener's news ("Can't wait to see the pics!", "to hear more about it").
_EAGER = re.compile(
    rf"{_OWN_WAIT}(?P<e>can't wait|cannot wait|looking forward)(?=\s*(?:[!.]|$)|\s+(?:to|for)\b)"
    r"(?!\s+(?:to|for)\s+(?:see|hear|read|try|check)\s+(?:it|them|that|this|more|those|these|you|your|the pics?|the photos?)\b)",
    re.IGNORECASE,
)
_CAUSED_RE = re.compile(rf"\b(?P<verb>{'|'.join(_CAUSED)}) me\b", re.IGNORECASE)
# feelings told in a phrase ("I'm over the moon", "I was blown away")
_PHRASES = "over the moon|on cloud nine|in awe|blown away|fired up|at peace|worn out|freaked out|a mess|a wreck|on edge"
_PHRASE = re.compile(rf"(?:{_SELF})\s+(?:{_MODIFIERS}\s+)*(?P<p>{_PHRASES})\b", re.IGNORECASE)
# Feelings named as nouns ("a mix of relief and worry", "it fills me with hope").
FELT_NOUNS = frozenset(
    """
    anger anxiety calm comfort courage energy excitement fear frustration fulfillment fulfilment gratitude
    depression grief guilt happiness hope joy loneliness nervousness peace pride relief sadness shame strength
    stress worry
    """.split()
)
_ALL_NOUNS = "|".join(sorted(FELT_NOUNS))
# a feeling noun that names something else ("stress relief", "anger management", "comfort food")
_COMPOUND = r"relief|levels?|balls?|management|food|class(?:es)?"
# what a person calls their own ("my anxiety", "overcome my depression"), and what they say they
# have, feel or struggle with ("I have depression", "I feel renewed hope", "I'm struggling with
# anxiety"): ESConv seekers name states so. Not "my hope is", "my stress relief".
_MINE = re.compile(
    r"\bmy (?:own |constant |overall |growing |social )?(?P<mine>anger|anxiety|depression|fear|frustration|grief|guilt|"
    rf"loneliness|nervousness|sadness|shame|stress)\b(?!\s+(?:{_COMPOUND}|is that|was that)\b)"
    rf"|\bi(?:\s+(?:really|just|still|also|do|{_ADVERB}))?(?:\s+have|\s+feel|\s+felt|'m feeling|m feeling| am feeling| was feeling|"
    r"(?:'ve| have) been feeling)\s+"
    rf"(?:so much |a lot of |some |a bit of |renewed |such |a |this )?(?P<have>{_ALL_NOUNS})\b(?!\s+(?:{_COMPOUND})\b)"
    # "I'm struggling with depression", "I've been dealing with anxiety" (not "I help people dealing with")
    rf"|\bi(?:'m| am|m|'ve been| have been| was)\s+(?:{_ADVERB}\s+)?(?:struggling|dealing|coping|living|battling|suffering)"
    rf"\s+(?:with|from)\s+(?:my |some |a lot of |so much |this |the )?(?P<with>{_ALL_NOUNS})\b"
    rf"(?!\s+(?:{_COMPOUND}|from|of)\b)",  # "anger from my dad" is his
    re.IGNORECASE,
)
_AMOUNT = r"(?:so much |tons of |a lot of |lots of |such |great |the )?"
# what an experience or a person gives the speaker, in their words ("we had a blast", "they bring
# me so much joy", "it fills me with hope", "they mean the world to me", "it really speaks to me":
# dev LoCoMo turns tell feelings so). Only their own "had" or "having": "I hope they have fun" is
# a wish, "I can picture you all having a blast" the listener's; not "means a lot to me", which
# mostly thanks the listener's words.
_GIVEN = re.compile(
    # their own "had": "Me and my team had a blast", "we had so much fun" (not "the kids had")
    r"\b(?:i|we|me|us)\b(?:\s+[\w'-]+){0,4}?\s+(?P<had>had (?:such |so much |a |an )?"
    r"(?:blast|fun|(?:great|good|amazing|awesome|incredible|wonderful|fantastic|lovely) time))\b"
    # "I'm having so much fun", "we've been having a blast"
    r"|\b(?:i'm|i am|we're|we are|i've been|we've been) (?P<having>having (?:such |so much |a |an )?"
    r"(?:blast|fun|(?:great|good|amazing|awesome|incredible|wonderful|fantastic|lovely) time))\b"
    rf"|\b(?:brings?|brought|bringing|gives?|gave|giving|given) (?:me|us) {_AMOUNT}(?:{_ALL_NOUNS})\b"
    # "it fills me with hope", "filled my heart with joy", "they brought so much joy to my life"
    rf"|\b(?:fill|fills|filled|filling) (?:me|us|my (?:heart|life)|our (?:hearts?|lives)) with {_AMOUNT}(?:{_ALL_NOUNS})\b"
    rf"|\b(?:brings?|brought|bringing) {_AMOUNT}(?:{_ALL_NOUNS}) (?:to|into) (?:my|our) (?:life|lives|heart|hearts|days?)\b"
    # "such a relief to have it all done"
    r"|\b(?:such|what) a relief\b(?!\s+for\b)"
    r"|\b(?:means?|meant) (?:the world|everything) to (?:me|us)\b"
    # "it really speaks to me." (not "he speaks to me like a child", "she spoke to me about it")
    r"|\b(?:speaks?|spoke) to me(?=\s*(?:[.!;,]|$))",
    re.IGNORECASE,
)
# Feelings the speaker lists or names by a noun: "a rollercoaster of emotions - relief, excitement,
# some anxiety", "crazy emotions like relief, excitement and worry", "I had a feeling of gratitude"
# (dev LoCoMo turns); the list runs to the end of its clause.
_LISTED_AFTER = re.compile(r"\b(?:emotions|feelings)(?:\s+(?:like|such as|of)\b|\s*[:\u2013\u2014-])", re.IGNORECASE)
_FEELING_OF = re.compile(rf"\b(?:a|the) (?:feeling|sense) of (?P<n>{_ALL_NOUNS})\b", re.IGNORECASE)
_LIST_END = re.compile(rf"[.!?;:]|{DASH_BREAK}")
LISTED_WORDS = 12
# "Nothing gives me joy anymore", "I haven't had fun in ages": told, but not felt
_NO_LONGER = re.compile(r"\b(?:nothing|no|not|never|hardly|barely)\b|n't\b", re.IGNORECASE)
# What a person says an experience of theirs was like ("It was magical", "it's been tough"): the
# words that judge it. Told in the past, it is their experience; in the present ("that's great")
# it is often a reaction to the listener's news, so it counts only beside their own "I", "my" or "we".
APPRAISALS = frozenset(
    """
    amazing awesome beautiful bittersweet brutal bumpy calming challenging cool crazy difficult
    draining emotional empowering epic exciting exhausting eye-opening fantastic freeing frustrating
    fun great hard healing heartbreaking horrible humbling incredible insane inspiring intense
    liberating life-changing lonely magical meaningful memorable motivating nerve-wracking
    overwhelming painful peaceful powerful refreshing relaxing rewarding rough sad scary special
    stressful surreal terrible thought-provoking thrilling tiring tough unforgettable unreal wild
    wonderful
    """.split()
)
_JUDGED = r"(?:it|that|this|which|everything)"
_APPRAISAL = re.compile(
    rf"\b{_JUDGED}(?P<tense>\s+was|\s+were|\s+felt|'s been|\s+has been|\s+had been|'s|\s+is|\s+feels)"
    rf"\s+(?:{_MODIFIERS}\s+)*(?:(?P<article>a|an)\s+(?:{_MODIFIERS}\s+)*)?(?P<a>[a-z][a-z-]*)"
    rf"(?(article)\s+(?P<noun>[a-z]+))?(?:\s+(?:and|but|yet)\s+(?:{_MODIFIERS}\s+)*(?P<b>[a-z][a-z-]*))?",
    re.IGNORECASE,
)
# an appraisal closing a sentence of the speaker's own after a dash ("I won my first tournament last
# week - so exciting!")
_DASHED = re.compile(rf"{DASH_BREAK}\s*(?:{_MODIFIERS}\s+)*(?P<a>[a-z][a-z-]*)[\s!.]*$", re.IGNORECASE)
_OWN = re.compile(r"\b(?:I|I'm|I've|me|my|we|we're|we've|us|our)\b", re.IGNORECASE)
_I = re.compile(r"\b(?:I|I'm|I've|I'd|im|ive)\b", re.IGNORECASE)
# "I love helping the community", "We love climbing": what the person loves or enjoys, in their words
_LOVE = re.compile(
    r"\b(?:I|we)(?:\s+(?:really|just|also|truly|absolutely|do|still|always))?\s+(?P<v>love|enjoy|adore|hate|miss)\s+(?P<what>[^.,;:!?()\"]+)",
    re.I,
)
LOVED_WORDS = 6

_INTENT = re.compile(
    r"(?:\bi(?:'m| am)? ?(?P<how>going to|gonna|planning to|planning on|hoping to|plan to|want to|wanna|intend to|"
    r"hope to|would like to|'d like to|'d love to|will|'ll|'m thinking of|'m thinking about|am thinking of|am thinking about|"
    r"need to|have to|should(?! have\b| of\b)|'m considering|am considering|'m off to|am off to)"
    # "we" plans only in words that say so ("we'll get through this" is encouragement)
    r"|\bwe(?:'re| are)? (?P<we>planning to|planning on|plan to|going to|gonna|hoping to|thinking of|thinking about|should(?! have\b| of\b))"
    r"|(?:^|[.!?]\s+)(?P<bare>gonna|going to|planning to|planning on|hoping to|gotta)"
    # "My goal is to give kids a loving home" (dev conv-26)
    r"|\bmy (?P<goal>goal|plan|aim|dream) is to"
    # "That makes me want to hike with my dogs" (dev conv-44)
    r"|(?<!\bnothing )\bmakes me (?P<made>want to|wanna)"
    rf"|{_OWN_WAIT}(?P<wait>can't wait to|cannot wait to|looking forward to))"
    r"\s+(?P<what>[^.,;:!?()\"]+)",
    re.IGNORECASE,
)
# "I'm going to the park": a place, not a verb, follows
_PLACE = re.compile(r"^(?:the|a|an|my|our|his|her|their|this|that|some|see)\b", re.IGNORECASE)
# what follows "I'll" or "I want to" in small talk, not a plan ("I'll let you know", "I want to say")
_NOT_PLANS = re.compile(
    r"^(?:not|never|be|say|tell|let|see|try(?! to\b)|keep that|check|remember|think|know|ask|hear|admit|thank|bet|have to|do my best|"
    r"do that|do it|go now|go soon|get going|"
    # a regret, not a plan: "I should probably have called her", "should of left"
    r"have (?:been|known|gone|done|seen|had|made|taken|got|gotten|[a-z]+ed)|of)\b",
    re.IGNORECASE,
)
INTENTION_WORDS = 10
# what may follow a plan's "it" or "them" and say nothing more of it ("give it a go", "add it to my
# list", "check it out sometime"); "submit it to some film festivals" says where
_NO_MORE = frozenset(
    "a an the go try shot out to my list sometime soon later too again more even up one now asap happen work there down eventually "
    "in mind some thought into consideration account for sure".split()
)


def _says_no_more(words: list[str]) -> bool:
    """Whether a plan that refers back says nothing after what it refers to but ``_NO_MORE`` words."""
    low = [w.lower().strip(",.!?") for w in words]
    at = next(i for i, w in enumerate(low) if w in _REFERS_BACK or w in ("those", "these"))
    return all(w in _NO_MORE for w in low[at + 1 :])


# what someone else thinks or says the speaker will or should do ("Lena thinks I should ..."; "I
# think I'll ..." is their own)
_REPORTED = re.compile(
    r"\b(?P<passive>was told|were told|am told|'m told)?(?(passive)|(?:thinks?|says?|tells? me|believes?|feels?|insists?|"
    r"suggests?|keeps? telling me|thought|said|told me|suggested))\s+(?:that\s+)?$",
    re.IGNORECASE,
)
# the speaker's own "I think", "we really feel"
_OWN_REPORT = re.compile(r"\b(?:I|we)(?:\s+\w+)?\s*$", re.IGNORECASE)
# a feeling word in another sense when these follow it ("I'm down to help", "I'm bad at maths")
_OTHER_SENSE = {
    "down": ("to", "for", "with"),
    "bad": ("at",),
    "lost": ("in", "to"),
    "stuck": ("in", "at", "on"),
    # passives: "I was connected with a new therapist", "I'm supported by a grant"
    "connected": ("with", "by"),
    "supported": ("by",),
    "heard": ("about", "of", "from", "that", "back"),
    "understood": ("that", "what", "how", "why", "it", "the"),
    "better": ("off", "if"),  # "better off", "I would feel better if ..." (a wish)
    "good": ("at", "if", "to"),  # "I feel good at it", "it would feel good to ..."
    "great": ("at", "if", "to", "deal", "pain", *FELT_NOUNS),  # "I feel great pain"
    "positive": ("that",),  # "I'm positive that ..." is sure
}
_SECOND = FEELINGS | {"good", "better"}
# feelings read only after "feel" ("I feel accepted at church"; "I got accepted!" is admission news)
# ("I feel much better now", "I'm feeling great"; "I'm better", "I'm good" answer "how are you")
_FELT_ONLY = frozenset({"accepted", "better", "good", "great"})
_FELT = re.compile(r"\bfe(?:el|lt|eling)\b", re.IGNORECASE)
# "I'm proud of you", "glad to hear that": the listener's news, not the speaker's feeling
_ABOUT_LISTENER = {"you", "you're", "your", "you've", "hear"}
# "I'll definitely check it out": an answer to a tip; a plan names what it is about
_HEDGES = re.compile(
    r"^(?:definitely|probably|likely|really|totally|def|surely|certainly|just|also|still|maybe)\s+", re.I
)
_REFERS_BACK = {"it", "that", "this", "those", "them", "these"}
# "those" before what says who they are refers to no earlier words ("support those with similar issues")
_QUALIFIED = {"who", "whose", "with", "that"}


def _refers_back(words: list[str], within: int = 2) -> bool:
    """Whether a plan or a love opening with ``words`` is about something said before ("check it
    out", "love them"): a word of ``_REFERS_BACK`` among its first ``within``, but for "those" or
    "these" before what says who they are."""
    low = [w.lower().strip(",.!?") for w in words[: within + 1]] + [""]
    return any(
        w in _REFERS_BACK and not (w in ("those", "these") and low[i + 1] in _QUALIFIED)
        for i, w in enumerate(low[:within])
    )


# a plan ends where another clause begins ("start a group and see how it goes")
# where a clause ends: a stop, comma or colon, or a dash between spaces
_CLAUSE_BREAK = re.compile(rf"[,;:.!?]|{DASH_BREAK}")
_CLAUSE_WORDS = frozenset("and but so because since though while or when if until".split())


def _to_clause_end(words: list[str], clause_words: frozenset[str]) -> list[str]:
    """``words`` up to the next clause word after the first."""
    ends = [i for i, w in enumerate(words) if i and w.lower() in clause_words]
    return words[: ends[0]] if ends else words


_WORD = re.compile(r"[a-z']+", re.IGNORECASE)


def _next_words(text: str, at: int, n: int = 4) -> list[str]:
    """The ``n`` words of ``text`` from ``at``, lower case (not a slice of the rest for each match:
    that was quadratic in a long statement)."""
    return [m.group(0).lower() for m in itertools.islice(_WORD.finditer(text, at), n)]


def _words_before(text: str, at: int) -> list[str]:
    """The last three words of the clause that ends at ``at``."""
    return re.findall(r"[\w']+", _clause_before(text, at, 40).lower())[-3:]


def _denied_before(text: str, at: int) -> bool:
    """Whether the clause before ``at`` denies what follows ("it doesn't make me feel better", "it
    never calms me", "nothing calms me", "nothing's calming me"; not "Nothing else calms me like ...")."""
    before = _words_before(text, at)
    return (
        any(w in ("not", "never", *_DENYING) or w.endswith("n't") for w in before)
        or before[-1:] in (["nothing"], ["nothing's"])
        or before[-2:] in (["nothing", "is"], ["nothing", "was"])
    )


def _clause_before(text: str, at: int, chars: int = 80) -> str:
    """The clause that ends at ``at``, read in the ``chars`` characters before it (not the whole
    text: once per match, that was quadratic)."""
    return _CLAUSE_BREAK.split(text[max(0, at - chars) : at])[-1]


def _in_its_sense(word: str, after: list[str]) -> bool:
    """Whether a feeling word followed by the words ``after`` is a feeling of the speaker's: not in
    another sense ("I'm down to help") and not about the listener ("I'm proud of you")."""
    return not (after and after[0] in _OTHER_SENSE.get(word, ())) and not _ABOUT_LISTENER.intersection(after)


def _wished_before(text: str, at: int) -> bool:
    """Whether the verb at ``at`` is wished, tried or asked for ("it would calm me", "will
    hopefully make me feel better", "please don't stress me"), not felt."""
    before = [w for w in _words_before(text, at) if not (w.endswith("ly") and w not in _WISHED)]
    return bool(before) and (before[-1] in _WISHED or "please" in before)


def feelings(statement: str) -> list[str]:
    """The feelings a first-person statement states, as said ("excited and nervous", "not happy"),
    in order, without repeats."""
    statement = statement.replace("\u2019", "'")
    out: list[str] = []
    for m in _FEELING.finditer(statement):
        a, b = m.group("a").lower(), (m.group("b") or "").lower()
        after = _next_words(statement, m.end())
        felt_only = a in _FELT_ONLY and bool(_FELT.search(m.group(0)))
        if (a not in FEELINGS and not felt_only) or not _in_its_sense(a, after):
            continue
        made = m.group(0)[:4].lower() in ("make", "made")
        if made and _wished_before(statement, m.start()):
            continue  # "that would make me feel better", "will hopefully make me happy": not felt yet
        negated = (
            m.group("neg")
            or re.search(r"\b(?:not|never)\b", statement[m.start() : m.start("a")], re.I)
            or (made and _denied_before(statement, m.start()))  # "it doesn't make me feel better"
        )
        phrase = f"not {a}" if negated else a
        if b in _SECOND:
            phrase = f"{phrase} {m.group('conj').lower()} {b}"
        out.append(phrase)
    for sentence in sentences(statement):
        m = _ANSWER.match(sentence)
        rest = sentence[m.end() :].strip(" .!") if m else ""
        if (
            m
            and len(sentence.split()) <= ANSWER_WORDS
            and m.group("a").lower() in FEELINGS
            and (not rest or rest.startswith(",") or _ANSWER_TAIL.match(rest))
        ):
            b = (m.group("b") or "").lower()
            out.append(
                f"{m.group('a').lower()} {m.group('conj').lower()} {b}" if b in _SECOND else m.group("a").lower()
            )
        m = _ELLIPTIC.match(sentence)
        after = _next_words(sentence, m.end(), 6) if m else []
        if (
            m
            and (m.group("a").lower() in FEELINGS or m.group("a").lower() in _FELT_ONLY)
            and _in_its_sense(m.group("a").lower(), after)
            and not _SUBJECT_OF.intersection(after)  # "Feeling lonely is part of grief": advice, not theirs
        ):
            negated = re.search(r"\bnot\b", sentence[: m.start("a")], re.I)  # "Feeling really not happy"
            out.append(f"not {m.group('a').lower()}" if negated else m.group("a").lower())
        out += [m.group("e").lower() for m in _EAGER.finditer(sentence)]
        for m in _FRAGMENT.finditer(sentence):
            a = m.group("a").lower()
            after = _next_words(sentence, m.end())
            if a in FEELINGS and _in_its_sense(a, after):
                lead = re.split(rf"{DASH_BREAK}\s*", sentence[m.start() : m.start("a")])[-1]  # after the dash
                out.append(f"not {a}" if re.search(r"\b(?:not|never)\b", lead, re.I) else a)
    for m in _CAUSED_RE.finditer(statement):
        # the words of its clause just before the verb: "it never calms me", "they don't motivate
        # me", "nothing calms me" (not "Oh no, that scares me", "Nothing else calms me like ...")
        if _wished_before(statement, m.start()):
            continue  # "something to calm me down", "I wish it would motivate me", "please don't stress me"
        feeling = _CAUSED[m.group("verb").lower()]
        out.append(f"not {feeling}" if _denied_before(statement, m.start()) else feeling)
    out += [m.group("p").lower() for m in _PHRASE.finditer(statement)]
    for m in _GIVEN.finditer(statement):
        # the clause it opens in: a negation in an earlier sentence is not its own
        if _NO_LONGER.search(_clause_before(statement, m.start()) + " " + m.group(0)):
            continue
        if _wished_before(statement, m.start()):
            continue  # "seeing them would fill me with joy"
        if m.group(0).lower().endswith("relief") and not _OWN.search(_sentence_at(statement, m.start(), m.end())):
            continue  # "Mom said it was such a relief to have Dad home" is Mom's
        out.append((m.group("had") or m.group("having") or m.group(0)).lower())
    out += named(statement) + appraisals(statement) + loves(statement)
    return list(dict.fromkeys(out))


def named(statement: str) -> list[str]:
    """The feelings the speaker lists ("I keep bouncing between emotions like relief, excitement and
    worry" -> "relief, excitement, worry") or names ("I had a feeling of gratitude") in a clause of
    their own "I" ("My daughter struggles with feelings of anxiety" and "My mom felt a sense of
    relief" are not theirs), and the states they call their own or have ("my anxiety")."""
    out = []
    for sentence in sentences(statement.replace("\u2019", "'")):
        if not _OWN.search(sentence):
            continue
        for m in itertools.chain(_LISTED_AFTER.finditer(sentence), _FEELING_OF.finditer(sentence)):
            clause = _clause_before(sentence, m.start())
            if not _I.search(clause) or _NO_LONGER.search(clause):
                continue  # "I don't have feelings like that anymore", "no sense of pride"
            if "n" in m.groupdict() and m.group("n"):
                out.append(m.group("n").lower())
                continue
            rest = sentence[m.end() : m.end() + 200].lstrip(" :-\u2013\u2014")
            clause = _LIST_END.split(rest, maxsplit=1)[0]
            words = [w.lower() for w in _WORD.findall(clause)[:LISTED_WORDS]]
            listed = [w for w in words if w in FELT_NOUNS or w in FEELINGS]
            if listed:
                out.append(", ".join(dict.fromkeys(listed)))
        out += [(m.group("mine") or m.group("have") or m.group("with")).lower() for m in _MINE.finditer(sentence)]
    return out


def _sentence_at(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]``."""
    before = max(text.rfind(c, 0, start) for c in ".!?")
    after = min((i for i in (text.find(c, end) for c in ".!?") if i >= 0), default=len(text))
    return text[before + 1 : after]


def appraisals(statement: str) -> list[str]:
    """What the speaker says an experience was like, in their words: "it was magical", "it's been
    tough", "it was an awesome feeling"; a present judgement only in a sentence that is about them
    ("It's special to me"; "That's great!" answers the listener)."""
    out = []
    for sentence in sentences(statement.replace("\u2019", "'")):
        for m in _APPRAISAL.finditer(sentence):
            a, b = m.group("a").lower(), (m.group("b") or "").lower()
            if a not in APPRAISALS:
                continue
            present = m.group("tense").strip().lower() in ("'s", "is", "feels")
            if present and not _OWN.search(sentence):
                continue
            end = m.end() if b in APPRAISALS else m.end("noun") if m.group("noun") else m.end("a")
            out.append(re.sub(r"\s+", " ", sentence[m.start() : end]).lower())
        m = _DASHED.search(sentence)
        if m and m.group("a").lower() in APPRAISALS and _OWN.search(sentence[: m.start()]):
            out.append(re.sub(r"\s+", " ", sentence[m.start() :].strip(" -\u2013\u2014!.")).lower())
    return out


def loves(statement: str) -> list[str]:
    """What the speaker says they love, enjoy, hate or miss ("love helping the community"), at most
    ``LOVED_WORDS`` words, cut at the next clause."""
    out = []
    for m in _LOVE.finditer(statement.replace("\u2019", "'")):
        words = m.group("what").split()
        words = _to_clause_end(words, _CLAUSE_WORDS - {"and", "or"})  # "love reading and hiking"
        # "love it" says nothing of what "it" is
        if words and not _refers_back(words, within=1) and not re.search(r"\byou(?:r)?\b", " ".join(words), re.I):
            out.append(f"{m.group('v').lower()} {' '.join(words[:LOVED_WORDS])}")
    return out


def listeners_news(sentence: str) -> bool:
    """Whether a sentence's first person only reacts to the listener's news: "I'm so proud of you
    for spreading awareness", "I'm glad to hear you've got help" (its feeling is about them)."""
    sentence = sentence.replace("\u2019", "'")
    found = False
    for m in _FEELING.finditer(sentence):
        after = _next_words(sentence, m.end())
        if m.group("a").lower() not in FEELINGS | {"good", "sorry"}:
            continue
        if not _ABOUT_LISTENER.intersection(after):
            return False  # a feeling of their own
        found = True
    if not found:
        return False
    rest = _FEELING.sub("", sentence)
    return not re.search(r"\b(?:I|me|my|mine|myself)\b", rest)


def intentions(statement: str) -> list[str]:
    """The plans a first-person statement states ("apply at the bank"), at most
    ``INTENTION_WORDS`` words each."""
    out = []
    statement = statement.replace("\u2019", "'")
    for m in _INTENT.finditer(statement):
        window = statement[max(0, m.start() - 32) : m.start()]
        reported = _REPORTED.search(window)
        if reported and (reported.group("passive") or not _OWN_REPORT.search(window[: reported.start()])):
            continue  # "Lena thinks I should visit him every day" is Lena's plan for them
        words = _HEDGES.sub("", m.group("what").strip()).split()
        what = " ".join(_to_clause_end(words, _CLAUSE_WORDS))
        if (m.group("how") or m.group("we") or m.group("bare") or "").lower() == "going to" and _PLACE.match(what):
            what = f"go to {what}"
        words = what.split()
        if (
            len(words) < 2
            or _NOT_PLANS.match(what)
            or (_refers_back(words) and _says_no_more(words))
            or re.search(r"\byou(?:r)?\b", what, re.IGNORECASE)
        ):
            continue
        out.append(" ".join(words[:INTENTION_WORDS]))
    return list(dict.fromkeys(out))


# The people a speaker names by how they stand to them ("my husband and kids", "my best friend",
# "our coach"): the relations the affect anchor keeps. The 1.5B leaves them out (2 of 186 dev
# units have any), and a copy of a turn has none.
RELATIONS = frozenset(
    """
    mom mum mother dad father parents parent brother brothers sister sisters siblings sibling son sons
    daughter daughters kids kid children child baby husband wife partner spouse girlfriend boyfriend
    fiance fiancee family fam grandma grandmother grandpa grandfather grandparents grandkids grandson
    granddaughter aunt uncle cousin cousins niece nephew stepmom stepdad stepmother stepfather stepson
    stepdaughter stepbrother stepsister friend friends bff buddy buddies teammates teammate team coach
    boss coworker coworkers colleague colleagues mentor mentors therapist counselor neighbor neighbors
    neighbour neighbours roommate roommates classmates classmate students teacher ex in-laws
    """.split()
)
# "ex-wife", "mother-in-law": a relation with the prefix or suffix of another tie
_TIE = re.compile(r"^(?:ex-)?(?P<base>[a-z]+)(?:-in-law)?$")
_WORD_OF_TIE = r"(?P<who>[a-z]+(?:-[a-z]+)*)(?!\w|-[a-z])"
# what may stand before it ("my late father", "my best friend"); "own" and "whole" are not kept
_RELATION = re.compile(
    r"\b(?:my|our)\s+(?P<how>(?:(?:best|little|younger|older|big|late|new|old|own|whole|closest|dear)\s+){0,2})"
    + _WORD_OF_TIE,
    re.IGNORECASE,
)
# the rest of a list it opens: "my husband and kids", "my friends, family and mentors"
# (a joint only at the start of a run of spaces: a search over many spaces stays linear)
_LISTED = re.compile(r"(?<!\s)\s*(?:,\s*(?:and\s+)?|and\s+|&\s*)" + _WORD_OF_TIE, re.IGNORECASE)
# "Thanks my friend!", "Good luck, my friend.": the listener addressed, not a friend told of
_ADDRESSED = frozenset({"friend", "friends", "buddy", "buddies", "bff"})
_ADDRESS_LEAD = re.compile(
    r"(?:[,.!?]|\b(?:thanks|thank you|hey|hi|hello|bye|luck|safe|well|care|love you|cheers))\s*$", re.I
)
_ENDS_HERE = re.compile(r"\s*(?:[,.!?]|$)")
RELATIONS_KEPT = 3


def _tie(word: str) -> str | None:
    word = word.lower()
    m = _TIE.match(word)
    return word if word in RELATIONS or (m and m.group("base") in RELATIONS) else None


def relations(statement: str) -> list[str]:
    """The people a first-person statement names by their relation to the speaker, as said
    ("husband", "best friend", "mother-in-law"), in order, at most ``RELATIONS_KEPT``; the
    possessor is the speaker's ("my best friend's mom" names the best friend)."""
    out = []
    statement = statement.replace("\u2019", "'")
    for m in _RELATION.finditer(statement):
        who = _tie(m.group("who"))
        if who is None:
            continue
        if who in _ADDRESSED and _ENDS_HERE.match(statement, m.end()) and _ADDRESS_LEAD.search(statement, 0, m.start()):
            continue
        how = " ".join(w for w in m.group("how").lower().split() if w not in ("own", "whole"))
        out.append(f"{how} {who}".strip())
        at = m.end()
        while (n := _LISTED.match(statement, at)) and (more := _tie(n.group("who"))):
            out.append(more)
            at = n.end()
    return list(dict.fromkeys(out))[:RELATIONS_KEPT]
