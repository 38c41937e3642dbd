"""Seeded generator of inputs/ and reference/ for walkable-grocery-access: python3 generate.py --out DIR.

A river town on NAD83 / UTM zone 13N (EPSG:26913): an irregular street grid cut by a river
with two street bridges, a motorway crossing it on its own bridge with two interchanges,
footpaths, one-way streets; residential parcels with population; amenities (some closed or
only proposed) in a WGS84 GeoJSON; 40 vacant candidate lots for new groceries. The layout is
drawn again with the next seed until the best pair of sites is not the one a greedy pick finds.

inputs/city.gpkg            layers streets, parcels, candidate_sites, waterways (EPSG:26913)
inputs/amenities.geojson    amenities, RFC 7946 (WGS84 longitude, latitude)
inputs/access_standards.csv the walking-distance standard of each amenity type
reference/expected.json     distances per parcel, coverage, the optimal pair
"""

import argparse
import itertools
import json
import math
import os
import random
from pathlib import Path

os.environ["OGR_CURRENT_DATE"] = "2026-11-02T09:00:00.000Z"  # GeoPackage timestamps: byte-stable

import geopandas as gpd
import networkx as nx
from pyproj import Transformer
from shapely.geometry import LineString, Point, Polygon

SEED = 5682
CANARY = "4585233b-2ad8-4759-aa81-ad2b83077c02"
CRS = "EPSG:26913"
X0, Y0 = 497200.0, 4393400.0
NX, NY, STEP = 22, 20, 115.0
BRIDGE_COLS = (4, 17)
MOTORWAY_X = X0 + 10.5 * STEP
STANDARDS = {"grocery": 800.0, "school": 1000.0, "park": 400.0, "clinic": 1200.0}
COUNTS = {"grocery": 6, "school": 4, "park": 7, "clinic": 1}
WALKABLE = {"secondary", "residential", "footway"}


def river_y(x: float) -> float:
    return Y0 + 9.6 * STEP + 70.0 * math.sin(2 * math.pi * (x - X0) / 1500.0)


def build(rng: random.Random):
    nodes, edges = {}, []
    for i in range(NX):
        for j in range(NY):
            x = X0 + i * STEP + rng.uniform(-12, 12)
            y = Y0 + j * STEP + rng.uniform(-12, 12)
            if abs(y - river_y(x)) > 32:
                nodes[(i, j)] = (round(x, 2), round(y, 2))

    def side(p):
        return p[1] > river_y(p[0])

    for i in range(NX):
        for j in range(NY):
            for di, dj in ((1, 0), (0, 1)):
                a, b = (i, j), (i + di, j + dj)
                if a not in nodes or b not in nodes or side(nodes[a]) != side(nodes[b]):
                    continue
                cls = "secondary" if (dj == 0 and j % 5 == 0) or (di == 0 and i % 6 == 0) else "residential"
                edges.append([a, b, cls, False])
    for col in BRIDGE_COLS:
        below = max(j for j in range(NY) if (col, j) in nodes and not side(nodes[(col, j)]))
        above = min(j for j in range(NY) if (col, j) in nodes and side(nodes[(col, j)]))
        edges.append([(col, below), (col, above), "secondary", True])
    # irregular blocks: drop some local streets, keep bridges
    keep = []
    for e in edges:
        if not e[3] and e[2] == "residential" and rng.random() < 0.11:
            continue
        keep.append(e)
    edges = keep
    # footpaths across a few blocks
    for _ in range(10):
        i, j = rng.randrange(NX - 1), rng.randrange(NY - 1)
        a, b = (i, j), (i + 1, j + 1)
        if a in nodes and b in nodes and side(nodes[a]) == side(nodes[b]):
            edges.append([a, b, "footway", False])
    # motorway on its own alignment, grade-separated, two interchanges
    ys = [Y0 - 60 + k * 230.0 for k in range(11)]
    for k, y in enumerate(ys):
        nodes[("M", k)] = (round(MOTORWAY_X + rng.uniform(-3, 3), 2), round(y, 2))
    for k in range(len(ys) - 1):
        edges.append([("M", k), ("M", k + 1), "motorway", abs(ys[k] - river_y(MOTORWAY_X)) < 240 and
                      (ys[k] - river_y(MOTORWAY_X)) * (ys[k + 1] - river_y(MOTORWAY_X)) < 0])
    for k, col in ((4, 10), (6, 11)):
        near = min((n for n in nodes if n[0] == col and n in nodes),
                   key=lambda n: abs(nodes[n][1] - nodes[("M", k)][1]))
        edges.append([("M", k), near, "motorway_link", False])
    return nodes, edges


