"""The turn channel (beyond the paper, setting ``retrieval.turn_channel``): raw turns most similar to the
question compete with the primary units for the packet, merged by score."""

from ftamem_core.config import Ablations
from ftamem_core.models import Turn
from ftamem_core.retrieval.packet import MemoryPacket, approx_tokens, render

from conftest import make_unit
from test_retrieval import memory, run  # noqa: F401 (memory is a fixture)

FULL = Ablations()


def _packet():
    u1, u2 = make_unit("c1", "Maya was moved to night shifts", 4, 5), make_unit("c1", "Maya sleeps badly", 8, 8)
    u1.id, u2.id = 1, 2
    high = Turn(idx=0, speaker="Maya", text="My sister Lena visits our father on Mondays.")
    pointed = Turn(idx=5, speaker="Maya", text="The manager moved me to nights in February.")
    low = Turn(idx=12, speaker="Maya", text="Omar told me about blackout curtains.")
    return MemoryPacket([u1, u2], [], {}, scores={1: 0.5, 2: 0.2}, channel=[(0.6, high), (0.4, pointed), (0.3, low)])


def test_turns_are_merged_with_the_units_by_score_and_never_repeat_a_pointed_turn():
    shown = render(_packet(), FULL)
    assert shown.unit_ids == [1, 2] and shown.channel_ids == [0, 12]  # turn 5 lies in m1's span
    assert shown.turn_ids == [0, 12]
    assert "## Other turns" in shown.text and "Lena visits our father" in shown.text
    assert "moved me to nights" not in shown.text
    # The first item by score is the turn: the tightest budget shows it and no unit.
    p = _packet()
    turn_only = render(MemoryPacket([], [], {}, channel=p.channel[:1]), FULL).text
    tight = render(p, FULL, budget=approx_tokens(turn_only))
    assert tight.channel_ids == [0] and tight.unit_ids == []


def test_without_scores_or_channel_the_packet_is_the_papers():
    p = _packet()
    assert render(MemoryPacket(p.primary, [], {}), FULL).channel_ids == []
    unscored = MemoryPacket(p.primary, [], {}, channel=p.channel)  # no R: every unit goes first
    shown = render(unscored, FULL)
    assert shown.unit_ids == [1, 2] and shown.channel_ids == [0, 12]
    assert shown.text.index("[m1]") < shown.text.index("## Other turns")


def test_flat_context_lists_the_channel_turns_without_sections():
    shown = render(_packet(), Ablations(flat_context=True))
    assert "##" not in shown.text and "Lena visits our father" in shown.text and shown.channel_ids == [0, 12]


def test_the_setting_acts_in_ask_and_fact_only_and_question_only_have_no_channel(memory):
    store, _ = memory
    on, _ = run(memory, "full", turn_channel=3)
    off, _ = run(memory, "full", turn_channel=0)
    assert on.channel_turn_ids and off.channel_turn_ids == []
    assert "## Other turns" in on.packet_text and "## Other turns" not in off.packet_text
    assert on.settings["turn_channel"] == 3 and off.settings["turn_channel"] == 0
    units = {u.id: u for u in store.units("c1")}
    spans = {i for uid in on.shown_unit_ids for i in range(units[uid].evidence.start, units[uid].evidence.end + 1)}
    assert not set(on.channel_turn_ids) & spans and len(on.channel_turn_ids) <= 3
    texts = {t.idx: t.text for t in store.turns("c1")}
    assert all(texts[i] in on.packet_text for i in on.channel_turn_ids)
    assert set(on.channel_turn_ids) <= set(on.as_dict()["packet"]["shown_turn_ids"])
    for preset in ("fact_only", "question_only"):
        trace, _ = run(memory, preset, turn_channel=3)
        assert trace.channel_turn_ids == [] and trace.settings["turn_channel"] == 0


def test_a_channel_turn_in_a_kept_units_span_brings_the_unit_rather_than_pushing_it_out():
    """Issue 42 item 2: the care-home turn came through the channel and the care-home unit, the
    top candidate, was left out, so the answer cited another unit."""
    said = Turn(idx=7, speaker="Maya", text="I joined a running group that meets on Sundays.")
    verbatim = make_unit("c1", "Maya joined a running group that meets on Sundays.", 7, 7)
    richer = make_unit("c1", "Maya joined a running group on Sundays after the doctor's advice.", 7, 7)
    verbatim.id, richer.id = 1, 2
    shown = render(
        MemoryPacket([verbatim, richer], [], {7: [said]}, scores={1: 0.3, 2: 0.2}, channel=[(0.6, said)]), FULL
    )
    assert shown.unit_ids == [1, 2] and shown.channel_ids == [] and shown.left_out == {}
    assert "## Other turns" not in shown.text and "[m1] Maya joined a running group" in shown.text
    # The turn is the unit's anchor where it adds words ("I" is no content word; "joined" is in m1).
    anchored = Turn(idx=7, speaker="Maya", text="Since March I joined a running group that meets on Sundays.")
    shown = render(MemoryPacket([verbatim], [], {1: [anchored]}, scores={1: 0.3}, channel=[(0.6, anchored)]), FULL)
    assert shown.unit_ids == [1] and shown.turn_ids == [7] and shown.channel_ids == []
    assert shown.text.index("## Source turns") < shown.text.index("Since March")


