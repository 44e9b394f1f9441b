"""Fact-Time-Affect unit extraction: one call per fragment, with the partial units carried from
the previous fragment as incomplete memory, then local fusion.

Beyond the paper's schema, each candidate says which carried unit it ``completes`` (an enum of
the carried units' keys, or "none") so that fusion is decided by the model and checked here;
``event_time_expression`` keeps the time as said and ``relation_cues`` fills the affect anchor.

Event times: a relative expression the resolver in ``temporal`` knows is resolved against the
session date (preferred over the model's own date); otherwise the model's ISO date is kept; else
"unknown". The expression itself is kept either way.

Evidence spans are clipped to the fragment; a span wholly outside it is replaced by the whole
fragment (the unit was written from those turns), so no unit ever cites turns it was not built from.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model

from .repairs.grounding import (
    best_turn,
    cheer,
    first_person,
    of_self,
    saying,
    support,
    to_listener,
)
from ..loaders.locomo import without_caption
from ..text import english_feelings, english_time
from ..text.english_sentences import sentences, untagged
from ..models import (
    AffectAnchor,
    Completion,
    ContentType,
    Evidence,
    FactAnchor,
    FTAUnit,
    Short,
    Statement,
    TimeAnchor,
    STATEMENT_CHARS,
    TimeOrientation,
    Turn,
    statement,
)
from .temporal import is_resolved, resolve, session_date


class ContentOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: Statement
    participants: list[Short] = Field(max_length=8)
    emotion_or_state: Short
    intention_or_plan: Short
    relation_cues: Short


class UnitOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    completes: str = "none"
    summary: Short
    content_type: ContentType
    time_orientation: TimeOrientation
    event_time_expression: Short
    event_time: Short
    content: ContentOut
    evidence_turn_span: list[int] = Field(min_length=2, max_length=2)
    status: Completion


class ExtractionReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_units: list[UnitOut]


MAX_UNITS = 10  # per fragment; bounds a model that loops


def _unit_model(name: str, completes: Any, fact_chars: int) -> type[UnitOut]:
    """UnitOut whose ``completes`` is ``completes`` and whose fact holds at most ``fact_chars``
    characters (setting ``fact_max_chars``)."""
    content = create_model("ContentOut", __base__=ContentOut, text=(statement(fact_chars), ...))
    return create_model(name, __base__=UnitOut, completes=(completes, "none"), content=(content, ...))


def reply_model(
    carried_keys: list[str],
    at_least_one: bool | int = False,
    fact_chars: int = STATEMENT_CHARS,
) -> type[ExtractionReply]:
    """The reply schema for one call: ``completes`` may only name a carried unit or "none".

    ``at_least_one`` (or a number) forbids a shorter list: small models answer a substantive
    fragment with ``[]`` when the schema allows it (seen with Qwen2.5-1.5B on the sample case),
    and the 1.5B wrote one unit for eleven LoCoMo turns holding three situations.
    """
    allowed = Literal[tuple(["none", *carried_keys])]  # type: ignore[valid-type]
    unit = _unit_model("UnitOut", allowed, fact_chars)
    units = Field(..., min_length=min(int(at_least_one), MAX_UNITS), max_length=MAX_UNITS)
    return create_model("ExtractionReply", __base__=ExtractionReply, memory_units=(list[unit], units))


def min_units(turns: list[Turn], turn_words: int, turns_per_unit: int) -> int:
    """The fewest units a fragment's reply may hold: one per ``turns_per_unit`` of the person's
    turns of at least ``turn_words`` words, and one where the person says that many words in all
    ("I'm distraught", "my girlfriend has left me"); none where they say fewer ("yes", "okay"),
    and none at all with 0 (the paper: the model may return none)."""
    own = [t for t in turns if t.role != "assistant"]
    if not turns_per_unit or sum(len(t.text.split()) for t in own) < turn_words:
        return 0
    return max(1, sum(1 for t in own if len(t.text.split()) >= turn_words) // turns_per_unit)


@dataclass
class Fragment:
    case_id: str
    session_id: int
    turns: list[Turn]
    session_time: str | None

    @property
    def start(self) -> int:
        return self.turns[0].idx

    @property
    def end(self) -> int:
        return self.turns[-1].idx


_FIRST_PERSON = [
    (r"\bI'm\b", "{n} is"),
    (r"\bI am\b", "{n} is"),
    (r"\bI've\b", "{n} has"),
    (r"\bI'd\b", "{n} would"),
    (r"\bI'll\b", "{n} will"),
    (r"\bI\b", "{n}"),
    (r"\bmy\b", "{n}'s"),
    (r"\bMy\b", "{n}'s"),
    (r"\bmyself\b", "themselves"),
    (r"\bme\b", "{n}"),
]


def third_person(text: str, name: str) -> str:
    """Small models still copy first-person turns into facts; name the speaker instead. A word
    joined by a hyphen stays ("some me-time", not "Melanie-time")."""
    for pattern, replacement in _FIRST_PERSON:
        text = re.sub(rf"(?<!-){pattern}(?!-)", replacement.format(n=name), text)
    return text


def _sole_speaker(turns: list[Turn]) -> str | None:
    """The one person speaking (not the assistant) in these turns, if there is exactly one."""
    names = {t.speaker for t in turns if t.role != "assistant" and t.speaker}
    return names.pop() if len(names) == 1 else None


# The content types: a feeling, intention or relation written as one ("homework or plan", twice
# among the 1.5B's dev units) echoes the schema, not the turns. Not the time labels: "mixed" may
# be a feeling.
_LABELS = {v.replace("_", " ") for v in get_args(ContentType)}


def _anchor(value: str) -> str:
    text = value.strip()
    return "unknown" if not text or " ".join(re.findall(r"[a-z]+", text.lower())) in _LABELS else text


def to_unit(out: UnitOut, fragment: Fragment) -> FTAUnit:
    """A candidate unit from the model's reply, with its evidence kept inside the fragment and
    its event time checked (or resolved from the expression relative to the session date)."""
    first, last = sorted(out.evidence_turn_span)
    first, last = max(first, fragment.start), min(last, fragment.end)
    if first > last:
        first, last = fragment.start, fragment.end
    text = out.content.text.strip()
    span = [t for t in fragment.turns if first <= t.idx <= last]
    speaker = _sole_speaker(span)
    if speaker is None and first_person(text):
        # Two people speak in the span (a peer dialogue): "I" is whoever said these words.
        turn = best_turn(text, [t for t in span if t.role != "assistant"])
        speaker = turn.speaker if turn is not None else None
    if speaker:
        text = third_person(text, speaker)
    anchor = session_date(fragment.session_time)
    expression = out.event_time_expression.strip()
    # The resolver is exact for the expressions it knows; small models miscount weekdays.
    event_time = (
        resolve(expression, anchor, out.time_orientation)
        or (out.event_time.strip() if is_resolved(out.event_time.strip()) else None)
        or resolve(out.event_time, anchor, out.time_orientation)
        or "unknown"
    )
    if out.status == "pending":
        lifecycle = "pending"
    elif out.status == "complete":
        lifecycle = "completed" if out.time_orientation == "past" else "unknown"
    else:
        lifecycle = "unknown"
    return FTAUnit(
        case_id=fragment.case_id,
        fact=FactAnchor(
            text=text,
            summary=out.summary.strip(),
            content_type=out.content_type,
            participants=[p.strip() for p in out.content.participants if p.strip()],
        ),
        time=TimeAnchor(
            dialogue_time=fragment.session_time,
            event_time=event_time,
            event_time_expression=expression if expression.lower() != "unknown" else "",
            time_orientation=out.time_orientation,
            completion=out.status,
        ),
        affect=AffectAnchor(
            emotion_or_state=_anchor(out.content.emotion_or_state),
            intention_or_plan=_anchor(out.content.intention_or_plan),
            relation_cues=_anchor(out.content.relation_cues),
        ),
        evidence=Evidence(session_id=fragment.session_id, start=first, end=last, dialogue_time=fragment.session_time),
        construction_status="partial" if out.status == "partial" else "final",
        lifecycle_status=lifecycle,
        completeness="partial" if out.status == "partial" else "complete" if out.status == "complete" else "unknown",
    )


def span_turns(unit: FTAUnit, turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if unit.evidence.start <= t.idx <= unit.evidence.end]


def stated_anchors(turns: list[Turn], names: list[str]) -> dict[int, AffectAnchor]:
    """The feelings, intentions and relations the people state about themselves, per turn index (setting
    ``stated_anchors``; English rules in ``text.english_feelings``). The assistant's words and
    sentences about the listener are not the person's feelings."""
    out = {}
    for turn in turns:
        if turn.role == "assistant":
            continue
        said = statements(untagged(turn.text), [n for n in names if n != turn.speaker])
        felt, plans = english_feelings.feelings(said), english_feelings.intentions(said)
        people = english_feelings.relations(said)
        if felt or plans or people:
            out[turn.idx] = AffectAnchor(
                emotion_or_state=", ".join(felt[:3]) or "unknown",
                intention_or_plan="; ".join(plans[:2]) or "unknown",
                relation_cues=f"{turn.speaker or turn.role}'s {', '.join(people)}" if people else "unknown",
            )
    return out


