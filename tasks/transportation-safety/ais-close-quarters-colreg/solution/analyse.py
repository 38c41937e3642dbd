"""Oracle: decode the AIS log with pyais, build dead-reckoned one-minute tracks, screen every
pair for close-quarters situations with pyproj geodesics, classify them by COLREG rules 13-15.

usage: analyse.py LOG OUTPUT_DIR
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import sys
from pathlib import Path

import pandas as pd
from pyais.stream import FileReaderStream
from pyproj import Geod

GEOD = Geod(ellps="WGS84")
START = dt.datetime(2024, 3, 5, 6, 0, tzinfo=dt.UTC)
END = dt.datetime(2024, 3, 5, 8, 0, tzinfo=dt.UTC)
STALE_S = 180
POSITION_TYPES = {1, 2, 3, 18}


def decode(log: Path) -> tuple[pd.DataFrame, dict[int, dict]]:
    reports, static = [], {}
    for msg in FileReaderStream(str(log)):
        if not msg.is_valid:
            continue
        tb = msg.tag_block
        if tb is None:
            continue
        tb.init()
        t = int(tb.receiver_timestamp)
        try:
            d = msg.decode().asdict()
        except Exception:  # pyais raises several types on undecodable payloads
            continue
        mt, mmsi = d["msg_type"], int(d["mmsi"])
        if mt in POSITION_TYPES:
            if d["lat"] == 91.0 or d["lon"] == 181.0 or d["speed"] >= 102.3 or d["course"] >= 360.0:
                continue
            status = int(d["status"]) if mt != 18 else None
            reports.append({"mmsi": mmsi, "t": t, "lat": d["lat"], "lon": d["lon"], "sog": d["speed"],
                            "cog": d["course"], "status": status, "cls": "B" if mt == 18 else "A"})
        elif mt == 5:
            static.setdefault(mmsi, {}).update(
                cls="A", name=d["shipname"].strip(), callsign=d["callsign"].strip(), ship_type=int(d["ship_type"]),
                length_m=d["to_bow"] + d["to_stern"], beam_m=d["to_port"] + d["to_starboard"])
        elif mt == 24:
            s = static.setdefault(mmsi, {"cls": "B"})
            if d["partno"] == 0:
                s["name"] = d["shipname"].strip()
            else:
                s.update(callsign=d["callsign"].strip(), ship_type=int(d["ship_type"]),
                         length_m=d["to_bow"] + d["to_stern"], beam_m=d["to_port"] + d["to_starboard"])
    df = pd.DataFrame(reports).drop_duplicates(["mmsi", "t", "lat", "lon", "sog", "cog"])
    return df.sort_values(["mmsi", "t"]).reset_index(drop=True), static


def minute_states(df: pd.DataFrame) -> pd.DataFrame:
    t0 = int(START.timestamp())
    grid = pd.DataFrame({"minute": range(t0, int(END.timestamp()) + 1, 60)})
    rows = []
    for mmsi, g in df.groupby("mmsi"):
        m = pd.merge_asof(grid, g.rename(columns={"t": "t_rep"}), left_on="minute", right_on="t_rep",
                          direction="backward")
        m = m[(m["t_rep"].notna()) & (m["minute"] - m["t_rep"] <= STALE_S)].copy()
        m["mmsi"] = mmsi
        rows.append(m)
    st = pd.concat(rows, ignore_index=True)
    dist = st["sog"] * 1852.0 / 3600.0 * (st["minute"] - st["t_rep"])
    lon, lat, _ = GEOD.fwd(st["lon"].to_numpy(), st["lat"].to_numpy(), st["cog"].to_numpy(), dist.to_numpy())
    st["lat"], st["lon"] = lat, lon
    st["underway"] = (st["sog"] >= 1.0) & ~st["status"].isin([1, 5])
    return st


def cpa(a, b):
    az_ab, az_ba, dist = GEOD.inv(a.lon, a.lat, b.lon, b.lat)
    rng = dist / 1852.0
    rx, ry = rng * math.sin(math.radians(az_ab)), rng * math.cos(math.radians(az_ab))
    dvx = b.sog * math.sin(math.radians(b.cog)) - a.sog * math.sin(math.radians(a.cog))
    dvy = b.sog * math.cos(math.radians(b.cog)) - a.sog * math.cos(math.radians(a.cog))
    dv2 = dvx * dvx + dvy * dvy
    t = 0.0 if dv2 < 1e-12 else -(rx * dvx + ry * dvy) / dv2
    return math.hypot(rx + dvx * t, ry + dvy * t), 60.0 * t, rng, az_ab % 360.0, az_ba % 360.0


def classify(a, b, brg_ab, brg_ba):
    rel_ab = (brg_ab - a.cog) % 360.0
    rel_ba = (brg_ba - b.cog) % 360.0
    if 112.5 <= rel_ba <= 247.5 and a.sog > b.sog:
        return "overtaking", str(a.mmsi)
    if 112.5 <= rel_ab <= 247.5 and b.sog > a.sog:
        return "overtaking", str(b.mmsi)
    reciprocal = abs((a.cog - b.cog + 540.0) % 360.0 - 180.0) >= 170.0
    if reciprocal and min(rel_ab, 360 - rel_ab) <= 10.0 and min(rel_ba, 360 - rel_ba) <= 10.0:
        return "head-on", "both"
    return ("crossing", str(a.mmsi)) if 0.0 < rel_ab <= 112.5 else ("crossing", str(b.mmsi))


def iso(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    log, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    df, static = decode(log)
    st = minute_states(df)

    with open(out / "vessels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mmsi", "class", "name", "callsign", "ship_type", "length_m", "beam_m"])
        classes = df.groupby("mmsi")["cls"].first()
        for mmsi in sorted(classes.index):
            s = static.get(mmsi, {})
            w.writerow([mmsi, classes[mmsi], s.get("name", ""), s.get("callsign", ""), s.get("ship_type", ""),
                        s.get("length_m", ""), s.get("beam_m", "")])

    with open(out / "tracks.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mmsi", "time", "lat", "lon", "sog_kn", "cog_deg"])
        for r in st.sort_values(["mmsi", "minute"]).itertuples():
            w.writerow([r.mmsi, iso(r.minute), f"{r.lat:.7f}", f"{r.lon:.7f}", f"{r.sog:.1f}", f"{r.cog:.1f}"])

    by_minute = {m: g.set_index("mmsi") for m, g in st.groupby("minute")}
    ids = sorted(st["mmsi"].unique())
    rows = []
    for i, ma in enumerate(ids):
        for mb in ids[i + 1:]:
            first, min_range = None, None
            for minute in sorted(by_minute):
                g = by_minute[minute]
                if ma not in g.index or mb not in g.index:
                    continue
                a, b = g.loc[ma].copy(), g.loc[mb].copy()
                a["mmsi"], b["mmsi"] = ma, mb
                c, tc, rng, bab, bba = cpa(a, b)
                min_range = rng if min_range is None else min(min_range, rng)
                if first is None and a.underway and b.underway and c < 0.5 and 0.0 <= tc <= 12.0:
                    situation, give_way = classify(a, b, bab, bba)
                    first = [ma, mb, iso(minute), f"{c:.4f}", f"{tc:.3f}", None, situation, give_way]
            if first is not None:
                first[5] = f"{min_range:.4f}"
                rows.append(first)
    with open(out / "encounters.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mmsi_a", "mmsi_b", "first_alert", "cpa_nm", "tcpa_min", "min_range_nm", "situation", "give_way"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