def walk_graph(nodes, edges, include=WALKABLE):
    g = nx.Graph()
    for a, b, cls, _ in edges:
        if cls in include:
            g.add_edge(a, b, length=math.dist(nodes[a], nodes[b]))
    return g


def snap(point, g, nodes):
    """Nearest node of g and the connector length; the margin to the runner-up."""
    d = sorted((math.dist(point, nodes[n]), n) for n in g.nodes)
    return d[0][1], d[0][0], d[1][0] - d[0][0]


def free_spots(rng, nodes, g, n):
    """Points in the middle of block quarters, away from the river and the motorway."""
    spots = []
    for i in range(NX - 1):
        for j in range(NY - 1):
            corners = [(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)]
            if not all(c in g for c in corners):
                continue
            for qi, qj in ((0, 0), (0, 1), (1, 0), (1, 1)):
                x = X0 + (i + 0.25 + 0.5 * qi) * STEP
                y = Y0 + (j + 0.25 + 0.5 * qj) * STEP
                if abs(y - river_y(x)) > 60 and abs(x - MOTORWAY_X) > 40:
                    spots.append((x, y))
    rng.shuffle(spots)
    return spots[:n]


def layout(seed: int):
    rng = random.Random(seed)
    nodes, edges = build(rng)
    g = walk_graph(nodes, edges)
    main = max(nx.connected_components(g), key=len)
    g = g.subgraph(main).copy()
    edges = [e for e in edges if (e[0] in main and e[1] in main) or e[2].startswith("motorway")]
    spots = free_spots(rng, nodes, g, 10_000)
    parcels, cands, amen = [], [], []
    for x, y in spots:
        pt = (x + rng.uniform(-6, 6), y + rng.uniform(-6, 6))
        if snap(pt, g, nodes)[2] < 1.0:
            continue
        if len(cands) < 40 and rng.random() < 0.07:
            cands.append(pt)
        elif len(amen) < sum(COUNTS.values()) + 2 and rng.random() < 0.05:
            amen.append(pt)
        elif rng.random() < 0.72:
            parcels.append(pt)
    return rng, nodes, edges, g, parcels, cands, amen


def distances_from(g, nodes, sources):
    """Walking distance to every node from the nearest of several (node, connector) sources."""
    h = g.copy()
    for k, (n, c) in enumerate(sources):
        h.add_edge(("S", k), n, length=c)
        h.add_edge("SRC", ("S", k), length=0.0)
    return nx.single_source_dijkstra_path_length(h, "SRC", weight="length")


def solve(g, nodes, parcels, cands, amen, pops):
    psnap = [snap(p, g, nodes) for p in parcels]
    dist = {}
    for t in STANDARDS:
        src = [snap(a["xy"], g, nodes)[:2] for a in amen if a["type"] == t and a["status"] == "open"]
        d = distances_from(g, nodes, src)
        dist[t] = [d[n] + c for n, c, _ in psnap]
    uncovered = {k for k, d in enumerate(dist["grocery"]) if d > STANDARDS["grocery"]}
    # how close any parcel comes to a standard's edge, so that rounding cannot flip coverage
    tight = min(abs(dist[t][k] - STANDARDS[t]) for t in STANDARDS for k in range(len(parcels)))
    covers = []
    for c in cands:
        n, conn, _ = snap(c, g, nodes)
        d = nx.single_source_dijkstra_path_length(g, n, cutoff=STANDARDS["grocery"] + 1.0, weight="length")
        tight = min([tight] + [abs(conn + d[psnap[k][0]] + psnap[k][1] - STANDARDS["grocery"])
                               for k in uncovered if psnap[k][0] in d])
        covers.append({k for k in uncovered if psnap[k][0] in d
                       and conn + d[psnap[k][0]] + psnap[k][1] <= STANDARDS["grocery"]})

    def pop(s):
        return sum(pops[k] for k in s)

    pairs = sorted(((pop(covers[a] | covers[b]), -a, -b) for a, b in itertools.combinations(range(len(cands)), 2)),
                   reverse=True)
    best = (-pairs[0][1], -pairs[0][2])
    first = max(range(len(cands)), key=lambda a: (pop(covers[a]), -a))
    second = max((b for b in range(len(cands)) if b != first), key=lambda b: (pop(covers[first] | covers[b]), -b))
    return dist, covers, best, tuple(sorted((first, second))), pairs[0][0] - pairs[1][0], pop, tight


