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


def test_the_channel_reads_plain_turn_vectors_whatever_the_index_holds_for_turn_level_rag(memory):  # noqa: F811
    from ftamem_core.config import load_settings
    from ftamem_core.retrieval.pipeline import TurnIndex, retrieve
    from ftamem_core.retrieval.ranking import Cues
    from test_retrieval import EMB

    store, _ = memory
    turns = store.turns("c1")
    question = EMB.encode(["Who visits their father on Mondays?"])[0]
    settings = load_settings(environ={}, retrieval={"tau": 0.0})
    shown = [
        retrieve(
            store, "c1", question, question, Cues(), EMB, settings, k=5, ablations=FULL, turns=index
        ).packet.channel
        for index in (TurnIndex.build(EMB, turns, replies=True), TurnIndex.build(EMB, turns, replies=False))
    ]
    assert shown[0] and [t.idx for _, t in shown[0]] == [t.idx for _, t in shown[1]]
