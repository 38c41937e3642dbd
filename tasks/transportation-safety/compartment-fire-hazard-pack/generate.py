"""Seeded generator of inputs/ and reference/ for compartment-fire-hazard-pack: python3 generate.py --out DIR.

The reference is computed here with closed forms (MQH layer temperature, flashover HRR) and a
fixed-step RK4 of the link equation at 0.02 s, independently of the oracle's adaptive solver.
"""

import argparse
import csv
import json
import math
import random
from pathlib import Path

SEED = 20261203
CANARY = "8f9f4f7e-0281-41c4-81bc-fc24439b1a79"
HORIZON_S = 900.0
FLASHOVER_RISE_K = 500.0
GROWTH_TIME_S = {"slow": 600.0, "medium": 300.0, "fast": 150.0, "ultra-fast": 75.0}  # NFPA 72 to 1055 kW
FT_TO_M = 0.3048

# name -> (k W/(m K), rho kg/m3, cp J/(kg K)) as on the supplier data sheets
MATERIALS = {
    "gypsum board": (0.17, 960.0, 1100.0),
    "normal-weight concrete": (1.6, 2400.0, 750.0),
    "common brick": (0.8, 2600.0, 800.0),
    "plywood": (0.12, 540.0, 2500.0),
    "aerated concrete": (0.26, 500.0, 960.0),
    "particle board": (0.15, 800.0, 1250.0),
}
USES = ["office", "archive", "workshop", "classroom", "kitchen", "plant room", "store", "meeting room"]


def alpha(growth: str) -> float:
    return 1055.0 / GROWTH_TIME_S[growth] ** 2


def hrr(t: float, a: float, peak: float) -> float:
    return min(a * t * t, peak)


def room_geometry(rm: dict) -> dict:
    w, d, h = rm["width_m"], rm["depth_m"], rm["height_m"]
    ao = rm["door_width_m"] * rm["door_height_m"]
    at = 2.0 * (w * d + w * h + d * h) - ao
    k, rho, cp = MATERIALS[rm["lining"]]
    k_kw, cp_kj, delta = k / 1000.0, cp / 1000.0, rm["lining_thickness_mm"] / 1000.0
    tp = rho * cp_kj / k_kw * (delta / 2.0) ** 2
    return {"ao": ao, "at": at, "ho": rm["door_height_m"], "k": k_kw, "rho": rho, "cp": cp_kj, "delta": delta,
            "tp": tp}


def layer_rise(t: float, rm: dict, g: dict) -> float:
    if t <= 0.0:
        return 0.0
    hk = math.sqrt(g["k"] * g["rho"] * g["cp"] / t) if t < g["tp"] else g["k"] / g["delta"]
    q = hrr(t, rm["alpha"], rm["peak_hrr_kw"])
    return 6.85 * (q * q / (g["ao"] * math.sqrt(g["ho"]) * hk * g["at"])) ** (1.0 / 3.0)


def flashover_time(rm: dict, g: dict) -> float | None:
    # The MQH rise never decreases in time: bisection on the first crossing.
    if layer_rise(HORIZON_S, rm, g) < FLASHOVER_RISE_K:
        return None
    lo, hi = 0.0, HORIZON_S
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if layer_rise(mid, rm, g) >= FLASHOVER_RISE_K:
            hi = mid
        else:
            lo = mid
    return hi


def jet(q: float, h: float, r: float) -> tuple[float, float]:
    """Alpert ceiling-jet temperature rise (K) and velocity (m/s) for total HRR q (kW)."""
    if q <= 0.0:
        return 0.0, 0.0
    rise = 16.9 * q ** (2.0 / 3.0) / h ** (5.0 / 3.0) if r / h <= 0.18 else 5.38 * (q / r) ** (2.0 / 3.0) / h
    vel = 0.96 * (q / h) ** (1.0 / 3.0) if r / h <= 0.15 else 0.195 * q ** (1.0 / 3.0) * h ** 0.5 / r ** (5.0 / 6.0)
    return rise, vel


def activation(rm: dict, dev: dict, dt: float = 0.02) -> float | None:
    h = rm["height_m"] - rm["fuel_elevation_m"]
    amb, rti, tact = rm["ambient_c"], dev["rti_si"], dev["tact_c"]

    def rate(t: float, td: float) -> float:
        rise, vel = jet(hrr(t, rm["alpha"], rm["peak_hrr_kw"]), h, dev["radial_m"])
        return math.sqrt(vel) / rti * (amb + rise - td)

    t, td = 0.0, amb
    while t < HORIZON_S:
        k1 = rate(t, td)
        k2 = rate(t + dt / 2, td + dt / 2 * k1)
        k3 = rate(t + dt / 2, td + dt / 2 * k2)
        k4 = rate(t + dt, td + dt * k3)
        new = td + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if new >= tact:
            return t + dt * (tact - td) / (new - td)
        t, td = t + dt, new
    return None


