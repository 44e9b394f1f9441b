"""Lexical checks that a model's text is about the dialogue it cites.

Small models echo the worked examples of the prompts (the 0.5B wrote "Maya unpacked one room a
day", the longitudinal prompt's example with the name swapped) or copy one fact into every slot.
A text that shares no content word with its sources, once names are set aside, is not about them.
"""

from __future__ import annotations

import re

from ...text.english_sentences import DASH_BREAK, sentences

STOPWORDS = frozenset(
    """about after again also been before being could didn does doing done from have having into
just like maybe more much only really should some still than that them then there they this very want were what
when where which will with would your""".split()
)


def content_words(text: str, names: tuple[str, ...] | list[str] = ()) -> set[str]:
    """Lower-case words of four letters or more, possessives trimmed, without stopwords and names."""
    words = {w.removesuffix("'s") for w in re.findall(r"[a-z']{4,}", text.lower())} - STOPWORDS
    return words - {n.lower() for name in names for n in name.split()}


def shares_content(text: str, sources: list[str], names: tuple[str, ...] | list[str] = ()) -> bool:
    return bool(content_words(text, names) & content_words(" ".join(sources), names))


# Anchors and speakers -----------------------------------------------------------------------


def _stems(text: str, names: tuple[str, ...] | list[str] = ()) -> set[str]:
    """Crude stems (first five letters) of the words of three letters or more, names aside:
    "stressed" and "stress", "excited" and "excitement" meet; "sad" counts."""
    skip = {n.lower() for name in names for n in name.split()}
    words = {w.removesuffix("'s") for w in re.findall(r"[a-z']{3,}", text.lower())}
    return {w[:5] for w in words - STOPWORDS - skip - _FUNCTION_WORDS}


_FUNCTION_WORDS = frozenset(
    """the and for but not you are was his her its our out has had who how why can all any
she him they them their theirs our ours yes okay""".split()
)


def support(text: str, sources: list[str], names: tuple[str, ...] | list[str] = ()) -> float:
    """The share of a fact's word stems (names aside) found in its sources."""
    mine = _stems(text, names)
    return len(mine & _stems(" ".join(sources), names)) / len(mine) if mine else 1.0


_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b")


def first_person(text: str) -> bool:
    return bool(_FIRST_PERSON.search(text))


def best_turn(text: str, turns: list, names: tuple[str, ...] | list[str] = ()):
    """The turn whose words a fact carries: the most shared stems; on a tie the turn with more of
    them outside its questions and small talk ("Melanie was inspired by the stories" ties
    Melanie's "Did you hear any inspiring stories?" with Caroline's "The stories were so
    inspiring!"), then the first."""
    mine = _stems(text, names)
    best, best_score = None, (0, 0)
    for turn in turns:
        shared = mine & _stems(turn.text, names)
        score = (len(shared), len(shared & _stems(stated(turn.text), names)))
        if score[0] and score > best_score:
            best, best_score = turn, score
    return best


def subject(text: str, speakers: list[str]) -> str | None:
    """The speaker a fact starts with ("Caroline's plan ..." -> Caroline), if any."""
    for name in speakers:
        if name and re.match(rf"\s*{re.escape(name)}\b", text):
            return name
    return None


_ASKS = re.compile(r"\b(ask|asks|asked|asking|wonders?|wondered|wondering|inquired|questioned)\b", re.IGNORECASE)


def misattributed(text: str, turns: list, speakers: list[str]) -> tuple[str, str] | None:
    """(written subject, true speaker) when a fact starts with one speaker's name but carries
    another speaker's words that do not name the subject and speak of the speaker: in the first
    person, or without addressing the listener ("Researching adoption agencies - it's been a
    dream" by Caroline; "You're so brave" by Melanie may be about Caroline); else None."""
    who = subject(text, speakers)
    if who is None or _pair(text, speakers) is not None:  # "A and B ...": joint_subject's case
        return None
    turn = best_turn(text, turns, speakers)
    if turn is None or not turn.speaker or turn.speaker == who or turn.speaker not in speakers:
        return None
    # A fact that is not about asking rests on what turns state: words it shares with one turn's
    # question and another's statement ("Audrey adopted Pixie last time": Audrey's "We adopted
    # another puppy called Pixie", Andrew's "Did you check out that spot we talked about last
    # time?") leave the teller unsettled. "Audrey asked Andrew if Pixie had settled in" is the asker's.
    if not _ASKS.search(text):
        told = best_turn(text, [t.model_copy(update={"text": stated(t.text)}) for t in turns], speakers)
        if told is not None and told.idx != turn.idx:
            return None
    if re.search(rf"\b{re.escape(who)}\b", unaddressed(turn.text, who)):
        return None
    # Second person may be about the listener: when the turn has no first person, or when it is
    # addressed to the subject ("Caroline, I'm so proud of your plans!"); "Thanks, Caroline!
    # Painting's a fun way to express my feelings" is still the speaker's own. A question ("Hey
    # Audrey! I started a new job ... How about you?") tells nothing of the listener.
    if _YOU.search(stated(turn.text)) and (not first_person(turn.text) or addressed(turn.text, who)):
        return None
    return who, turn.speaker