def with_turn_anchors(unit: FTAUnit, anchors: dict[int, AffectAnchor], turns: list[Turn]) -> FTAUnit:
    """A unit whose feeling, intention or relations are unknown takes the first known of its span's turns
    said by one of its people (any of its turns when none is; a copy's only from its speaker,
    not from the question its span takes in); relations only from a speaker its fact names."""
    span = [t for t in span_turns(unit, turns) if t.idx in anchors]
    own = [t for t in span if t.speaker in unit.fact.participants] or ([] if unit.origin == "copied" else span)
    # "Melanie's husband" on a fact about Caroline names someone the fact is not about
    named = [t for t in own if t.speaker and re.search(rf"\b{re.escape(t.speaker)}\b", unit.fact.text, re.I)]
    update = {}
    for name in ("emotion_or_state", "intention_or_plan", "relation_cues"):
        if getattr(unit.affect, name).strip().lower() in ("unknown", ""):
            pool = named if name == "relation_cues" else own
            known = [getattr(anchors[t.idx], name) for t in pool if getattr(anchors[t.idx], name) != "unknown"]
            if known:
                update[name] = known[0]
    return unit.model_copy(update={"affect": unit.affect.model_copy(update=update)}) if update else unit


# The paper's status of an event by the time its statements tell: a past event told is complete,
# a future one a pending plan; a present or mixed one, or one the tense does not settle ("I
# didn't go", "I started therapy"), may be either, so it stays unknown.
_STATUS_BY_ORIENTATION = {"past": "complete", "future": "pending"}
# a future event told is not complete (a present one may be: "Maya has joined a group")
_COMPLETION_RULED_OUT = {"future": "pending"}


