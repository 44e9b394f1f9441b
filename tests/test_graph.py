import re

from ftamem_core.graph import graph_html
from ftamem_core.models import Link

from conftest import make_unit

PAYLOAD = '</script><script>alert(1)</script><img src=x onerror="alert(2)">'


def test_graph_is_self_contained_and_escapes_dialogue_text():
    a = make_unit("c1", f"Maya said {PAYLOAD}")
    a.id = 1
    b = make_unit("c1", "Maya bought curtains")
    b.id = 2
    html = graph_html([a, b], [Link(source=2, target=1, relation="updates")])
    assert "<script>alert(1)" not in html and "<img src=x" not in html  # only escaped forms
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in html
    assert html.count("</script>") == 2  # two script elements, vis-network and ours
    assert not re.search(r'(src|href)\s*=\s*["\']?https?:', html)  # nothing fetched from elsewhere
    assert "default-src 'none'" in html
    ours = html.rsplit("<script>", 1)[1]  # our script, after the inlined vis-network
    assert "el.textContent = value" in ours and "innerHTML" not in ours  # tooltips set text, never markup


def test_disputed_and_archived_units_are_greyed():
    from ftamem_core.graph import OUT_OF_RETRIEVAL, network

    units = [make_unit("c1", t) for t in ("kept", "disputed", "archived")]
    for i, u in enumerate(units, start=1):
        u.id = i
    units[1].disputed = True
    units[2].lifecycle_status = "archived"
    colours = {n["id"]: n["color"] for n in network(units, []).nodes}
    assert colours[1] != OUT_OF_RETRIEVAL and colours[2] == colours[3] == OUT_OF_RETRIEVAL