_INTERJECTION = (
    r"(?:hey|hi|hello|thanks|thank you|wow|yeah|yes|yep|yup|oh|aww?|sorry|congrats|congratulations|haha"
    r"|okay|ok|well|sure|agreed?|totally agree)"
)


_PUNCT = ".!?,;:"
_INTERJECTION_END = re.compile(rf"\b{_INTERJECTION}\Z", re.IGNORECASE)


def _addresses(text: str, name: str) -> list[tuple[int, int, int]]:
    """(start, end of the lead, end) of each place ``name`` is a form of address: after the start
    of a line, a punctuation mark or an interjection (the lead: "Thanks, Caroline!", "Caroline,
    look"), then spaces and at most one comma; before a punctuation mark or a line's end, the
    spaces between included. The regex this replaces, ``(^|[.!?,;:]|\bINTERJECTION)\\s*,?\\s*NAME
    \\s*(?=[,!.?;:]|$)`` with re.M, took cubic time on a turn of blank lines (11 s for 2,000); this
    finds the name and looks around it, each character looked at a bounded number of times, and
    gives the same (leftmost) matches."""
    found, done = [], 0
    for m in re.finditer(f"(?={re.escape(name)})", text, re.IGNORECASE):
        at, after = m.start(), m.start() + len(name)
        if not name or at < done:
            continue
        lead = _lead(text, at, done)
        if lead is None:
            continue
        end = after
        while end < len(text) and text[end].isspace():
            end += 1
        if end < len(text) and text[end] not in _PUNCT:
            end = text.rfind("\n", after, end)  # $ before a newline (re.M); -1 when there is none
            if end < 0:
                continue
        found.append((*lead, end))
        done = end
    return found


def _lead(text: str, at: int, done: int) -> tuple[int, int] | None:
    """Where the leftmost match ending in the name at ``at`` starts and its lead ends (not before
    ``done``, the end of the previous match), or None."""
    k = at
    while k > done and text[k - 1].isspace():
        k -= 1
    if k > done and text[k - 1] == ",":
        k -= 1
        while k > done and text[k - 1].isspace():
            k -= 1
    # The lead ends at k, or at a comma or newline between k and the name; on a tie the regex's
    # order of alternatives (line start, punctuation, interjection) decides.
    starts = []
    interjection = _INTERJECTION_END.search(text, max(done, k - 30), k)
    if interjection:
        starts.append((interjection.start(), k))
    if k > done and text[k - 1] in _PUNCT:
        starts.append((k - 1, k))
    if k == 0 or text[k - 1] == "\n":
        starts.append((k, k))
    newline, comma = text.find("\n", k, at), text.find(",", k, at)
    if newline >= 0:
        starts.append((newline + 1, newline + 1))
    if comma >= 0:
        starts.append((comma, comma + 1))
    return min(starts, key=lambda s: s[0]) if starts else None


def addressed(text: str, name: str) -> bool:
    return bool(_addresses(text, name))


def unaddressed(text: str, name: str) -> str:
    """``text`` without ``name`` where it only addresses the listener."""
    out, last = [], 0
    for start, lead_end, end in _addresses(text, name):
        out += [text[last:start], text[start:lead_end], " "]
        last = end
    return "".join(out) + text[last:]


_WE = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|we|we're|we've|us|our|ours)\b", re.IGNORECASE)


def of_self(text: str) -> bool:
    """Whether the words name their speaker or the speaker's own ("I", "my", "we", "our"...)."""
    return bool(_WE.search(text))