def with_stated_time(unit: FTAUnit, turns: list[Turn], names: list[str]) -> FTAUnit:
    """A unit whose time orientation is unknown (a copy of a turn always is) takes the one its
    people's statements in its span tell, and with it its completion where that was unknown
    (setting ``stated_anchors``; English rules in ``text.english_time``). A completion its
    orientation rules out is corrected: the 1.5B marks nearly every unit complete, "Jon and Gina
    should go to a dance class" (future) among them on dev; a future is pending."""
    if unit.time.time_orientation != "unknown":
        return _completion_agreed(unit)
    span = [t for t in span_turns(unit, turns) if t.role != "assistant"]
    own = [t for t in span if t.speaker in unit.fact.participants] or ([] if unit.origin == "copied" else span)
    said = " ".join(statements(t.text, [n for n in names if n != t.speaker]) for t in own)
    told = english_time.orientation(said) if said.strip() else "unknown"
    if told == "unknown":
        return unit
    time = {"time_orientation": told}
    if unit.time.completion == "unknown" and told in _STATUS_BY_ORIENTATION and english_time.settled(said):
        time["completion"] = _STATUS_BY_ORIENTATION[told]
    own_turn = next((t for t in turns if t.idx == unit.evidence.end), None)
    if told == "future" and unit.origin == "copied" and own_turn is not None:
        # a copy's time was resolved as a past ("on Friday": the Friday before); a plan's is ahead
        time["event_time"] = resolve(own_turn.text, session_date(unit.time.dialogue_time), "future") or "unknown"
    return _completion_agreed(unit.model_copy(update={"time": unit.time.model_copy(update=time)}))


def _completion_agreed(unit: FTAUnit) -> FTAUnit:
    ruled_out = _COMPLETION_RULED_OUT.get(unit.time.time_orientation)
    if ruled_out and unit.time.completion == "complete":
        return unit.model_copy(update={"time": unit.time.model_copy(update={"completion": ruled_out})})
    return unit


def statements(text: str, listeners: tuple[str, ...] | list[str] = ()) -> str:
    """What a turn says of its speaker: without questions, small talk and sentences about the
    listener: in the second person, or addressing one of ``listeners`` by name, without "I".
    "Wow, Jon! That's great. What kinda jobs are you thinking of? You'll do great. I'm applying
    at the bank." keeps "I'm applying at the bank."; "Wow, Jon, that playground looks cool!" is
    about Jon's playground, "I'm so proud of you!" is about Jon's news, and "Let's keep going!"
    only cheers Jon on."""
    return " ".join(
        s
        for s in saying(text)
        if not to_listener(s, listeners) and not english_feelings.listeners_news(s) and not cheer(s)
    )