def test_a_kept_unit_left_out_says_why_budget_or_covered_by_a_turn_shown():
    said = Turn(idx=7, speaker="Maya", text="I joined a running group that meets on Sundays.")
    long = make_unit(
        "c1", "Maya joined a running group " + "that meets on Sundays in the park near her flat " * 6, 7, 7
    )
    verbatim = make_unit("c1", "Maya joined a running group that meets on Sundays.", 7, 7)
    long.id, verbatim.id = 1, 2
    packet = MemoryPacket([long, verbatim], [], {}, scores={1: 0.3, 2: 0.2}, channel=[(0.6, said)])
    room = approx_tokens(render(MemoryPacket([], [], {}, channel=[(0.6, said)]), FULL).text) + 5
    shown = render(packet, FULL, budget=room)
    # The long unit does not fit, so its turn is shown alone; the short unit adds nothing to that turn.
    assert shown.channel_ids == [7] and shown.unit_ids == []
    assert shown.left_out == {1: "budget", 2: "covered"}


def test_a_units_linked_neighbour_comes_before_lower_ranked_units_under_a_budget():
    from ftamem_core.retrieval.packet import Neighbour

    top, low, update = (
        make_unit("c1", t, i, i)
        for i, t in (
            (1, "Maya sleeps four hours"),
            (9, "Maya likes to paint on weekends"),
            (20, "Maya now sleeps six hours with blackout curtains"),
        )
    )
    top.id, low.id, update.id = 1, 2, 3
    packet = MemoryPacket([top, low], [Neighbour(update, 1, "updates m1")], {}, scores={1: 0.5, 2: 0.4})
    room = approx_tokens(render(MemoryPacket([top], packet.neighbours, {}), FULL).text)
    shown = render(packet, FULL, budget=room)
    assert shown.unit_ids == [1, 3] and "blackout curtains" in shown.text  # the update, not the lower unit
    assert render(packet, FULL).unit_ids == [1, 2, 3]  # without a budget, all of it


def test_a_units_best_source_turn_comes_right_after_it_under_a_budget():
    """A model-written fact keeps few of its turn's words: under a budget the unit's turn most like
    the question is shown with it, before lower-ranked units (else the units fill the budget and
    the packet shows less of what was said than the turns alone would)."""
    import numpy as np

    from ftamem_core.retrieval.packet import leading_turns

    said = [
        Turn(idx=4, speaker="Maya", text="The manager put me on nights from February, every week."),
        Turn(idx=5, speaker="Omar", text="That sounds exhausting, how do you sleep?"),
        Turn(idx=6, speaker="Maya", text="Barely four hours, the street is loud in the day."),
    ]
    scores = np.array([0, 0, 0, 0, 0.6, 0.1, 0.4])
    assert leading_turns(said, scores, floor=0.35) == [said[0], said[2]]  # best first; 5 is below the floor
    assert leading_turns(said, np.array([0, 0, 0, 0, 0.2, 0.1, 0.3]), floor=0.35) == [said[2]]  # the best always
    # a turn the scores do not reach (erased since) ranks last, below a negative cosine
    gone = Turn(idx=9, speaker="Maya", text="Gone.")
    assert leading_turns([gone, said[0]], np.array([0, 0, 0, 0, -0.2]), floor=-1.0) == [said[0]]

    u1, u2 = (
        make_unit("c1", "Maya was moved to night shifts", 4, 6),
        make_unit(
            "c1",
            "Maya paints landscapes in oil on weekends at the community centre with her neighbour and his daughter",
            9,
            9,
        ),
    )
    u1.id, u2.id = 1, 2
    packet = MemoryPacket([u1, u2], [], {1: said}, leading={1: leading_turns(said, scores, 0.35)})
    with_turns = MemoryPacket([u1], [], packet.leading, leading=packet.leading)
    room = approx_tokens(render(with_turns, FULL).text)
    shown = render(packet, FULL, budget=room)
    assert shown.unit_ids == [1] and shown.turn_ids == [4, 6] and shown.left_out == {2: "budget"}
    assert "on nights from February" in shown.text and "paints" not in shown.text
    # Without leading turns (no question to rank them by), the units come first and the turns after.
    shown = render(MemoryPacket([u1, u2], [], {1: said}), FULL, budget=room)
    assert shown.unit_ids == [1, 2] and shown.turn_ids == []
    # Without a budget, every source turn that adds words, as in the paper's packet.
    assert render(packet, FULL).turn_ids == [4, 5, 6]