def _pair(text: str, speakers: list[str]) -> re.Match | None:
    """The match of a fact starting with two speakers joined ("John and Maria ...")."""
    names = "|".join(re.escape(s) for s in speakers if s)
    match = re.match(rf"\s*({names})\s+and\s+({names})\b", text) if names else None
    return None if match is None or match.group(1) == match.group(2) else match


def joint_subject(text: str, turns: list, speakers: list[str]) -> tuple[str, str] | None:
    """(teller, listener) when a fact starts with two speakers joined ("John and Maria shared a
    photo of their dinner") but only the teller's turns say it in the first person: the other
    speaker only answered ("Looks delicious!"). Each speaker's own first-person turns in the span
    must share two word stems with the fact (names aside) for both to stay its subject."""
    match = _pair(text, speakers)
    if match is None:
        return None
    mine = _stems(text, speakers)

    def tells(name: str) -> bool:
        return any(
            t.speaker == name and _WE.search(t.text) and len(mine & _stems(t.text, speakers)) >= 2 for t in turns
        )

    a, b = match.group(1), match.group(2)
    if tells(a) and not tells(b):
        return a, b
    if tells(b) and not tells(a):
        return b, a
    return None


_PLURAL_VERB = {"are": "is", "were": "was", "have": "has", "do": "does"}


def sole_subject(text: str, teller: str, listener: str) -> str:
    """``text`` with its joint subject ("A and B", either order) reduced to ``teller``, the verb
    right after it made singular ("John and Maria are" -> "John is")."""
    pair = rf"(?:{re.escape(teller)}\s+and\s+{re.escape(listener)}|{re.escape(listener)}\s+and\s+{re.escape(teller)})"
    match = re.match(rf"\s*{pair}\b", text)
    if match is None:
        return text
    rest = text[match.end() :]
    verb = re.match(r"\s+(\w+)", rest)
    if verb and verb.group(1) in _PLURAL_VERB:
        rest = rest[: verb.start(1)] + _PLURAL_VERB[verb.group(1)] + rest[verb.end(1) :]
    return teller + rest


# Small talk -----------------------------------------------------------------------------------

# The words of greetings, thanks, praise and agreement: a sentence of only these (and names) holds
# nothing to remember ("Hey Mel! Good to see you!", "Wow, John! That's amazing news.").
_PHATIC = frozenset(
    """hey hi hello hiya yo wow whoa woah oh ooh aww aw omg yay yeah yes yep yup ok okay sure
thanks thank you so good great nice awesome amazing cool glad happy to see hear that that's it it's this is was
what's up how how's are doing long time no news sounds congrats congratulations lovely wonderful fantastic
incredible really too me i i'm love agree totally absolutely haha lol again well done proud of for your you're
such a an the and all right alright true exactly definitely indeed super going doing hope hopefully bye later
care take talk soon catch you'll be fine sweet much very lot""".split()
)


def small_talk(sentence: str) -> bool:
    """Whether a sentence is only greeting, thanks, praise or agreement. Capitalised words after
    the first are taken for names ("Hey Mel!")."""
    words = re.findall(r"[A-Za-z']+", sentence)
    rest = [w.lower() for i, w in enumerate(words) if i == 0 or not w[0].isupper() or w in ("I", "I'm")]
    return all(w in _PHATIC for w in rest)


# Encouragement, and reactions to what the listener shows or tells: "Let's keep going!", "Keep it
# up!", "We got this!", "Wow, they look great!", "It must have been great to be involved."
_CHEER = re.compile(
    r"^(?:(?:wow|whoa|woah|oh|ooh|yeah|yes|yep|aww|haha|well|and|so|but|ok|okay|hey)\b[,!.]?\s+)*"
    r"(?:let's(?! see\b)|let us|keep (?:it up|going|pushing|at it|up the)|stay (?:positive|motivated|strong)|hang in|push through|"
    r"don't give up|never give up|go for it|way to go|we got this|we've got this|we can do (?:it|this)|"
    r"we'll (?:make it|get through)|cherish|good luck|what an?\b|"
    # a reaction to what the listener showed or told ("Wow, they look great!"), not "He looks so
    # tired these days" about someone else
    r"(?:it|that|this|those|these) (?:look|looks|sound|sounds|must have been|must've been)\b"
    r"|(?:looks|sounds) (?:great|good|amazing|awesome|fun|cool|lovely|delicious|delish|like an?)\b"
    r"|(?:they|he|she) (?:look|looks|sound|sounds) (?:so |really )?"
    r"(?:great|good|amazing|awesome|fun|cool|lovely|happy|cute|beautiful|graceful)\b"
    r"|must have been\b|must've been\b)",
    re.IGNORECASE,
)


