import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ftamem_core.models import Turn
from ftamem_core.construction.segmentation import SegmentationReply, bws, repair_spans, segment_session


def session(n: int, offset: int = 0) -> list[Turn]:
    return [Turn(idx=offset + i, text=f"turn {i}") for i in range(n)]


def final_spans(windows) -> list[tuple[int, int]]:
    return [(a, b) for w in windows for a, b, _ in w.final]


def assert_partition(spans, turns):
    covered = [i for a, b in spans for i in range(a, b + 1)]
    assert covered == [t.idx for t in turns]


@pytest.mark.parametrize(
    "spans, expected",
    [
        ([(10, 12, "topic_change"), (13, 19, "emotion_shift")], [(10, 12), (13, 19)]),  # already a partition
        ([(14, 12, "topic_change")], [(10, 19)]),  # reversed, then stretched to the window
        ([(5, 12, "topic_change"), (13, 40, "unknown")], [(10, 12), (13, 19)]),  # clipped
        ([(30, 40, "topic_change")], [(10, 19)]),  # wholly outside: dropped, whole window
        ([(10, 14, "topic_change"), (12, 19, "goal_change")], [(10, 14), (15, 19)]),  # overlap
        ([(10, 12, "topic_change"), (11, 12, "goal_change"), (13, 19, "unknown")], [(10, 12), (13, 19)]),  # swallowed
        ([(10, 11, "topic_change"), (15, 19, "goal_change")], [(10, 14), (15, 19)]),  # gap joins the span before
        ([(13, 16, "topic_change")], [(10, 19)]),  # leading and trailing turns join the only span
        ([(16, 19, "goal_change"), (10, 12, "topic_change")], [(10, 15), (16, 19)]),  # unsorted
        ([], [(10, 19)]),  # nothing
    ],
)
def test_repair_rules(spans, expected):
    repaired = repair_spans(spans, 10, 19)
    assert [(a, b) for a, b, _ in repaired] == expected


def test_unknown_trigger_becomes_unknown():
    assert repair_spans([(0, 3, "vibes")], 0, 3) == [(0, 3, "unknown")]
    reply = SegmentationReply.model_validate({"segments": [{"turn_span": [0, 1], "boundary_trigger": "vibes"}]})
    assert reply.segments[0].boundary_trigger == "unknown"


def test_bws_follows_algorithm_1():
    turns = session(30, offset=100)
    calls = []

    def detect(window):
        calls.append((window[0].idx, window[-1].idx))
        a = window[0].idx
        # three segments per window, the last one provisional unless the window ends the session
        return [(a, a + 3, "topic_change"), (a + 4, a + 7, "goal_change"), (a + 8, window[-1].idx, "unknown")]

    windows = list(bws(turns, detect, window=20))
    assert calls == [(100, 119), (108, 127), (116, 129)]
    assert windows[0].final == [(100, 103, "topic_change"), (104, 107, "goal_change")]
    assert windows[0].provisional == (108, 119, "unknown")
    assert windows[-1].provisional is None  # the session's end finalises every segment
    assert final_spans(windows) == [(100, 103), (104, 107), (108, 111), (112, 115), (116, 119), (120, 123), (124, 129)]


def test_single_full_window_segment_moves_by_the_minimum_step_and_keeps_its_turns():
    turns = session(25)
    starts = []

    def detect(window):
        starts.append(window[0].idx)
        return [(window[0].idx, window[-1].idx, "topic_change")]  # one segment, whole window

    windows = list(bws(turns, detect, window=20, min_step=1))
    assert starts == [0, 1, 2, 3, 4, 5]  # s <- max(b_K-1, s + 1) until the window reaches the end
    assert final_spans(windows) == [(0, 24)]  # turns passed by the step stay in the segment
    assert len(list(bws(turns, detect, window=20, min_step=5))) == 2


def test_short_session_is_one_window():
    windows = list(bws(session(3), lambda w: [(0, 0, "session_start"), (1, 2, "topic_change")], window=20))
    assert len(windows) == 1 and final_spans(windows) == [(0, 0), (1, 2)]
    assert list(bws([], lambda w: [], window=20)) == []


def test_granularity_variants():
    turns = session(7)
    seen = []

    def detect(window):
        seen.append((window[0].idx, window[-1].idx))
        return [(window[0].idx, window[-1].idx, "topic_change")]

    assert final_spans(segment_session(turns, "fixed", detect, window=3)) == [(0, 2), (3, 5), (6, 6)]
    assert seen == [(0, 2), (3, 5), (6, 6)]  # fixed stride, nothing carried
    assert final_spans(segment_session(turns, "session", None)) == [(0, 6)]
    assert final_spans(segment_session(turns, "pair", None)) == [(0, 1), (2, 3), (4, 5), (6, 6)]
    with pytest.raises(ValueError):
        list(segment_session(turns, "paragraph", None))


spans_strategy = st.lists(
    st.tuples(st.integers(-5, 60), st.integers(-5, 60), st.sampled_from(["topic_change", "unknown", "bogus"])),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 60),
    offset=st.integers(0, 500),
    window=st.integers(2, 25),
    min_step=st.integers(1, 4),
    script=st.lists(spans_strategy, min_size=1, max_size=5),
    relative=st.booleans(),
)
def test_bws_partitions_and_terminates_whatever_the_detector_says(n, offset, window, min_step, script, relative):
    turns = session(n, offset)
    calls = []

    def detect(window_turns):
        spans = script[len(calls) % len(script)]
        calls.append(1)
        base = window_turns[0].idx if relative else offset
        return [(base + a, base + b, t) for a, b, t in spans]

    windows = list(bws(turns, detect, window=window, min_step=min_step))
    assert len(windows) <= n  # the start moves at least one turn per window
    assert_partition(final_spans(windows), turns)
    for w in windows:
        for a, b, t in w.spans:
            assert w.start <= a <= b <= w.end or (a < w.start and w is not windows[0])  # carried head only
            assert t in ("topic_change", "unknown")


def test_merge_short_joins_short_fragments_to_their_neighbours():
    from ftamem_core.construction.segmentation import merge_short

    spans = [(0, 1, "session_start"), (2, 7, "topic_change"), (8, 9, "emotion_shift"), (10, 10, "unknown")]
    assert merge_short(spans, 1) == spans
    assert merge_short(spans, 3) == [(0, 7, "session_start"), (8, 10, "emotion_shift")]
    merged = merge_short(spans, 6)
    assert merged == [(0, 10, "session_start")]  # the short tail joins the span before it
    assert merge_short([(4, 5, "unknown")], 6) == [(4, 5, "unknown")]  # nothing to join
    for n in (1, 2, 3, 6, 20):  # still a partition of the same turns
        got = merge_short(spans, n)
        assert [i for a, b, _ in got for i in range(a, b + 1)] == list(range(11))


def test_cut_texts_fits_the_limit_cutting_the_longest_first():
    from ftamem_core.construction.segmentation import cut_texts

    texts = ["short", "x" * 10_000, "y" * 300]
    cut = cut_texts(texts, 2_000)
    assert cut[0] == "short" and cut[2] == "y" * 300  # what fits stays whole
    assert cut[1].startswith("x" * 1_695) and cut[1].endswith("[…8,305 characters not shown]")
    assert sum(len(t) for t in cut) < 2_000 + 40
    assert cut_texts(texts, 0) == texts and cut_texts(texts, 20_000) == texts
