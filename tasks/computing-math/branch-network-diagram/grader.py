"""Grader for branch-network-diagram.

The Dia file (gzip-compressed or plain XML) is read as a graph, independent of layout, object
order, shape types and line types: a node is an object whose own text starts with a hostname or
with "VLAN <id>"; a link is a line object whose two ends are glued (<dia:connections>) to two
different nodes. Lines that only touch a shape on screen, and loose text objects, count for
nothing. The crux, the subnet arithmetic that decides which device sits in which VLAN, is a gate:
at least half of the attachments drawn must be right and at least half of the right ones drawn,
so a star drawn by eye or unglued lines earn nothing. No tolerances: the topology is discrete.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, load_xml, same_set

DIA = "{http://www.lysator.liu.se/~alla/dia/}"
FILE = "network.dia"
MAX_BYTES = 16 * 1024 * 1024  # packed and unpacked
GATE_SHARE = 0.5
VLAN_LABEL = re.compile(r"^\s*vlan\s*(\d{1,9})\b", re.IGNORECASE)
NOT_NODES = {"Standard - Text"}  # a loose caption labels nothing
LINE_TYPES = {f"Standard - {k}" for k in ("Line", "PolyLine", "ZigZagLine", "BezierLine", "Arc")}


def load(path: Path) -> tuple[ET.Element | None, Outcome]:
    return load_xml(path, root=DIA + "diagram", kind="Dia XML", limit=MAX_BYTES, max_unpacked=MAX_BYTES)


def own_text(obj: ET.Element) -> str | None:
    """The object's own text attribute (not that of objects grouped inside it)."""
    for attr in obj.findall(DIA + "attribute"):
        if attr.get("name") != "text":
            continue
        s = attr.find(f"{DIA}composite/{DIA}attribute[@name='string']/{DIA}string")
        if s is not None and s.text is not None:
            t = s.text
            return t[1:-1] if len(t) >= 2 and t[0] == "#" and t[-1] == "#" else t
    return None


def node_name(text: str | None, devices: set[str], left_out: set[str]) -> str | None:
    first = (text or "").strip().split("\n")[0].strip()
    m = VLAN_LABEL.match(first)
    if m:
        return f"VLAN {int(m.group(1))}"
    word = first.split()[0].casefold() if first.split() else ""
    return word if word in devices | left_out else (f"other:{first}" if first else None)


class Graph:
    def __init__(self, root: ET.Element, devices: set[str], left_out: set[str]) -> None:
        objects = [o for o in root.iter(DIA + "object") if o.get("id")]
        self.names: dict[str, str] = {}  # object id -> node name
        self.texts: dict[str, str] = {}
        for o in objects:
            text = own_text(o)
            name = node_name(text, devices, left_out) if o.get("type") not in NOT_NODES else None
            if name and o.find(DIA + "connections") is None:
                self.names[o.get("id")] = name
                self.texts[name] = text or ""
        self.nodes = Counter(self.names.values())
        self.links: Counter = Counter()
        self.dangling = 0
        self.lines = 0
        for o in objects:
            conns = o.find(DIA + "connections")
            if o.get("id") in self.names or (conns is None and o.get("type") not in LINE_TYPES):
                continue  # a node, or an unlabelled shape
            self.lines += 1
            ends = {c.get("to") for c in conns.findall(DIA + "connection")} if conns is not None else set()
            named = {self.names[e] for e in ends if e in self.names}
            if len(ends) == 2 and len(named) == 2:
                self.links[tuple(sorted(named))] += 1
            else:
                self.dangling += 1


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    root, parsed = load(ctx.out(FILE))
    r.gate(f"{FILE} is a Dia diagram", parsed)
    devices = {d.casefold() for d in ref["devices"]}
    left_out = {d.casefold() for d in ref["left_out"]}
    g = Graph(root if root is not None else ET.Element(DIA + "diagram"), devices, left_out)
    want = {tuple(sorted((h.casefold(), f"VLAN {v}"))) for h, v in ref["attachments"]}
    drawn = set(g.links)
    right = drawn & want
    recall = len(right) / len(want)
    precision = len(right) / len(drawn) if drawn else 0.0
    r.gate("most attachments derived right (at least half of those drawn right, half of the right ones drawn)",
           Outcome(recall >= GATE_SHARE and precision >= GATE_SHARE,
                   f"{len(right)} right of {len(drawn)} drawn; {len(want)} expected",
                   expected={"recall": GATE_SHARE, "precision": GATE_SHARE},
                   seen={"recall": round(recall, 3), "precision": round(precision, 3)}))

    vlans = {f"VLAN {v}" for v in ref["vlan_networks"]}
    r.check("every in-service device drawn once, labelled by its hostname", 2, all_of({
        "all present": same_set(sorted(n for n in g.nodes if n in devices), sorted(devices)),
        "none twice": Outcome(all(g.nodes[d] <= 1 for d in devices), "duplicates",
                              seen=sorted(d for d in devices if g.nodes[d] > 1)),
    }))
    cidr_missing = [v for v, net in ref["vlan_networks"].items()
                    if f"VLAN {v}" in g.texts and net not in g.texts[f"VLAN {v}"]]
    r.check("every VLAN drawn once, labelled with its id and its subnet in CIDR", 2, all_of({
        "all present": same_set(sorted(n for n in g.nodes if n in vlans), sorted(vlans)),
        "none twice": Outcome(all(g.nodes[v] <= 1 for v in vlans), "duplicates",
                              seen=sorted(v for v in vlans if g.nodes[v] > 1)),
        "subnet in the label": Outcome(not cidr_missing, f"{len(cidr_missing)} VLAN labels lack their subnet",
                                       seen=cidr_missing),
    }))
    drawn_left_out = sorted(n for n in g.nodes if n in left_out)
    r.check("decommissioned devices left out", 1, Outcome(
        not drawn_left_out, f"{len(drawn_left_out)} decommissioned devices drawn", expected=[], seen=drawn_left_out))
    missing = sorted(want - drawn)
    r.check("every attachment (device to VLAN) drawn as a glued line", 4, Outcome(
        not missing, f"{len(missing)} of {len(want)} attachments missing", seen=[list(p) for p in missing[:8]]))
    extra = sorted(drawn - want)
    doubled = sorted(p for p, n in g.links.items() if n > 1)
    r.check("no wrong or extra attachments, one line each", 3, all_of({
        "wrong or extra": Outcome(not extra, f"{len(extra)} links not in the topology",
                                  seen=[list(p) for p in extra[:8]]),
        "drawn twice": Outcome(not doubled, f"{len(doubled)} links drawn more than once",
                               seen=[list(p) for p in doubled[:8]]),
    }))
    edge_fw = ref["firewall"].casefold(), ref["router"].casefold()
    r.check("firewall between the transit VLAN and the routed VLANs, router on transit and hand-off", 2, all_of({
        name: same_set(sorted(p[0] if p[1] == name else p[1] for p in drawn if name in p),
                       sorted(p[0] if p[1] == name else p[1] for p in want if name in p))
        for name in edge_fw}))
    r.check("every line glued to a labelled object at both ends", 1, Outcome(
        g.lines > 0 and g.dangling == 0, f"{g.dangling} of {g.lines} lines not glued at both ends",
        expected=0, seen=g.dangling))
    return r