# Offers and farewells, "I" or not: "Let me know if you need tips!", "Talk to you soon!"
_SIGN_OFF = re.compile(
    r"^(?:(?:well|ok|okay|anyway|alright|yeah|thanks|thank you|definitely|totally|absolutely)\b[,!.]?\s+)*"
    r"(?:let me know|feel free to|talk (?:to you )?(?:soon|later)|see (?:you|ya)|catch (?:you|ya)|bye|goodbye|"
    r"take care|have (?:a|an) (?:great|good|nice|awesome|fun|lovely|wonderful)|enjoy (?:your|the rest)|"
    # asking to hear the listener's news, or to join them ("Keep me posted on how it goes!", "Count me
    # in, John!"; not "Count me in for my sister's fundraiser"), agreeing ("I couldn't agree more!")
    r"keep me (?:posted|updated|in the loop)|count me in(?=[\s,]*(?:[A-Z][\w'-]*)?[\s.!]*$)|(?:i )?couldn't agree more)\b",
    re.IGNORECASE,
)


# Support promised to the listener, and waiting for their news: "I'm always here to support you!",
# "I got your back", "Can't wait to see it done!", "I'll let you know."
_SUPPORT = re.compile(
    r"\b(?:i'm|i am) (?:always |just )?here (?:for you|to (?:support|help) you)\b|\bi(?:'ve)? got your back\b"
    # waiting for the listener's news, in a short sentence ("Can't wait to see it done!"; not "I can't
    # wait to see how it goes at my new job", news of the speaker's own)
    r"|^(?:\w+[,!]?\s+)?(?:i )?can(?:'t| ?not) wait to (?:see|hear)(?: about)? (?:it|them|that|this|you|where you|what you)"
    r"(?:\s+\w+){0,3}[.!]*$"
    # ("I'll let you know how it goes"; not "I'll let you know when the baby arrives, due in May")
    r"|^(?:i'll|i will) (?:definitely |surely |for sure |totally )?(?:let you know|keep you (?:posted|updated))"
    r"(?:\s+(?:how|what|if|when)(?:\s+[\w']+){0,4})?[\s.!]*$",
    re.IGNORECASE,
)


# Thanks and wishes to the listener, in a sentence of their own: "Thanks for the suggestion!",
# "Appreciate your kind words.", "All the best!", "Have fun hiking!", "Ttyl, bye!" (without "I":
# "Thanks for asking, I'm doing better" is news). Thanks are for what the listener gave in the
# conversation: "Thanks for coming to Mom's funeral" tells of the funeral.
_THANKS_OR_WISH = re.compile(
    r"^(?:(?:wow|oh|yeah|yes|yep|aww|well|ok|okay|hey|so|and|cheers)\b[,!.]?\s+)*"
    r"(?:(?:thanks|thank you)(?: (?:so much|very much|a lot|a bunch|a ton))?"
    r"(?: for (?:the |your |this |that |all )?(?:\w+ ){0,2}(?:suggestions?|advice|tips?|info|information|words|"
    r"support|help|asking|listening|sharing|offer|chat|talk|encouragement|recommendations?))?"
    r"|appreciate (?:it|that|this|the|your|you)(?:\s+[\w'-]+){0,3}"
    r"|all the best|enjoy(?:\s+[\w'-]+){0,4}|have fun(?:\s+[\w'-]+){0,4}|ttyl(?:[\s,.!]+bye)?)[\s,.!]*$",
    re.IGNORECASE,
)

