"""Write the logical network diagram as Dia XML: python3 build_dia.py INPUTS OUT.dia [variant].

The topology is derived here (each active address placed in the VLAN whose subnet holds it); Dia
then loads the draft and saves it (solve.sh). The variants are the fixtures' deliverables.
"""

from __future__ import annotations

import csv
import gzip
import ipaddress
import random
import sys
from pathlib import Path
from xml.sax.saxutils import escape

SHAPES = {"firewall": "Network - Firewall", "switch": "Network - Modular Switch",
          "storage": "Network - Storage", "printer": "Network - General Printer",
          "server": "Network - General Computer (Tower)"}
LINE_TYPES = ["Standard - Line", "Standard - PolyLine", "Standard - ZigZagLine"]


def topology(inputs: Path, variant: str) -> tuple[list[dict], list[dict], set[tuple[str, int]]]:
    def rows(name: str) -> list[dict]:
        with open(inputs / name, newline="") as f:
            return list(csv.DictReader(f))

    vlans, devices, ifaces = rows("subnets.csv"), rows("devices.csv"), rows("interfaces.csv")
    keep_all = variant == "unfiltered"
    active = {d["hostname"] for d in devices if keep_all or d["status"] == "in service"}
    nets = [(int(v["vlan"]), ipaddress.ip_network(v["network"])) for v in vlans]
    if variant == "slash24":  # every subnet taken as the /24 around it, first match wins
        nets = [(v, n.supernet(new_prefix=24) if n.prefixlen > 24 else n) for v, n in nets]
    links: set[tuple[str, int]] = set()
    for i in ifaces:
        if i["hostname"] not in active or not i["address"] or (i["admin"] != "up" and not keep_all):
            continue
        a = ipaddress.ip_address(i["address"])
        hit = [v for v, n in nets if a in n]
        if hit:
            links.add((i["hostname"], hit[0]))
    if variant == "fw-everywhere":
        fw = next(d["hostname"] for d in devices if d["role"] == "firewall")
        links = {(h, v) for h, v in links if (h, v) != (fw, 100)} | {(fw, 90), (fw, 900)}
    return vlans, [d for d in devices if d["hostname"] in active], links


def text_attr(label: str) -> str:
    return ('<dia:attribute name="text"><dia:composite type="text"><dia:attribute name="string">'
            f'<dia:string>#{escape(label)}#</dia:string></dia:attribute>'
            '<dia:attribute name="height"><dia:real val="0.6"/></dia:attribute>'
            '</dia:composite></dia:attribute>')


def obj(oid: str, kind: str, x: float, y: float, w: float, h: float, label: str | None) -> str:
    return (f'<dia:object type="{kind}" version="{1 if kind.startswith("Network") else 0}" id="{oid}">'
            f'<dia:attribute name="elem_corner"><dia:point val="{x:g},{y:g}"/></dia:attribute>'
            f'<dia:attribute name="elem_width"><dia:real val="{w:g}"/></dia:attribute>'
            f'<dia:attribute name="elem_height"><dia:real val="{h:g}"/></dia:attribute>'
            + (text_attr(label) if label is not None else "") + "</dia:object>")


def caption(oid: str, x: float, y: float, label: str) -> str:
    return (f'<dia:object type="Standard - Text" version="1" id="{oid}">'
            f'<dia:attribute name="obj_pos"><dia:point val="{x:g},{y:g}"/></dia:attribute>'
            + text_attr(label).replace("</dia:composite>",
                                       f'<dia:attribute name="pos"><dia:point val="{x:g},{y:g}"/></dia:attribute>'
                                       "</dia:composite>") + "</dia:object>")


def line(oid: str, kind: str, a: tuple[str, float, float], b: tuple[str, float, float], glued: bool) -> str:
    pts = f'<dia:point val="{a[1]:g},{a[2]:g}"/><dia:point val="{b[1]:g},{b[2]:g}"/>'
    attr = "orth_points" if kind == "Standard - ZigZagLine" else (
        "poly_points" if kind == "Standard - PolyLine" else "conn_endpoints")
    if kind == "Standard - ZigZagLine":
        mid = (a[2] + b[2]) / 2
        pts = (f'<dia:point val="{a[1]:g},{a[2]:g}"/><dia:point val="{a[1]:g},{mid:g}"/>'
               f'<dia:point val="{b[1]:g},{mid:g}"/><dia:point val="{b[1]:g},{b[2]:g}"/>')
        extra = ('<dia:attribute name="orth_orient"><dia:enum val="1"/><dia:enum val="0"/>'
                 '<dia:enum val="1"/></dia:attribute>')
    else:
        extra = ""
    last = 1
    conns = (f'<dia:connections><dia:connection handle="0" to="{a[0]}" connection="0"/>'
             f'<dia:connection handle="{last}" to="{b[0]}" connection="0"/></dia:connections>') if glued else ""
    return (f'<dia:object type="{kind}" version="0" id="{oid}">'
            f'<dia:attribute name="{attr}">{pts}</dia:attribute>{extra}{conns}</dia:object>')


def build(inputs: Path, variant: str = "oracle") -> bytes:
    vlans, devices, links = topology(inputs, variant)
    rng = random.Random(5)
    moved = variant == "moved"
    objects, where = [], {}
    for i, v in enumerate(vlans):
        vid = int(v["vlan"])
        x, y = (rng.uniform(0, 60), rng.uniform(0, 60)) if moved else (i * 9.0, 2.0)
        label = f"VLAN {vid} {v['name']}\n{v['network']}"
        objects.append(obj(f"V{vid}", "Flowchart - Box", x, y, 8, 2.4, label))
        where[vid] = (f"V{vid}", x, y)
    for i, d in enumerate(sorted(devices, key=lambda d: d["hostname"])):
        x, y = (rng.uniform(0, 60), rng.uniform(0, 60)) if moved else ((i % 9) * 9.0, 14.0 + (i // 9) * 10)
        kind = "Flowchart - Box" if moved else SHAPES.get(d["role"], "Flowchart - Box")
        label = d["hostname"] + (f"\n{d['model']}\n({d['role']})" if moved else "")
        if variant == "loose-labels":  # a plain box, its hostname in a text object beside it
            objects.append(obj(f"D{i}", "Standard - Box", x, y, 3, 3, None))
            objects.append(caption(f"T{i}", x + 3.5, y + 1.5, d["hostname"]))
        else:
            objects.append(obj(f"D{i}", kind, x, y, 3, 3, label))
        where[d["hostname"]] = (f"D{i}", x, y)
    lines = []
    for n, (h, vid) in enumerate(sorted(links)):
        if variant == "star":  # everything hung off the firewall, the VLAN boxes left floating
            fw = next(d["hostname"] for d in devices if d["role"] == "firewall")
            if h == fw:
                continue
            a, b = where[h], where[fw]
        else:
            a, b = where[h], where[vid]
        kind = LINE_TYPES[n % 3] if moved else "Standard - Line"
        ends = (b, a) if moved and n % 2 else (a, b)
        lines.append(line(f"L{n}", kind, *ends, glued=variant != "unglued"))
    body = lines + objects[::-1] if moved else objects + lines
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n'
           '<dia:diagram xmlns:dia="http://www.lysator.liu.se/~alla/dia/">'
           '<dia:layer name="Background" visible="true" active="true">'
           + "".join(body) + "</dia:layer></dia:diagram>\n")
    return gzip.compress(xml.encode(), mtime=0) if moved else xml.encode()


if __name__ == "__main__":
    Path(sys.argv[2]).write_bytes(build(Path(sys.argv[1]), sys.argv[3] if len(sys.argv) > 3 else "oracle"))