def populate(rng, parcels, amen):
    pops, uses = [], []
    for _ in parcels:
        u = rng.random()
        if u < 0.1:
            uses.append("commercial")
            pops.append(0)
        else:
            uses.append("residential")
            v = rng.random()
            pops.append(rng.randint(2, 6) if v < 0.7 else rng.randint(8, 40) if v < 0.95 else rng.randint(60, 150))
    kinds = [(t, "open") for t, n in COUNTS.items() for _ in range(n)]
    kinds += [("grocery", "closed_permanently"), ("grocery", "proposed")]
    rng.shuffle(kinds)
    amenities = [{"xy": p, "type": t, "status": s} for p, (t, s) in zip(amen, kinds, strict=True)]
    return pops, uses, amenities


def attempt(seed: int):
    rng, nodes, edges, g, parcels, cands, amen = layout(seed)
    if len(amen) != sum(COUNTS.values()) + 2 or len(cands) != 40:
        return None
    pops, uses, amenities = populate(rng, parcels, amen)
    to_geo = Transformer.from_crs(CRS, "EPSG:4326", always_xy=True)
    back = Transformer.from_crs("EPSG:4326", CRS, always_xy=True)
    for a in amenities:
        lon, lat = to_geo.transform(*a["xy"])
        a["lonlat"] = (round(lon, 7), round(lat, 7))
        a["xy"] = back.transform(*a["lonlat"])
        if snap(a["xy"], g, nodes)[2] < 1.0:
            return None
    dist, covers, best, greedy, margin, pop, tight = solve(g, nodes, parcels, cands, amenities, pops)
    if best == greedy or margin < 5 or tight < 0.5:
        return None
    closed = [dict(a, status="open") if a["status"] == "closed_permanently" else a for a in amenities]
    dist_c = solve(g, nodes, parcels, cands, closed, pops)[0]["grocery"]
    changed = sum(p for p, a, b in zip(pops, dist["grocery"], dist_c, strict=True)
                  if (a <= STANDARDS["grocery"]) != (b <= STANDARDS["grocery"]))
    if changed < 0.03 * sum(pops):
        return None
    g_m = walk_graph(nodes, edges, WALKABLE | {"motorway", "motorway_link"})
    dist_m = solve(g_m, nodes, parcels, cands, amenities, pops)[0]
    moved = sum(abs(a - b) > 5 for t in STANDARDS for a, b in zip(dist[t], dist_m[t], strict=True))
    if moved < 0.1 * len(parcels):
        return None
    return rng, nodes, edges, g, parcels, cands, amenities, pops, uses, dist, covers, best, greedy, pop