# praise words: a bare exclamation of one is a reaction (``reaction``)
_PRAISE = (
    r"(?:great|good|nice|cool|awesome|amazing|lovely|beautiful|adorable|cute|wonderful|fantastic|incredible|"
    r"impressive|gorgeous|stunning|sweet|brilliant|perfect|chill|inspiring|fun|delicious|yummy|kind|thoughtful)"
)
_OH = r"(?:(?:wow|whoa|woah|oh|ooh|aww+|ah|yeah|yes|yep|haha|omg|and|but)\b[,!.]?\s+)*"
_EXCLAIMED = re.compile(
    rf"^{_OH}(?:(?:so|such|what|really|super|very)\s+)*(?:an?\s+)?{_PRAISE}(?:\s+[\w'-]+){{0,2}}[\s,.!]*$",
    re.IGNORECASE,
)
# Reactions that open a short sentence of one clause (below): "Congrats on the new job!", "Sorry
# to hear that.", "It must be tough.", "That's a great goal!", "That charity race sounds great,
# Mel!"; not "Sorry to hear that, Dad is back in hospital", "That was an amazing concert" (their
# own), "This new job is great so far".
_REACTION = re.compile(
    # "Wow, sounds like they make life so awesome!": what the listener told, heard back (not "Sounds
    # like Dad will be discharged on Friday", news of someone named)
    rf"^{_OH}(?:sounds like(?!\s+(?-i:[A-Z]))|congrats|congratulations|(?:so )?sorry to hear|love (?:that|this|those|these)\b|that makes sense|"
    r"(?:good|glad) to (?:know|hear)|(?:it|that|this) means? (?:a lot|so much)\b|"
    r"(?:it |that )?must be (?:so |really )?(?:tough|hard|rough|awful|scary|great|awesome|amazing|fun|nice|cool|"
    r"lovely|exciting)\b"
    r"|(?:(?:that|those)(?:\s+[\w'-]+){0,3}?(?:'s|\s+(?:is|are|looks?|sounds?|seems?))|(?:this|these)(?:'s|\s+(?:is|are|looks?|sounds?|seems?)))"
    rf"\s+(?:(?:so|really|super|totally|both|such|pretty|very)\s+)*(?:an?\s+)?{_PRAISE}\b)",
    re.IGNORECASE,
)
# The listener's experience imagined, at any length: "Nice, spotting pretty birds while hiking must
# be great.", "Must be tough living in the city without the opportunity to go outside." (on dev
# LoCoMo turns every "must be" or "must have been" with a judgement and without "I" or "we", eight,
# answered the listener's news)
_IMAGINED = re.compile(
    r"\bmust(?: be|'ve been| have been)\s+(?:(?:so|really|super|such|pretty|very|quite)\s+)*"
    r"(?:an?\s+(?:(?:so|really|super|pretty|very)\s+)*)?"
    rf"(?:{_PRAISE}|tough|hard|rough|awful|scary|difficult|stressful|exhausting|painful|overwhelming|frustrating|"
    r"exciting|heartbreaking)\b",
    re.IGNORECASE,
)
# what starts another clause: a comma, colon or dash, or a conjunction
_BREAK = rf"[,;:\u2013\u2014]|{DASH_BREAK}"
_CONJUNCTION = r"\b(?:and|but|so|because|since|though|although|when|if|after|before|or)"
_ANOTHER_CLAUSE = re.compile(rf"{_BREAK}|{_CONJUNCTION}\b", re.IGNORECASE)
_INTERJECTED = re.compile(r"^[\w']+[,!]\s+")  # "Nice, ...", "Wow! ..."
# what may follow a reaction's opening: more words of one clause, or the listener's name after a
# comma ("..., Mel!"); case-sensitive, for the name
_ONE_CLAUSE = re.compile(r"^[^,;:\u2013\u2014]*?(?:,\s*[A-Z][\w'-]*)?[\s.!]*$")
REACTION_WORDS = 10


def reaction(sentence: str) -> bool:
    """Whether a sentence without "I" or "we" only praises or sympathises with what the listener
    showed or told: "Cool setup!", "Wow, that photo is great!", "Congrats on the new job!",
    "Sorry to hear that.", "Having a second family through sport must be such a great feeling"
    (dev LoCoMo turns, where a copy made of them was a unit of nothing its speaker did or felt).
    Praise words make a bare exclamation one; "Sad but good." is a feeling."""
    if _WE.search(sentence):
        return False
    if _EXCLAIMED.match(sentence):
        return True
    # one clause, an opening interjection aside: "Dad is still in hospital, it must be hard on Mom"
    # and "The exam must have been hard because everyone failed" are news
    if _IMAGINED.search(sentence) and not _ANOTHER_CLAUSE.search(_INTERJECTED.sub("", sentence, count=1)):
        return True
    m = _REACTION.match(sentence)
    return bool(m) and len(sentence.split()) <= REACTION_WORDS and bool(_ONE_CLAUSE.match(sentence[m.end() :]))


