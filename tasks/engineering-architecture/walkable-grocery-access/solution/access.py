"""Oracle for walkable-grocery-access: GeoPandas for the layers, NetworkX for the walk network,
exact maximal-covering choice of two sites by enumerating every pair.

Flags reproduce professional mistakes for the negative fixtures (default: none).
"""

import argparse
import itertools
import json
from pathlib import Path

import geopandas as gpd
import networkx as nx
import numpy as np
import pandas as pd

NOT_WALKABLE = {"motorway", "motorway_link"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--motorway", action="store_true", help="walk on the expressway")
    ap.add_argument("--count-closed", action="store_true", help="closed and proposed stores count")
    ap.add_argument("--greedy", action="store_true", help="best site, then best second site")
    ap.add_argument("--euclid", type=float, default=0.0, help="straight-line distance times this factor")
    ap.add_argument("--oneway", action="store_true", help="respect one-way streets on foot")
    a = ap.parse_args()

    city = a.inputs / "city.gpkg"
    streets = gpd.read_file(city, layer="streets")
    parcels = gpd.read_file(city, layer="parcels")
    sites = gpd.read_file(city, layer="candidate_sites")
    amen = gpd.read_file(a.inputs / "amenities.geojson").to_crs(parcels.crs)
    if not a.count_closed:
        amen = amen[amen["status"] == "open"]
    std = pd.read_csv(a.inputs / "access_standards.csv").set_index("category")["max_walk_m"]

    walk = streets if a.motorway else streets[~streets["highway"].isin(NOT_WALKABLE)]
    g = nx.DiGraph() if a.oneway else nx.Graph()
    for geom, oneway in zip(walk.geometry, walk["oneway"], strict=True):
        p, q = geom.coords[0], geom.coords[-1]
        g.add_edge(p, q, length=geom.length)
        if a.oneway and oneway != "yes":
            g.add_edge(q, p, length=geom.length)
    node_xy = np.array(list(g.nodes))
    node_ids = list(g.nodes)

    def snap(points: gpd.GeoSeries) -> list[tuple[tuple, float]]:
        out = []
        for pt in points:
            d = np.hypot(node_xy[:, 0] - pt.x, node_xy[:, 1] - pt.y)
            k = int(np.argmin(d))
            out.append((node_ids[k], float(d[k])))
        return out

    pc = parcels.geometry.centroid
    p_snap = snap(pc)
    result = pd.DataFrame({"parcel_id": parcels["parcel_id"]})
    for cat in ["grocery", "school", "park", "clinic"]:
        pts = amen[amen["category"] == cat]
        if a.euclid:
            d = np.array([pc.distance(pt).to_numpy() for pt in pts.geometry]).min(axis=0) * a.euclid
        else:
            # on a directed network, search the reversed graph: distance from the parcel to the amenity
            h = g.reverse(copy=True) if a.oneway else g.copy()
            for k, (n, c) in enumerate(snap(pts.geometry)):
                h.add_edge(("src", k), n, length=c)
                h.add_edge("SRC", ("src", k), length=0.0)
            dist = nx.single_source_dijkstra_path_length(h, "SRC", weight="length")
            d = np.array([dist.get(n, np.inf) + c for n, c in p_snap])
        result[f"dist_{cat}_m"] = d
    result["types_within"] = sum((result[f"dist_{c}_m"] <= std[c]).astype(int) for c in std.index)

    pop = parcels["population"].to_numpy()
    total = int(pop.sum())
    cov = pd.DataFrame({"category": list(std.index)})
    cov["population_within"] = [int(pop[(result[f"dist_{c}_m"] <= std[c]).to_numpy()].sum()) for c in std.index]
    cov["share_pct"] = (100 * cov["population_within"] / total).round(2)

    limit = std["grocery"]
    uncovered = set(np.flatnonzero(result["dist_grocery_m"].to_numpy() > limit))
    covers = []
    for pt, (n, c) in zip(sites.geometry, snap(sites.geometry), strict=True):
        if a.euclid:
            d = pc.distance(pt).to_numpy() * a.euclid
            covers.append({k for k in uncovered if d[k] <= limit})
            continue
        dist = nx.single_source_dijkstra_path_length(g.reverse() if a.oneway else g, n, cutoff=limit, weight="length")
        covers.append({k for k in uncovered if p_snap[k][0] in dist and c + dist[p_snap[k][0]] + p_snap[k][1] <= limit})

    def gain(s: set) -> int:
        return int(pop[list(s)].sum()) if s else 0

    ids = list(sites["site_id"])
    if a.greedy:
        first = max(range(len(ids)), key=lambda i: (gain(covers[i]), -i))
        second = max((j for j in range(len(ids)) if j != first), key=lambda j: (gain(covers[first] | covers[j]), -j))
        pair = tuple(sorted((first, second)))
    else:
        pair = max(itertools.combinations(range(len(ids)), 2),
                   key=lambda ij: (gain(covers[ij[0]] | covers[ij[1]]), -ij[0], -ij[1]))
    new = gain(covers[pair[0]] | covers[pair[1]])

    a.out.mkdir(parents=True, exist_ok=True)
    result.round({f"dist_{c}_m": 1 for c in std.index}).to_csv(a.out / "access.csv", index=False)
    cov.to_csv(a.out / "coverage.csv", index=False)
    before = int(cov.set_index("category").loc["grocery", "population_within"])
    rec = {"sites": [ids[pair[0]], ids[pair[1]]], "new_population_covered": new,
           "grocery_population_before": before, "grocery_population_after": before + new}
    (a.out / "recommendation.json").write_text(json.dumps(rec, indent=2) + "\n")


if __name__ == "__main__":
    main()