def street_name(a, b, cls):
    if cls.startswith("motorway"):
        return "Clear Creek Expressway" if cls == "motorway" else "Clear Creek Expressway ramp"
    if cls == "footway":
        return "greenway path"
    if a[1] == b[1]:
        return f"{a[1] + 1}{'st' if a[1] % 10 == 0 else 'nd' if a[1] % 10 == 1 else 'rd' if a[1] % 10 == 2 else 'th'} Avenue"
    return ["Ash", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gold", "Hawthorn", "Iris", "Juniper", "Kipling",
            "Larch", "Maple", "Nelson", "Oak", "Pine", "Quail", "Rowan", "Spruce", "Teller", "Upham", "Vance"][a[0]] + " Street"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    seed = SEED
    while (made := attempt(seed)) is None:
        seed += 1
    rng, nodes, edges, g, parcels, cands, amenities, pops, uses, dist, covers, best, greedy, pop = made
    inp, ref = out / "inputs", out / "reference"
    inp.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    gpkg = inp / "city.gpkg"
    if gpkg.exists():
        gpkg.unlink()
    rows = []
    for k, (a, b, cls, bridge) in enumerate(edges):
        oneway = "yes" if (cls in ("residential", "secondary") and rng.random() < 0.18) or cls.startswith("motorway") else "no"
        coords = [nodes[a], nodes[b]] if rng.random() < 0.5 or oneway == "yes" else [nodes[b], nodes[a]]
        rows.append({"edge_id": f"E{k + 1:04d}", "name": street_name(a, b, cls), "highway": cls, "oneway": oneway, "bridge": "yes" if bridge else "no",
                     "geometry": LineString(coords)})
    gpd.GeoDataFrame(rows, crs=CRS).to_file(gpkg, layer="streets", driver="GPKG", engine="pyogrio")
    prow = []
    for k, ((x, y), p, u) in enumerate(zip(parcels, pops, uses, strict=True)):
        w, h = 16.0, 19.0
        prow.append({"parcel_id": f"P{k + 1:04d}", "land_use": u, "population": p,
                     "geometry": Polygon([(x - w, y - h), (x + w, y - h), (x + w, y + h), (x - w, y + h)])})
    gpd.GeoDataFrame(prow, crs=CRS).to_file(gpkg, layer="parcels", driver="GPKG", engine="pyogrio")
    crow = [{"site_id": f"C{k + 1:02d}", "lot_status": "vacant", "geometry": Point(round(c[0], 2), round(c[1], 2))}
            for k, c in enumerate(cands)]
    gpd.GeoDataFrame(crow, crs=CRS).to_file(gpkg, layer="candidate_sites", driver="GPKG", engine="pyogrio")
    xs = [X0 - 150 + 25.0 * k for k in range(int((NX * STEP + 300) / 25))]
    river = LineString([(round(x, 2), round(river_y(x), 2)) for x in xs])
    gpd.GeoDataFrame([{"name": "Clear Creek", "waterway": "river", "geometry": river}], crs=CRS).to_file(
        gpkg, layer="waterways", driver="GPKG", engine="pyogrio")
    names = {"grocery": ["FreshWay", "Ridge Market", "Corner Grocer", "Valley Foods", "Prairie Pantry",
                         "Creekside Market", "Sunrise Grocery", "Town Fresh"],
             "school": ["Lincoln Elementary", "Garfield Elementary", "Bryant Middle", "Hayes Elementary"],
             "park": ["Riverside Park", "Aspen Green", "Miller Park", "Quarry Commons", "Depot Square",
                      "Hilltop Park", "Willow Pocket Park"],
             "clinic": ["Clear Creek Health Center", "Eastside Family Clinic"]}
    used = {t: 0 for t in names}
    feats = []
    for k, a in enumerate(amenities):
        name = names[a["type"]][used[a["type"]]]
        used[a["type"]] += 1
        feats.append({"type": "Feature", "properties": {"amenity_id": f"A{k + 1:02d}", "name": name,
                      "category": a["type"], "status": a["status"]},
                      "geometry": {"type": "Point", "coordinates": list(a["lonlat"])}})
    (inp / "amenities.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": feats}, indent=1) + "\n")
    (inp / "access_standards.csv").write_text(
        "category,max_walk_m,note\n" + "".join(f"{t},{int(v)},{NOTE[t]}\n" for t, v in STANDARDS.items()))

    total = sum(pops)
    within = [sum(d <= STANDARDS[t] for t in STANDARDS for d in [dist[t][k]]) for k in range(len(parcels))]
    coverage = {t: sum(p for p, d in zip(pops, dist[t], strict=True) if d <= STANDARDS[t]) for t in STANDARDS}
    expected = {
        "canary": CANARY, "seed_used": seed, "total_population": total,
        "parcels": {f"P{k + 1:04d}": {**{f"dist_{t}_m": round(dist[t][k], 2) for t in STANDARDS},
                                     "types_within": within[k], "population": pops[k]} for k in range(len(parcels))},
        "coverage": {t: {"population_within": coverage[t], "share_pct": round(100 * coverage[t] / total, 4)}
                     for t in STANDARDS},
        "best_pair": [f"C{best[0] + 1:02d}", f"C{best[1] + 1:02d}"],
        "best_new_population": pop(covers[best[0]] | covers[best[1]]),
        "greedy_pair": [f"C{greedy[0] + 1:02d}", f"C{greedy[1] + 1:02d}"],
        "greedy_new_population": pop(covers[greedy[0]] | covers[greedy[1]]),
        "single_site_new_population": {f"C{k + 1:02d}": pop(c) for k, c in enumerate(covers)},
    }
    (ref / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


NOTE = {"grocery": "full-line grocery store", "school": "public elementary or middle school",
        "park": "public park of any size", "clinic": "primary care clinic"}


if __name__ == "__main__":
    main()