def cheer(sentence: str) -> bool:
    """Whether a sentence only encourages the listener, reacts to what they showed or told,
    thanks them or wishes them well (all without "I": "Let's go, I start tomorrow" is the
    speaker's news), offers help, promises support or to keep them posted, waits for their news,
    says goodbye, or praises or sympathises with what they showed or told (``reaction``), thanks
    opening it or not."""
    # one space between words: the openings' loops give back a long run of spaces one at a time
    sentence = " ".join(sentence.replace("\u2019", "'").split())
    if _SIGN_OFF.match(sentence) or _SUPPORT.search(sentence):
        return True
    if first_person(sentence):
        return False
    rest = _THANKED.sub("", sentence)  # "Thank you so much, that's really kind."
    return any(reaction(s) or _CHEER.match(s) or _THANKS_OR_WISH.match(s) for s in {sentence, rest} if s)


_YOU = re.compile(r"\b(you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.IGNORECASE)


# Thanks that open a sentence of news: "Thank you, it really helped to talk." tells how the
# talk went; its "you" is the thanks'.
_THANKED = re.compile(
    r"^(?:thanks|thank you)(?: (?:so|very) much)?(?:,?\s+[A-Z][\w'-]*)?(?: for(?: [\w'-]+){1,3})?[,;:!.]+\s+",
    re.IGNORECASE,
)


# An "I" that only leads into what a sentence says of the listener: "I hope you find the perfect
# dog-friendly spot soon so you can make new memories with them", "I bet their happy faces mean a
# lot to you", "I can't wait to see where you and your furry friend decide to hang out" (dev LoCoMo
# copies; "That's awesome, I'm glad they bring so much joy into your life"); "I hope you can help
# me talk to my dad" has more of the speaker in it.
_LEADS_TO_YOU = re.compile(
    r"^(?P<before>(?:[\w']+\s+){0,2}[\w']+[,!]\s+)?i(?:'m| am)?\s+(?:really |just |truly |totally |so )?"
    r"(?:hope|bet|think|guess|believe|know|sure|glad|can(?:'t| ?not) wait to (?:see|hear)|can imagine)(?: that)?\s+",
    re.IGNORECASE,
)
# what after such a lead is more than the listener: a clause of its own ("I think you're right, it's
# hard to say goodbye", "... and it's hard"), or someone or somewhere named ("I guess you heard Mel
# got married", "I can't wait to see you at Gina's wedding in June")
_MORE_THAN_YOU = re.compile(
    rf"{_BREAK}|{_CONJUNCTION}\s+"
    r"(?:i|i'm|we|we're|it|it's|he|he's|she|she's|they|they're|there|that|this)\b"
    r"|(?-i:\b[A-Z][a-z])",
    re.IGNORECASE,
)


def to_listener(sentence: str, listeners: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether a sentence speaks of the listener and not of the speaker, without first person
    singular (beyond a lead such as "I hope" or "I bet" into one clause about the listener alone):
    in the second person ("You're doing an awesome job looking after your family!", "I hope you
    find a great spot soon!") or addressing one of ``listeners`` by name ("Wow, John, that
    playground looks cool!")."""
    sentence = " ".join(sentence.replace("\u2019", "'").split())
    lead = _LEADS_TO_YOU.match(sentence)
    if lead:
        # nothing more of the speaker before or after the lead ("After my surgery, I hope you can
        # visit", "I hope we can visit you in May"), and nothing more than the listener after it
        rest = sentence[lead.end() :]
        if _WE.search(lead.group("before") or "") or _WE.search(rest) or _MORE_THAN_YOU.search(rest):
            return False
        sentence = rest
    if first_person(sentence):
        return False
    sentence = _THANKED.sub("", sentence)
    return bool(_YOU.search(sentence)) or any(addressed(sentence, name) for name in set(listeners))


def saying(text: str) -> list[str]:
    """A turn's sentences that may hold a fact: no questions, no small talk."""
    return [s for s in sentences(text) if not s.rstrip().endswith("?") and not small_talk(s)]


def stated(text: str) -> str:
    """A turn's ``saying`` sentences as one text."""
    return " ".join(saying(text))


def swap_names(text: str, a: str, b: str) -> str:
    """``text`` with the names ``a`` and ``b`` exchanged."""
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m.group(1) == a else a, text)