def verbatim_units(
    fragment: Fragment,
    units: list[FTAUnit],
    min_words: int,
    peers: bool = False,
) -> list[FTAUnit]:
    """Units in the speakers' own words for the substantive turns whose words no unit's fact
    carries (half of the word stems of what the turn says, its questions and small talk aside;
    setting ``verbatim_fallback``): what a person said is in memory
    even when the model left it out, also inside a unit's span, since the 1.5B gives one unit six
    turns and tells one of them. That test sets aside the photo caption of a turn
    that says enough besides (a unit that describes the photo does not carry what the person said
    with it), and the words "shares a photo of" of any other, which every photo turn has. The fact
    is the turn in the third person; its time is the day it was said, or a time the turn states
    that the resolver knows.

    Between ``peers`` (no assistant), a turn that answers no question, shares no photo, tells no
    time and says no "I", "my", "we" or "our" ("Kickboxing is a perfect way to stay in shape and
    de-stress.", "It's wonderful to have such a supportive family.") is a reaction to the other's
    news, not a memory of the speaker: it is not copied (the turn channel still finds it). A fragment's first
    turn may answer a question before the fragment, so it is kept. A counseling client speaks of
    others without "I" ("She has a good support system"), so the rule is left to peers."""
    anchor = session_date(fragment.session_time)
    out = []
    names = sorted({t.speaker for t in fragment.turns if t.speaker})
    before = {t.idx: prev for prev, t in zip(fragment.turns, fragment.turns[1:])}
    for turn in (t for t in fragment.turns if t.role != "assistant" and len(t.text.split()) >= min_words):
        listeners = [n for n in names if n != turn.speaker]
        said = statements(turn.text, listeners)
        if len(said.split()) < min_words:  # questions and greetings are no fact; the turn channel has them
            continue
        # what it says besides the photo, or else what the photo shows
        bare = without_caption(turn.text)
        own_said = statements(bare, listeners)
        says_more = len(own_said.split()) >= min_words
        own = turn.model_copy(update={"text": bare if says_more else without_caption(turn.text, keep_what=True)})
        # a unit that names the turn's topic in two words ("Jon started a business") does not
        # keep what was said ("lost my job as a banker yesterday, so I'm gonna take a shot at ...")
        kept = (own_said if says_more else statements(own.text, listeners)) or own.text
        if any(
            support(kept, [u.fact.text], names) >= CARRIED_SHARE
            for u in units
            if u.evidence.start <= turn.idx <= u.evidence.end
        ):
            continue
        when = resolve(turn.text, anchor) or "unknown"
        who = [turn.speaker] if turn.speaker else []
        start = turn.idx
        prev = before.get(turn.idx)
        # An answer names what it answers: the question just before it, by the other person, is
        # quoted with it and in its span ("How did that feel?" - "Guilty at first. But relieved.").
        asked = (
            questions(prev.text)
            if prev is not None and (prev.speaker or prev.role) != (turn.speaker or turn.role)
            else ""
        )
        if asked:
            start = prev.idx
        elif peers and prev is not None and _remark(own_said, bare != turn.text.strip(), when):
            continue
        out.append(
            FTAUnit(
                case_id=fragment.case_id,
                fact=FactAnchor(
                    text=own_words(turn, said, listeners, asked, prev.speaker or prev.role if asked else ""),
                    content_type="general_fact",
                    participants=who,
                ),
                time=TimeAnchor(
                    dialogue_time=fragment.session_time,
                    event_time=when,
                    time_orientation="unknown",
                    completion="unknown",
                ),
                evidence=Evidence(
                    session_id=fragment.session_id, start=start, end=turn.idx, dialogue_time=fragment.session_time
                ),
                construction_status="final",
                origin="copied",
            )
        )
    return out


# The share of what a turn says (its word stems, names aside) a unit's fact must hold to keep it.
CARRIED_SHARE = 0.5


def _remark(said: str, photo: bool, when: str) -> bool:
    """Between peers, words that say no "I", "my", "we" or "our", tell no time and share no photo
    react to the other's news ("Kickboxing is a perfect way to de-stress."); a time told is an
    event told ("the weather was lovely at the lake on Sunday")."""
    return not photo and when == "unknown" and not of_self(said)