def draw_room(rng: random.Random, i: int, need: str) -> dict:
    w, d = round(rng.uniform(3.0, 8.0), 1), round(rng.uniform(3.5, 10.0), 1)
    rm = {
        "room_id": f"R{101 + i}", "use": USES[i], "width_m": w, "depth_m": d,
        "height_m": round(rng.uniform(2.5, 4.2), 2),
        "lining": sorted(MATERIALS)[rng.randrange(len(MATERIALS))],
        "lining_thickness_mm": 0.0,
        "door_width_m": round(rng.uniform(0.8, 1.8), 2), "door_height_m": round(rng.uniform(2.0, 2.2), 2),
        "fuel_elevation_m": rng.choice([0.0, 0.0, round(rng.uniform(0.4, 1.1), 2)]),
        "ambient_c": rng.choice([20.0, 20.0, 22.0, 18.0, 8.0]),
        "growth": rng.choice(sorted(GROWTH_TIME_S)),
        "peak_hrr_kw": float(rng.randrange(400, 3200, 50)),
    }
    if need == "flashover first":
        rm.update(lining="plywood", growth="ultra-fast", peak_hrr_kw=float(rng.randrange(2000, 3200, 50)))
    elif need == "silent device":
        rm.update(growth="slow", peak_hrr_kw=float(rng.randrange(300, 700, 50)))
    masonry = rm["lining"] in ("aerated concrete", "common brick", "normal-weight concrete")
    rm["lining_thickness_mm"] = float(rng.choice([100, 150, 200] if masonry else [12.5, 15, 16, 19, 25]))
    return rm


def draw_device(rng: random.Random, rm: dict, n: int, imperial: bool, need: str) -> dict:
    kind = "sprinkler" if n == 0 else "heat detector"
    if kind == "sprinkler":
        rti, tact = rng.choice([(50.0, 68.0), (35.0, 57.0), (110.0, 74.0), (150.0, 93.0), (28.0, 68.0),
                                (150.0, 141.0), (110.0, 141.0)])
    else:
        rti, tact = rng.choice([(40.0, 57.0), (25.0, 60.0), (60.0, 71.0), (60.0, 88.0)])
    radial = round(rng.uniform(0.3, min(rm["width_m"], rm["depth_m"]) * 0.7), 2)
    if need in ("flashover first", "silent device"):
        rti, tact = (150.0, 141.0) if kind == "sprinkler" else (60.0, 88.0)
        radial = round(rng.uniform(0.5, 0.7) * min(rm["width_m"], rm["depth_m"]), 2)
    dev = {"device_id": f"{rm['room_id']}-{'SP' if n == 0 else 'HD'}{n + 1}", "room_id": rm["room_id"],
           "type": kind, "radial_m": radial, "rti_si": rti, "tact_c": tact}
    if imperial:
        dev["rti"], dev["rti_units"] = round(rti / math.sqrt(FT_TO_M), 0), "ft^0.5 s^0.5"
        dev["activation_temp"], dev["temp_units"] = round(tact * 9 / 5 + 32, 0), "F"
        dev["rti_si"] = dev["rti"] * math.sqrt(FT_TO_M)
        dev["tact_c"] = (dev["activation_temp"] - 32) * 5 / 9
    else:
        dev["rti"], dev["rti_units"], dev["activation_temp"], dev["temp_units"] = rti, "m^0.5 s^0.5", tact, "C"
    return dev


def well_posed(rm: dict, devs: list[dict], need: str) -> bool:
    g = room_geometry(rm)
    tf = flashover_time(rm, g)
    if tf is not None and (tf > HORIZON_S - 10 or abs(tf - g["tp"]) < 3):
        return False
    if abs(layer_rise(HORIZON_S, rm, g) - FLASHOVER_RISE_K) < 15:
        return False
    acts = []
    for dev in devs:
        dev["activation_s"] = activation(rm, dev, dt=0.5)  # screening; the reference is recomputed finer
        if dev["activation_s"] is not None and dev["activation_s"] > HORIZON_S - 20:
            return False
        acts.append(dev["activation_s"])
    first = min((a for a in acts if a is not None), default=None)
    if first is not None and tf is not None and abs(first - tf) < 10:
        return False
    return {"any": True, "flashover": tf is not None, "silent device": None in acts,
            "flashover first": tf is not None and (first is None or tf < first)}[need]