def test_the_channel_turn_that_brings_a_unit_comes_before_its_leading_turns():
    """The turn that brought the unit in is the evidence the question found: the unit's other
    source turn (ranked by the rewritten query) must not take its place under a tight budget."""
    a = Turn(idx=5, speaker="Maya", text="The shed, yes.")
    b = Turn(idx=6, speaker="Maya", text="Dad moved into Oakwood care home on October 3rd.")
    unit = make_unit("c1", "Maya's father moved", 5, 6)
    unit.id = 1
    packet = MemoryPacket([unit], [], {1: [a, b]}, scores={1: 0.2}, channel=[(0.6, b)], leading={1: [a, b]})
    room = approx_tokens(render(MemoryPacket([unit], [], {1: [b]}, leading={1: [b]}), FULL).text)
    shown = render(packet, FULL, budget=room)
    assert shown.unit_ids == [1] and shown.turn_ids == [6] and "Oakwood" in shown.text


def test_a_linked_neighbour_brings_its_leading_turns_before_lower_units():
    from ftamem_core.retrieval.packet import Neighbour

    top, low, update = (
        make_unit("c1", t, i, i)
        for i, t in (
            (1, "Maya sleeps four hours"),
            (9, "Maya paints"),
            (20, "Maya sleeps better"),
        )
    )
    top.id, low.id, update.id = 1, 2, 3
    said = Turn(
        idx=20, speaker="Maya", text="The blackout curtains work really well, six hours every night now, rested."
    )
    neighbours = [Neighbour(update, 1, "updates m1")]
    packet = MemoryPacket([top, low], neighbours, {3: [said]}, scores={1: 0.5, 2: 0.4}, leading={3: [said]})
    room = approx_tokens(render(MemoryPacket([top], neighbours, {3: [said]}, leading={3: [said]}), FULL).text)
    shown = render(packet, FULL, budget=room)
    assert shown.unit_ids == [1, 3] and shown.turn_ids == [20] and shown.left_out == {2: "budget"}


def test_retrieve_ranks_each_units_source_turns_by_the_question(memory):
    """The pipeline gives the packet its leading turns: each unit's source turns by cosine with the
    question (the turn index's), the best first and the others at the paper's tau or more."""
    from ftamem_core.config import load_settings
    from ftamem_core.retrieval.packet import build_packet
    from ftamem_core.retrieval.pipeline import TurnIndex, retrieve
    from ftamem_core.retrieval.ranking import Cues

    from test_retrieval import EMB

    store, ids = memory
    settings = load_settings(environ={}, retrieval={"tau": 0.1, "top_k": 3})
    turns = TurnIndex.build(EMB, store.turns("c1"), replies=False)
    query = EMB.encode(["When did Maya start night shifts?"])[0]
    found = retrieve(store, "c1", query, query, Cues(), EMB, settings, k=3, ablations=FULL, turns=turns)
    sims = turns.similarity(query, replies=False)
    assert found.packet.leading.keys() == set(found.packet.unit_ids()) and found.packet.leading
    for uid, lead in found.packet.leading.items():
        span = [t.idx for t in found.packet.sources[uid]]
        assert lead[0].idx == max(span, key=lambda i: sims[i])
        assert all(sims[t.idx] >= 0.1 for t in lead[1:]) and [t.idx for t in lead] == sorted(
            (t.idx for t in lead), key=lambda i: -sims[i]
        )
    # A copy's line is its turn (less the pleasantries left out): it brings none.
    copy = make_unit("c1", 'Maya told Omar: "The manager moved me to nights."', 0, 0)
    copy.origin = "copied"
    (copy_id,) = store.add_units("c1", [copy], EMB.encode([copy.fact.text]))

    packet = build_packet(store, "c1", [copy_id, ids["shifts"]], 0, FULL, 0, turn_scores=sims)
    assert copy_id not in packet.leading and packet.leading[ids["shifts"]]
    # Fact only: no source turns, so none lead.
    fact_only = retrieve(
        store, "c1", query, query, Cues(), EMB, settings, k=3, ablations=Ablations(fact_only=True), turns=turns
    )
    assert fact_only.packet.leading == {} and fact_only.shown.turn_ids == []
    # Without a turn index (the paper's ask loads no turns) there are none and the packet is the paper's.
    bare = retrieve(store, "c1", query, query, Cues(), EMB, settings, k=3, ablations=FULL, turns=TurnIndex())
    assert bare.packet.leading == {}


def test_ask_reads_the_turns_wherever_retrieval_uses_them():
    from ftamem_core.config import load_settings
    from ftamem_core.retrieval.pipeline import needs_turns

    off = {"turn_channel": 0, "source_similarity": 0.0}
    assert needs_turns(load_settings(environ={}, retrieval={**off, "packet_token_budget": 500}), FULL)
    assert not needs_turns(load_settings(environ={}, retrieval={**off, "packet_token_budget": 0}), FULL)
    assert not needs_turns(load_settings(environ={}, profile="paper"), FULL)  # the paper's ask reads no turns
    assert needs_turns(load_settings(environ={}), FULL)
    assert not needs_turns(load_settings(environ={}), Ablations(fact_only=True))