def own_words(turn: Turn, said: str, listeners: list[str] = (), asked: str = "", asker: str = "") -> str:
    """The fallback's fact for a turn whose statements are ``said``: the speaker's words quoted,
    clipped, after who said them to whom, and after the question ``asked`` by ``asker`` that they
    answer. Quoted, "I" and "you" name their people and the sentence stays the speaker's;
    rewritten into the third person it read "Melanie cherish time with family" and "Caroline is
    so proud of you"."""
    who = turn.speaker or turn.role
    to = f" told {listeners[0]}" if turn.speaker and len(listeners) == 1 else " said"
    asked = clip(asked.replace('"', "'"), QUESTION_CHARS)  # its quotes would end the fact's
    question = f'{asker} asked "{asked}"; ' if asked else ""
    return f'{question}{who}{to}: "{clip(said.strip(), 400)}"'


QUESTION_CHARS = 160


def questions(text: str) -> str:
    """A turn's questions ("Nice car! Is this your first one?" -> "Is this your first one?")."""
    return " ".join(s for s in sentences(text) if s.rstrip().endswith("?"))


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word, with "…" where it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _join(old: str, new: str) -> str:
    """Combine two anchor texts: keep one if it contains the other, else both."""
    old, new = old.strip(), new.strip()
    known = [x for x in (old, new) if x and x.lower() != "unknown"]
    if not known:
        return "unknown"
    if len(known) == 1:
        return known[0]
    if old.lower() in new.lower():
        return new
    if new.lower() in old.lower():
        return old
    return f"{old} {new}" if old.endswith((".", "!", "?")) else f"{old}; {new}"


def fuse(partial: FTAUnit, candidate: FTAUnit) -> FTAUnit:
    """Local fusion m_p <- Fuse(m_p, m~): anchors combined, evidence spans merged; the result keeps
    the carried unit's identity and takes the candidate's status."""
    fact = FactAnchor(
        text=_join(partial.fact.text, candidate.fact.text),
        summary=candidate.fact.summary or partial.fact.summary,
        content_type=candidate.fact.content_type
        if candidate.fact.content_type != "general_fact"
        else partial.fact.content_type,
        participants=list(dict.fromkeys(partial.fact.participants + candidate.fact.participants)),
    )
    pt, ct = partial.time, candidate.time
    time = TimeAnchor(
        dialogue_time=pt.dialogue_time or ct.dialogue_time,
        event_time=pt.event_time if is_resolved(pt.event_time) else ct.event_time,
        event_time_expression=_join(pt.event_time_expression, ct.event_time_expression).replace("unknown", ""),
        time_orientation=ct.time_orientation if ct.time_orientation != "unknown" else pt.time_orientation,
        completion=ct.completion,
    )
    affect = AffectAnchor(
        emotion_or_state=_join(partial.affect.emotion_or_state, candidate.affect.emotion_or_state),
        intention_or_plan=_join(partial.affect.intention_or_plan, candidate.affect.intention_or_plan),
        relation_cues=_join(partial.affect.relation_cues, candidate.affect.relation_cues),
    )
    evidence = Evidence(
        session_id=partial.evidence.session_id,
        start=min(partial.evidence.start, candidate.evidence.start),
        end=max(partial.evidence.end, candidate.evidence.end),
        dialogue_time=partial.evidence.dialogue_time,
    )
    return candidate.model_copy(
        update={
            "fact": fact,
            "time": time,
            "affect": affect,
            "evidence": evidence,
            "created_at": partial.created_at,
            "origin": "fused",
        }
    )


@dataclass
class ExtractionResult:
    finalised: list[FTAUnit] = field(default_factory=list)  # to store as retrievable units
    carried: list[FTAUnit] = field(default_factory=list)  # partial units for the next fragment
    fusions: list[tuple[FTAUnit, FTAUnit, FTAUnit]] = field(default_factory=list)  # (partial, candidate, fused)


def integrate(
    candidates: list[tuple[str, FTAUnit]], carried: list[FTAUnit], carried_keys: list[str]
) -> ExtractionResult:
    """Apply local fusion and finalisation to one fragment's candidates.

    A candidate naming a carried unit in ``completes`` is fused into it. A carried unit that no
    candidate completed stays carried (it may still be completed later); the caller stores the
    ones left open at the session's end as partial.
    """
    result = ExtractionResult()
    by_key = dict(zip(carried_keys, carried))
    fused_keys: set[str] = set()
    for completes, candidate in candidates:
        target = by_key.get(completes)
        if target is not None and completes not in fused_keys:
            merged = fuse(target, candidate)
            result.fusions.append((target, candidate, merged))
            fused_keys.add(completes)
            (result.carried if merged.construction_status == "partial" else result.finalised).append(merged)
        else:
            (result.carried if candidate.construction_status == "partial" else result.finalised).append(candidate)
    result.carried = [u for k, u in by_key.items() if k not in fused_keys] + result.carried
    return result


