"""The memory graph as a self-contained HTML page: units as nodes (coloured by content type),
typed directed links as edges.

pyvis builds the network; the page around it is ours because pyvis's template loads vis.js,
bootstrap and tom-select from CDNs (offline the graph stays empty, and a counseling tool makes
no third-party requests). vis-network's script and style are inlined from the pyvis package.
All dialogue text goes into the page as JSON data and is shown with ``textContent``: a turn
holding HTML or script is displayed as text and never parsed.
"""

from __future__ import annotations

import json
from pathlib import Path

from .display import date, link as link_line, span, word
from .models import FTAUnit, Link

COLOURS = {
    "event": "#4e79a7",
    "current_state": "#f28e2b",
    "relationship_event": "#e15759",
    "belief_candidate": "#76b7b2",
    "homework_or_plan": "#59a14f",
    "support_interaction": "#edc948",
    "risk_signal": "#b07aa1",
    "general_fact": "#9c755f",
}
EDGE_COLOURS = {
    "updates": "#1f77b4",
    "contradicts": "#d62728",
    "followup_of": "#2ca02c",
    "same_episode_as": "#7f7f7f",
    "supports": "#9467bd",
}


def _vis_assets() -> tuple[str, str]:
    import pyvis

    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
    return (lib / "vis-network.min.js").read_text(encoding="utf-8"), (lib / "vis-network.css").read_text(
        encoding="utf-8"
    )


OUT_OF_RETRIEVAL = "#dddddd"  # disputed and archived units, which retrieval leaves out


def network(units: list[FTAUnit], links: list[Link]):
    """The pyvis Network of these units and the links between them."""
    from pyvis.network import Network

    net = Network(height="640px", width="100%", directed=True, cdn_resources="local")
    ids = {u.id for u in units}
    for u in units:
        label = u.fact.summary or u.fact.text
        label = label if len(label) <= 40 else label[:39] + "…"
        # As people read it (display): words, dates, turns counted from 1, "—" for nothing.
        title = (
            f"m{u.id} · {word(u.fact.content_type)} · {word(u.lifecycle_status)}\n{u.fact.text}\n"
            f"said {date(u.time.dialogue_time)}; happened {date(u.time.event_time)}\n"
            f"feeling: {word(u.affect.emotion_or_state)}; intention: {word(u.affect.intention_or_plan)}\n"
            f"turns {span(u.evidence.start, u.evidence.end)}"
        )
        out = u.disputed or u.lifecycle_status == "archived"  # out of retrieval: greyed
        if out:
            title += "\n(disputed)" if u.disputed else "\n(archived)"
        net.add_node(
            u.id,
            label=f"m{u.id} {label}",
            title=title,
            shape="dot",
            size=14,
            borderWidth=3 if u.disputed else 1,
            color=OUT_OF_RETRIEVAL if out else COLOURS.get(u.fact.content_type, "#bab0ac"),
        )
    for link in links:
        if link.source in ids and link.target in ids:
            net.add_edge(
                link.source,
                link.target,
                title=link_line(link.source, link.relation, link.target, link.confidence),
                label=word(link.relation),
                color=EDGE_COLOURS.get(link.relation, "#aaaaaa"),
                arrows="to",
            )
    return net


def _json_for_script(data: object) -> str:
    # JSON inside <script>: "</" would end the script element early; escape it and friends.
    return (
        json.dumps(data, ensure_ascii=False)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def graph_html(units: list[FTAUnit], links: list[Link], height: int = 640) -> str:
    net = network(units, links)
    nodes = [
        {k: n[k] for k in ("id", "label", "title", "color", "shape", "size", "borderWidth") if k in n}
        for n in net.nodes
    ]
    edges = [{k: e[k] for k in ("from", "to", "title", "label", "color", "arrows") if k in e} for e in net.edges]
    script, style = _vis_assets()
    options = {
        "physics": {"stabilization": {"iterations": 150}},
        "interaction": {"hover": True},
        "edges": {"font": {"size": 10, "align": "middle"}, "smooth": {"type": "dynamic"}},
    }
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<style>{style}
body {{ margin: 0; font-family: sans-serif; }} #graph {{ width: 100%; height: {height}px; border: 1px solid #ddd; }}
.tip {{ white-space: pre-wrap; max-width: 420px; font-size: 12px; }}</style>
<script>{script}</script></head>
<body><div id="graph"></div>
<script>
const nodes = {_json_for_script(nodes)};
const edges = {_json_for_script(edges)};
function asText(value) {{ const el = document.createElement("div"); el.className = "tip"; el.textContent = value; return el; }}
for (const item of nodes.concat(edges)) {{ if (item.title) item.title = asText(item.title); }}
const network = new vis.Network(document.getElementById("graph"),
  {{nodes: new vis.DataSet(nodes), edges: new vis.DataSet(edges)}}, {_json_for_script(options)});
network.once("stabilizationIterationsDone", () => {{
  network.setOptions({{physics: false}});  // nodes stay where the counselor sees them
  network.fit();
  document.body.dataset.rendered = "yes";
}});
window.ftamemNetwork = network;
</script></body></html>"""