def fmt(v: float | None, nd: int) -> str:
    return "" if v is None else f"{v:.{nd}f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    imperial_rooms = {2, 6}
    needs = ["flashover", "any", "silent device", "any", "flashover first", "any", "any", "flashover"]
    rooms, devices = [], []
    for i in range(8):
        while True:
            rm = draw_room(rng, i, needs[i])
            rm["alpha"] = alpha(rm["growth"])
            devs = [draw_device(rng, rm, n, imperial=(i in imperial_rooms and n == 0), need=needs[i]) for n in range(2)]
            if well_posed(rm, devs, needs[i]):
                break
        for dev in devs:
            dev["activation_s"] = activation(rm, dev)
        rooms.append(rm)
        devices.extend(devs)

    with (out / "inputs" / "rooms.csv").open("w", newline="") as f:
        cols = ["room_id", "use", "width_m", "depth_m", "height_m", "lining", "lining_thickness_mm",
                "door_width_m", "door_height_m", "fuel_elevation_m", "ambient_c", "fire_growth", "peak_hrr_kw"]
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(cols)
        for rm in rooms:
            wr.writerow([rm["room_id"], rm["use"], rm["width_m"], rm["depth_m"], rm["height_m"], rm["lining"],
                         rm["lining_thickness_mm"], rm["door_width_m"], rm["door_height_m"], rm["fuel_elevation_m"],
                         rm["ambient_c"], rm["growth"], rm["peak_hrr_kw"]])
    with (out / "inputs" / "materials.csv").open("w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["material", "k_w_per_m_k", "density_kg_per_m3", "cp_j_per_kg_k"])
        for name in sorted(MATERIALS):
            wr.writerow([name, *MATERIALS[name]])
    with (out / "inputs" / "devices.csv").open("w", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["device_id", "room_id", "type", "radial_distance_m", "rti", "rti_units", "activation_temp",
                     "temp_units"])
        listed = devices[:9] + [devices[4]] + devices[9:]  # R103's sprinkler appears twice in the merged schedule
        for d in listed:
            wr.writerow([d["device_id"], d["room_id"], d["type"], d["radial_m"], d["rti"], d["rti_units"],
                         d["activation_temp"], d["temp_units"]])

    ref_rooms = {}
    for rm in rooms:
        g = room_geometry(rm)
        tf = flashover_time(rm, g)
        root = g["ao"] * math.sqrt(g["ho"])
        acts = [d["activation_s"] for d in devices if d["room_id"] == rm["room_id"] and d["activation_s"] is not None]
        first = min(acts, default=None)
        ref_rooms[rm["room_id"]] = {
            "alpha_kw_per_s2": rm["alpha"], "t_p_s": g["tp"],
            "hgl_60_c": rm["ambient_c"] + layer_rise(60.0, rm, g),
            "hgl_120_c": rm["ambient_c"] + layer_rise(120.0, rm, g),
            "hgl_300_c": rm["ambient_c"] + layer_rise(300.0, rm, g),
            "qfo_mqh_kw": 610.0 * math.sqrt(g["k"] / g["delta"] * g["at"] * root),
            "qfo_babrauskas_kw": 750.0 * root,
            "qfo_thomas_kw": 7.8 * g["at"] + 378.0 * root,
            "t_flashover_s": tf, "first_activation_s": first,
            "activates_before_flashover": "yes" if first is not None and (tf is None or first < tf) else "no",
            "ambient_c": rm["ambient_c"],
        }
    ref_devices = {d["device_id"]: {"room_id": d["room_id"], "activation_s": d["activation_s"],
                                    "hrr_at_activation_kw": None if d["activation_s"] is None else
                                    hrr(d["activation_s"], next(r["alpha"] for r in rooms if r["room_id"] == d["room_id"]),
                                        next(r["peak_hrr_kw"] for r in rooms if r["room_id"] == d["room_id"]))}
                   for d in devices}
    growth = {rm["room_id"]: {"alpha": rm["alpha"], "peak_hrr_kw": rm["peak_hrr_kw"]} for rm in rooms}

    def rounded(obj):
        if isinstance(obj, float):
            return float(f"{obj:.6g}")
        if isinstance(obj, dict):
            return {k: rounded(v) for k, v in obj.items()}
        return obj

    (out / "reference" / "expected.json").write_text(json.dumps(
        {"canary": CANARY, "horizon_s": HORIZON_S, "rooms": rounded(ref_rooms), "devices": rounded(ref_devices),
         "fires": rounded(growth)}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