def incomplete_memory_json(carried: list[FTAUnit], keys: list[str]) -> str:
    if not carried:
        return "(none)"
    return "\n".join(
        json.dumps(
            {
                "id": k,
                "text": u.fact.text,
                "summary": u.fact.summary,
                "content_type": u.fact.content_type,
                "event_time": u.time.event_time,
                "evidence_turn_span": [u.evidence.start, u.evidence.end],
            },
            ensure_ascii=False,
        )
        for u, k in zip(carried, keys)
    )


def parse_candidates(reply: Any, fragment: Fragment) -> list[tuple[str, FTAUnit]]:
    return [(out.completes, to_unit(out, fragment)) for out in reply.memory_units]


# Chinese, Japanese and Korean letters are one group: a Japanese fact may write katakana its turns
# happen not to hold
_EAST_ASIAN = {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "IDEOGRAPHIC", "HALFWIDTH"}


def _scripts(text: str) -> set[str]:
    """The scripts of a text's letters by their Unicode names' first word (CYRILLIC, ARABIC...),
    East Asian ones as CJK; letters below U+0370 (Latin, its accents and modifier letters) as LATIN."""
    out = set()
    for c in set(text):
        if c.isalpha():
            name = "LATIN" if ord(c) < 0x370 else unicodedata.name(c, "?").split()[0]
            out.add("CJK" if name in _EAST_ASIAN else name)
    return out


def turn_scripts(turns: list[Turn]) -> set[str]:
    """The scripts the turns and their speakers' names write in, and Latin, the prompts' own (an
    English fact about Chinese turns is in a known script)."""
    return _scripts(" ".join(f"{t.speaker} {t.text}" for t in turns)) | {"LATIN"}


def foreign_script(fact: str, known: set[str]) -> str:
    """A script the fact writes in that is not ``known`` (``turn_scripts``), or "": "Audrey thanked
    Andrew's帮" on English turns, where the 1.5B switched to Chinese mid-fact (2 of about 345 dev and
    test units). Any language: a Chinese fact on Chinese turns is in their script."""
    return min(_scripts(fact) - known, default="")


# Uncovered turns ---------------------------------------------------------------------------


def between_peers(turns: list[Turn]) -> bool:
    """A dialogue between people with no assistant (LoCoMo's friends), where what one says to
    the other is often a reaction, not their own news (``verbatim_units``, ``Repairs.settle_speakers``)."""
    return not any(t.role == "assistant" for t in turns)


# Near-duplicates ---------------------------------------------------------------------------


def _overlap(a: FTAUnit, b: FTAUnit) -> bool:
    return a.evidence.start <= b.evidence.end and b.evidence.start <= a.evidence.end


def merge_duplicates(
    units: list[FTAUnit], embedder, threshold: float
) -> tuple[list[FTAUnit], list[tuple[FTAUnit, FTAUnit]]]:
    """Units of one fragment with overlapping evidence whose facts' embeddings reach ``threshold``
    cosine are one unit (the 1.5B wrote five near-identical units about one race): the longer fact
    is kept, with both evidence spans and participants. Returns the units and (kept, dropped) pairs."""
    if len(units) < 2:
        return units, []
    vectors = embedder.encode([u.fact.text for u in units])
    kept: list[int] = []
    out = list(units)
    merged = []
    for i, unit in enumerate(units):
        twin = next((j for j in kept if _overlap(out[j], unit) and float(vectors[i] @ vectors[j]) >= threshold), None)
        if twin is None:
            kept.append(i)
            continue
        keep, drop = (out[twin], unit) if len(out[twin].fact.text) >= len(unit.fact.text) else (unit, out[twin])
        out[twin] = keep.model_copy(
            update={
                "fact": keep.fact.model_copy(
                    update={"participants": list(dict.fromkeys(keep.fact.participants + drop.fact.participants))}
                ),
                "evidence": keep.evidence.model_copy(
                    update={
                        "start": min(keep.evidence.start, drop.evidence.start),
                        "end": max(keep.evidence.end, drop.evidence.end),
                    }
                ),
            }
        )
        merged.append((out[twin], drop))
    return [out[i] for i in kept], merged
