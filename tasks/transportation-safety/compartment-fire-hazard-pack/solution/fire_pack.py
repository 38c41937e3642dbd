"""Oracle: compartment fire hazard pack (MQH layer, flashover HRR, Alpert ceiling jet, RTI link) with SciPy."""

import csv
import math
import sys
from pathlib import Path

from scipy.integrate import solve_ivp
from scipy.optimize import brentq

HORIZON = 900.0
RISE_FO = 500.0
NFPA72_TG = {"slow": 600.0, "medium": 300.0, "fast": 150.0, "ultra-fast": 75.0}


def read(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def link_si(dev: dict) -> tuple[float, float]:
    rti = float(dev["rti"])
    if dev["rti_units"].startswith("ft"):
        rti *= math.sqrt(0.3048)
    temp = float(dev["activation_temp"])
    if dev["temp_units"].strip().upper() == "F":
        temp = (temp - 32.0) * 5.0 / 9.0
    return rti, temp


def main(inputs: Path, output: Path) -> None:
    mats = {m["material"]: m for m in read(inputs / "materials.csv")}
    rooms = {}
    for row in read(inputs / "rooms.csv"):
        m = mats[row["lining"]]
        k = float(m["k_w_per_m_k"]) / 1000.0  # kW/(m K)
        rho, c = float(m["density_kg_per_m3"]), float(m["cp_j_per_kg_k"]) / 1000.0  # kJ/(kg K)
        d = float(row["lining_thickness_mm"]) / 1000.0
        w, dp, h = float(row["width_m"]), float(row["depth_m"]), float(row["height_m"])
        ao = float(row["door_width_m"]) * float(row["door_height_m"])
        sqh = math.sqrt(float(row["door_height_m"]))
        at = 2 * (w * dp + w * h + dp * h) - ao
        a = 1055.0 / NFPA72_TG[row["fire_growth"]] ** 2
        peak = float(row["peak_hrr_kw"])
        rooms[row["room_id"]] = dict(k=k, rho=rho, c=c, d=d, h=h, ao=ao, sqh=sqh, at=at, a=a, peak=peak,
                                     tp=rho * c / k * (d / 2) ** 2, amb=float(row["ambient_c"]),
                                     hc=h - float(row["fuel_elevation_m"]))

    def q(rm, t):
        return min(rm["a"] * t * t, rm["peak"])

    def rise(rm, t):
        hk = math.sqrt(rm["k"] * rm["rho"] * rm["c"] / t) if t < rm["tp"] else rm["k"] / rm["d"]
        return 6.85 * (q(rm, t) ** 2 / (rm["ao"] * rm["sqh"] * hk * rm["at"])) ** (1 / 3)

    devices, seen = [], set()
    for dev in read(inputs / "devices.csv"):
        if dev["device_id"] in seen:
            continue
        seen.add(dev["device_id"])
        rm = rooms[dev["room_id"]]
        rti, tact = link_si(dev)
        r, hc = float(dev["radial_distance_m"]), rm["hc"]

        def rhs(t, y, rm=rm, r=r, hc=hc, rti=rti):
            qq = q(rm, t)
            if qq <= 0:
                return [0.0]
            dT = 16.9 * qq ** (2 / 3) / hc ** (5 / 3) if r / hc <= 0.18 else 5.38 * (qq / r) ** (2 / 3) / hc
            u = 0.96 * (qq / hc) ** (1 / 3) if r / hc <= 0.15 else 0.195 * qq ** (1 / 3) * hc ** 0.5 / r ** (5 / 6)
            return [math.sqrt(u) / rti * (rm["amb"] + dT - y[0])]

        def hit(t, y, tact=tact):
            return y[0] - tact
        hit.terminal, hit.direction = True, 1
        sol = solve_ivp(rhs, (0.0, HORIZON), [rm["amb"]], events=hit, rtol=1e-9, atol=1e-9, max_step=0.5)
        ta = float(sol.t_events[0][0]) if len(sol.t_events[0]) else None
        devices.append((dev["device_id"], dev["room_id"], ta, None if ta is None else q(rm, ta)))

    output.mkdir(parents=True, exist_ok=True)
    with (output / "devices.csv").open("w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["device_id", "room_id", "activation_s", "hrr_at_activation_kw"])
        for did, rid, ta, qa in devices:
            wr.writerow([did, rid, "" if ta is None else f"{ta:.2f}", "" if qa is None else f"{qa:.1f}"])
    with (output / "rooms.csv").open("w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["room_id", "alpha_kw_per_s2", "t_p_s", "hgl_60_c", "hgl_120_c", "hgl_300_c", "qfo_mqh_kw",
                     "qfo_babrauskas_kw", "qfo_thomas_kw", "t_flashover_s", "first_activation_s",
                     "activates_before_flashover"])
        for rid, rm in rooms.items():
            tfo = None
            if rise(rm, HORIZON) >= RISE_FO:
                # the layer rise only grows; it may jump at t_p, where brentq's bracket still holds
                tfo = brentq(lambda t, rm=rm: rise(rm, t) - RISE_FO, 1e-6, HORIZON, xtol=1e-6)
                if rise(rm, tfo) < RISE_FO and tfo < rm["tp"] <= tfo + 1e-3:
                    tfo = rm["tp"]
            acts = [ta for _, r_id, ta, _ in devices if r_id == rid and ta is not None]
            first = min(acts) if acts else None
            ok = first is not None and (tfo is None or first < tfo)
            root = rm["ao"] * rm["sqh"]
            wr.writerow([rid, f"{rm['a']:.6f}", f"{rm['tp']:.1f}",
                         *(f"{rm['amb'] + rise(rm, t):.2f}" for t in (60.0, 120.0, 300.0)),
                         f"{610 * math.sqrt(rm['k'] / rm['d'] * rm['at'] * root):.1f}", f"{750 * root:.1f}",
                         f"{7.8 * rm['at'] + 378 * root:.1f}", "" if tfo is None else f"{tfo:.2f}",
                         "" if first is None else f"{first:.2f}", "yes" if ok else "no"])


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
