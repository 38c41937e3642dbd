"""Seeded generator of a two-hour AIS receiver log off the Maas approaches (inputs/) and of the
analysis the instruction defines, computed from exactly the reported values (reference/).

Thirteen vessels (ten class A, three class B) follow smooth piecewise courses; their position
and static reports are encoded with pyais into !AIVDM sentences behind NMEA 4.0 tag blocks.
The log carries what real shore-station feeds carry: multipart type 5 messages interleaved
with other traffic, lost fragments, duplicates from a second receiver, sentences corrupted in
transit (bad checksums), 'not available' values and a coverage gap.

    python3 generate.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from pyais import encode_dict
from pyproj import Geod

SEED = 77_2024
CANARY = "bcf09770-f0d3-4000-9085-7514e2981b0c"
T0 = 1709618400  # 2024-03-05T06:00:00Z
SPAN = 7200
LAT0, LON0 = 52.02, 3.86
GEOD = Geod(ellps="WGS84")
ROT = 1.0  # deg/s turn rate of course changes
STALE = 180  # s
CPA_LIMIT, TCPA_LIMIT = 0.5, 12.0
STATIONS = ("2573345", "2573485")

# mmsi, class, name, callsign, ship type, bow, stern, port, stbd, drift (heading - COG),
# anchor (t, x, y) in s and NM, schedule [(t, course, speed)], active [t_on, t_off], status
VESSELS = [
    dict(mmsi=244670231, cls="A", name="NORDIC STAR", call="PDKL", type=70, dims=(110, 22, 8, 9), drift=2.0,
         anchor=(1800, 0.0, 0.0), sched=[(0, 88.0, 12.0)], active=(0, 4200), status=0, msg=1),
    dict(mmsi=636019825, cls="A", name="MAAS TRADER", call="D5QX7", type=80, dims=(160, 23, 12, 14), drift=-3.0,
         anchor=(1800, 0.0, 0.25), sched=[(0, 268.0, 11.0)], active=(300, 2200), status=0, msg=1),
    dict(mmsi=211483920, cls="A", name="ELBE EXPRESS", call="DGHT2", type=71, dims=(180, 42, 15, 15), drift=1.0,
         anchor=(3000, 4.0, -3.0), sched=[(0, 355.0, 15.0)], active=(1500, 3500), status=0, msg=1),
    dict(mmsi=235098411, cls="A", name="STENA SCOUT", call="2FPQ8", type=60, dims=(190, 50, 14, 16), drift=-2.0,
         anchor=(3000, 4.45, -2.78), sched=[(0, 265.0, 17.0)], active=(1800, 4800), status=0, msg=3),
    dict(mmsi=244010582, cls="A", name="RIJN 7", call="PD3391", type=79, dims=(95, 15, 6, 5), drift=10.0,
         anchor=(4200, -3.0, 2.0), sched=[(0, 45.0, 7.5)], active=(2400, 6600), status=0, msg=1),
    dict(mmsi=538007126, cls="A", name="ATLANTIC HOPE", call="V7AB9", type=84, dims=(200, 40, 18, 18), drift=0.0,
         anchor=(4200, -2.802, 2.026), sched=[(0, 22.0, 12.1)], active=(2700, 6300), status=0, msg=1),
    dict(mmsi=244290047, cls="B", name="SEA BREEZE", call="PE7245", type=36, dims=(9, 3, 2, 2), drift=None,
         anchor=(5400, 1.679, 5.089), sched=[(0, 210.0, 6.0)], active=(3900, 7200), status=None, msg=18),
    dict(mmsi=245112009, cls="A", name="DREDGER 5", call="PCRT", type=33, dims=(70, 28, 10, 10), drift=4.0,
         anchor=(5400, 1.5, 5.0), sched=[(0, 20.0, 9.0), (4500, 300.0, 9.0)], active=(2400, 7200), status=0, msg=1),
    dict(mmsi=244730118, cls="A", name="NOORD 12", call="PF5521", type=52, dims=(24, 8, 5, 5), drift=-15.0,
         anchor=(6300, -1.0, -4.0), sched=[(0, 180.0, 7.0)], active=(4800, 7200), status=0, msg=1),
    dict(mmsi=265547700, cls="A", name="BALTIC FERN", call="SFRT", type=70, dims=(120, 20, 9, 9), drift=-10.0,
         anchor=(6300, -0.413, -3.72), sched=[(0, 320.0, 12.0)], active=(4500, 7200), status=0, msg=2),
    dict(mmsi=273351900, cls="A", name="KAPITAN ORLOV", call="UBDE4", type=80, dims=(150, 30, 13, 13), drift=0.0,
         anchor=(0, -3.0, -0.45), sched=[(0, 123.0, 0.0)], active=(0, 7200), status=1, msg=3),
    dict(mmsi=244600014, cls="A", name="PILOT 14", call="PHQS", type=50, dims=(18, 4, 3, 3), drift=0.0,
         anchor=(0, 8.0, 6.0), sched=[(0, 200.0, 14.0), (900, 110.0, 10.0), (2100, 20.0, 12.0), (3300, 290.0, 8.0),
                                      (5100, 180.0, 11.0)], active=(0, 7200), status=0, msg=1),
    dict(mmsi=244015390, cls="B", name="WINDSONG", call="PB2207", type=37, dims=(11, 3, 2, 2), drift=None,
         anchor=(0, -8.0, 7.0), sched=[(0, 60.0, 4.2)], active=(0, 7200), status=None, msg=18),
]
GAP = (244600014, 2400, 2850)  # PILOT 14 behind the pier: no reception
NOT_AVAILABLE = (244600014, (1230, 1240, 5010))  # reports with SOG and position not available


def course_speed(sched, t: float) -> tuple[float, float]:
    c, s = sched[0][1], sched[0][2]
    for t_i, c_i, s_i in sched[1:]:
        if t < t_i:
            break
        turn = (c_i - c + 540.0) % 360.0 - 180.0
        dur = max(abs(turn) / ROT, 1.0)
        f = min(1.0, (t - t_i) / dur)
        c, s = (c + f * turn) % 360.0, s + f * (s_i - s)
    return c, s


def trajectory(v) -> np.ndarray:
    """x, y (NM) and course, speed at every second of the log."""
    out = np.zeros((SPAN + 1, 4))
    ta, xa, ya = v["anchor"]
    out[ta, :2] = xa, ya
    for t in range(SPAN + 1):
        out[t, 2:] = course_speed(v["sched"], t)
    for t in range(ta + 1, SPAN + 1):
        c, s = out[t - 1, 2:]
        out[t, 0] = out[t - 1, 0] + s / 3600.0 * math.sin(math.radians(c))
        out[t, 1] = out[t - 1, 1] + s / 3600.0 * math.cos(math.radians(c))
    for t in range(ta - 1, -1, -1):
        c, s = out[t, 2:]
        out[t, 0] = out[t + 1, 0] - s / 3600.0 * math.sin(math.radians(c))
        out[t, 1] = out[t + 1, 1] - s / 3600.0 * math.cos(math.radians(c))
    return out


def to_latlon(x: float, y: float) -> tuple[float, float]:
    return LAT0 + y / 60.0, LON0 + x / (60.0 * math.cos(math.radians(LAT0)))


def nmea_checksum(body: str) -> str:
    c = 0
    for ch in body:
        c ^= ord(ch)
    return f"{c:02X}"


def tagged(sentence: str, t: int, station: str) -> str:
    tb = f"s:{station},c:{t}"
    return f"\\{tb}*{nmea_checksum(tb)}\\{sentence}"


def corrupt(sentence: str, rng) -> str:
    """Flip one payload character; the sentence checksum no longer matches."""
    head, payload, tail = sentence.split(",", 5)[:5], sentence.split(",")[5], sentence.split(",")[6]
    i = int(rng.integers(0, len(payload)))
    alphabet = "0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVW`abcdefghijklmnopqrstuvw"
    ch = alphabet[(alphabet.index(payload[i]) + int(rng.integers(1, 60))) % len(alphabet)]
    return ",".join([*head, payload[:i] + ch + payload[i + 1:], tail])


def build_log(rng) -> tuple[list[tuple[int, int, str]], list[dict]]:
    """(time, order, line) of the receiver log and the valid position reports as decoded."""
    lines: list[tuple[int, int, str]] = []
    reports: list[dict] = []
    seq = 0
    order = 0
    for v in VESSELS:
        traj = trajectory(v)
        cls_a = v["cls"] == "A"
        t_on, t_off = v["active"]
        t = t_on + int(rng.integers(0, 10))
        next_static = t_on + int(rng.integers(5, 60))
        while t <= t_off:
            x, y, c, s = traj[t]
            if cls_a:
                interval = 180 if v["status"] == 1 else (6 if s > 14.0 else 10)
            else:
                interval = 30
            gap = v["mmsi"] == GAP[0] and GAP[1] <= t < GAP[2]
            lost = rng.random() < 0.04
            if not gap and not lost:
                lat, lon = to_latlon(x, y)
                sog = round(max(0.0, s + (rng.normal(0, 0.05) if s > 0.5 else abs(rng.normal(0, 0.05)))), 1)
                cog = round((c + rng.normal(0, 0.4)) % 360.0, 1) % 360.0
                hdg = 511 if v["drift"] is None else int(round(c + v["drift"] + rng.normal(0, 0.7))) % 360
                lat_q = round(lat * 600000) / 600000
                lon_q = round(lon * 600000) / 600000
                na = v["mmsi"] == NOT_AVAILABLE[0] and any(abs(t - k) < interval for k in NOT_AVAILABLE[1])
                if na:
                    fields = {"lat": 91.0, "lon": 181.0, "speed": 102.3, "course": 360.0}
                else:
                    fields = {"lat": lat_q, "lon": lon_q, "speed": sog, "course": cog}
                if cls_a:
                    msg = {"msg_type": v["msg"], "mmsi": v["mmsi"], "status": v["status"], "heading": hdg,
                           "second": t % 60, "turn": 0.0, **fields}
                else:
                    msg = {"msg_type": 18, "mmsi": v["mmsi"], "heading": hdg, "second": t % 60, "cs": True, **fields}
                sentence = encode_dict(msg, talker_id="AI", sentence_type="VDM", radio_channel="AB"[order % 2])[0]
                bad = rng.random() < 0.012
                station = STATIONS[0] if rng.random() < 0.8 else STATIONS[1]
                lines.append((t, order, tagged(corrupt(sentence, rng) if bad else sentence, T0 + t, station)))
                order += 1
                if not bad and rng.random() < 0.08:
                    other = STATIONS[1] if station == STATIONS[0] else STATIONS[0]
                    lines.append((t, order, tagged(sentence, T0 + t, other)))
                    order += 1
                if not bad and not na:
                    reports.append({"mmsi": v["mmsi"], "t": t, "lat": lat_q, "lon": lon_q, "sog": sog, "cog": cog,
                                    "status": v["status"]})
            if t >= next_static and not gap:
                bow, stern, port, stbd = v["dims"]
                dims = {"to_bow": bow, "to_stern": stern, "to_port": port, "to_starboard": stbd}
                if cls_a:
                    seq = seq % 9 + 1
                    parts = encode_dict({"msg_type": 5, "mmsi": v["mmsi"], "shipname": v["name"], "callsign": v["call"],
                                         "ship_type": v["type"], "imo": 9000000 + v["mmsi"] % 999983, "draught": 6.4,
                                         "destination": "NLRTM", **dims},
                                        talker_id="AI", sentence_type="VDM", radio_channel="B", seq_id=seq)
                    drop2 = rng.random() < 0.2
                    lines.append((t + 1, order, tagged(parts[0], T0 + t + 1, STATIONS[0])))
                    order += 1
                    if not drop2:
                        # Another vessel's report usually lands between the two fragments.
                        lines.append((t + 1, order + 5000000, tagged(parts[1], T0 + t + 1, STATIONS[0])))
                        order += 1
                else:
                    pa = encode_dict({"msg_type": 24, "mmsi": v["mmsi"], "partno": 0, "shipname": v["name"]},
                                     talker_id="AI", sentence_type="VDM", radio_channel="A")[0]
                    pb = encode_dict({"msg_type": 24, "mmsi": v["mmsi"], "partno": 1, "ship_type": v["type"],
                                      "callsign": v["call"], "vendorid": "SRT", **dims},
                                     talker_id="AI", sentence_type="VDM", radio_channel="A")[0]
                    lines.append((t + 2, order, tagged(pa, T0 + t + 2, STATIONS[0])))
                    lines.append((t + 3, order + 1, tagged(pb, T0 + t + 3, STATIONS[0])))
                    order += 2
                next_static = t + 360
            t += interval
    return lines, reports


def order_log(lines):
    """Receiver order: by time; a type 5 second fragment follows one other sentence of its second."""
    lines = sorted(lines, key=lambda r: (r[0], r[1] % 5000000, r[1] >= 5000000))
    out = []
    pending = None
    for _t, o, line in lines:
        if o >= 5000000:
            pending = line
            continue
        out.append(line)
        if pending is not None:
            out.append(pending)
            pending = None
    if pending is not None:
        out.append(pending)
    return out


# ---------------------------------------------------------------- the defined analysis
def states(reports: list[dict]) -> dict[int, dict[int, dict]]:
    """mmsi -> minute (s from T0) -> dead-reckoned state from the latest report <= 180 s old."""
    by = {}
    for r in sorted(reports, key=lambda r: (r["mmsi"], r["t"])):
        by.setdefault(r["mmsi"], []).append(r)
    out = {}
    for mmsi, reps in sorted(by.items()):
        times = [r["t"] for r in reps]
        out[mmsi] = {}
        for minute in range(0, SPAN + 1, 60):
            k = int(np.searchsorted(times, minute, side="right")) - 1
            if k < 0 or minute - times[k] > STALE:
                continue
            r = reps[k]
            dist = r["sog"] * 1852.0 / 3600.0 * (minute - r["t"])
            lon, lat, _ = GEOD.fwd(r["lon"], r["lat"], r["cog"], dist)
            out[mmsi][minute] = {"lat": lat, "lon": lon, "sog": r["sog"], "cog": r["cog"],
                                 "underway": r["sog"] >= 1.0 and r["status"] not in (1, 5)}
    return out


def cpa(a: dict, b: dict) -> tuple[float, float, float, float, float]:
    """CPA (NM), TCPA (min), range (NM) and true bearings A->B, B->A."""
    az_ab, az_ba, dist = GEOD.inv(a["lon"], a["lat"], b["lon"], b["lat"])
    rng = dist / 1852.0
    rx, ry = rng * math.sin(math.radians(az_ab)), rng * math.cos(math.radians(az_ab))
    va = (a["sog"] * math.sin(math.radians(a["cog"])), a["sog"] * math.cos(math.radians(a["cog"])))
    vb = (b["sog"] * math.sin(math.radians(b["cog"])), b["sog"] * math.cos(math.radians(b["cog"])))
    dvx, dvy = vb[0] - va[0], vb[1] - va[1]
    dv2 = dvx * dvx + dvy * dvy
    tcpa_h = 0.0 if dv2 < 1e-12 else -(rx * dvx + ry * dvy) / dv2
    cx, cy = rx + dvx * tcpa_h, ry + dvy * tcpa_h
    return math.hypot(cx, cy), tcpa_h * 60.0, rng, az_ab % 360.0, az_ba % 360.0


def classify(a: dict, b: dict, brg_ab: float, brg_ba: float, mmsi_a: int, mmsi_b: int) -> tuple[str, str]:
    rel_ab = (brg_ab - a["cog"]) % 360.0  # where A sees B, from A's course
    rel_ba = (brg_ba - b["cog"]) % 360.0
    if 112.5 <= rel_ba <= 247.5 and a["sog"] > b["sog"]:
        return "overtaking", str(mmsi_a)
    if 112.5 <= rel_ab <= 247.5 and b["sog"] > a["sog"]:
        return "overtaking", str(mmsi_b)
    diff = abs((a["cog"] - b["cog"] + 540.0) % 360.0 - 180.0)
    ahead_a = min(rel_ab, 360.0 - rel_ab) <= 10.0
    ahead_b = min(rel_ba, 360.0 - rel_ba) <= 10.0
    if diff >= 170.0 and ahead_a and ahead_b:
        return "head-on", "both"
    if 0.0 < rel_ab <= 112.5:
        return "crossing", str(mmsi_a)
    return "crossing", str(mmsi_b)


def encounters(st: dict) -> list[dict]:
    out = []
    ids = sorted(st)
    for i, ma in enumerate(ids):
        for mb in ids[i + 1:]:
            common = sorted(set(st[ma]) & set(st[mb]))
            first = None
            min_range = None
            for minute in common:
                a, b = st[ma][minute], st[mb][minute]
                c, tc, rng, bab, bba = cpa(a, b)
                min_range = rng if min_range is None else min(min_range, rng)
                if first is None and a["underway"] and b["underway"] and c < CPA_LIMIT and 0.0 <= tc <= TCPA_LIMIT:
                    situation, give_way = classify(a, b, bab, bba, ma, mb)
                    first = {"mmsi_a": ma, "mmsi_b": mb, "minute": minute, "cpa_nm": c, "tcpa_min": tc,
                             "situation": situation, "give_way": give_way}
            if first is not None:
                first["min_range_nm"] = min_range
                out.append(first)
    return out


def iso(minute: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(T0 + minute, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    out = ap.parse_args().out
    rng = np.random.default_rng(SEED)
    lines, reports = build_log(rng)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "inputs" / "ais_log.nmea").write_text("\n".join(order_log(lines)) + "\n")

    st = states(reports)
    enc = encounters(st)
    tracks = [{"mmsi": m, "time": iso(k), "lat": round(s["lat"], 7), "lon": round(s["lon"], 7),
               "sog_kn": s["sog"], "cog_deg": s["cog"]} for m in sorted(st) for k, s in sorted(st[m].items())]
    vessels = [{"mmsi": v["mmsi"], "class": v["cls"], "name": v["name"], "callsign": v["call"], "ship_type": v["type"],
                "length_m": v["dims"][0] + v["dims"][1], "beam_m": v["dims"][2] + v["dims"][3]}
               for v in sorted(VESSELS, key=lambda v: v["mmsi"])]
    ref = {
        "canary": CANARY,
        "vessels": vessels,
        "encounters": [{**{k: e[k] for k in ("mmsi_a", "mmsi_b", "situation", "give_way")}, "first_alert": iso(e["minute"]),
                        "cpa_nm": round(e["cpa_nm"], 4), "tcpa_min": round(e["tcpa_min"], 3),
                        "min_range_nm": round(e["min_range_nm"], 4)} for e in enc],
        "track_rows": len(tracks),
    }
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")
    with open(out / "reference" / "tracks.csv", "w") as f:
        f.write("ref_mmsi,ref_time,ref_lat,ref_lon,ref_sog,ref_cog\n")
        for r in tracks:
            f.write(f"{r['mmsi']},{r['time']},{r['lat']:.7f},{r['lon']:.7f},{r['sog_kn']:.1f},{r['cog_deg']:.1f}\n")


if __name__ == "__main__":
    main()
