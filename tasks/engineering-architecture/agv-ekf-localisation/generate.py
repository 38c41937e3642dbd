"""Seeded generator of inputs/ and reference/ for agv-ekf-localisation: python3 generate.py --out DIR.

A differential-drive AGV drives a random route in a warehouse hall among reflector posts. The
truth integrates the wheels' ground motion (wheel rotation plus slip); the logs are what the
robot recorded: 16-bit wrapping encoder counts (the right encoder, replaced, has half the
configured resolution) and range/bearing returns of a scanner mounted ahead of the axle,
bearings clockwise in degrees, with multipath and mis-associated returns. The reference holds
the truth, the injected outliers and the scores of a reference EKF written here in plain
Python (no BLAS), so every machine gets the same bytes.
"""

import argparse
import json
import math
import random
from pathlib import Path

SEED = 7103
CANARY = "0a17fbbd-285e-4279-a088-2d8e96b343eb"
DT = 0.1
STEPS = 3000
R_WHEEL = 0.10
TRACK = 0.50
CPR_CONFIG = 4096
CPR_RIGHT_TRUE = 2048
COUNTER = 1 << 16
K_SLIP = 0.006
MOUNT_X = 0.30
RANGE_STD = 0.05
BEARING_STD_DEG = 0.5
MAX_RANGE = 15.0
FOV_DEG = 135.0
SCAN_EVERY = 2
OUTLIER_RATE = 0.03
GATE_CHI2_2DOF_999 = 13.815510557964274
HALL = (50.0, 40.0)
INIT_STD_XY = 0.05
INIT_STD_TH_DEG = 1.0


def wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def transpose(a: list[list[float]]) -> list[list[float]]:
    return [list(r) for r in zip(*a, strict=True)]


def add(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[x + y for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)]


def inv2(s: list[list[float]]) -> list[list[float]]:
    det = s[0][0] * s[1][1] - s[0][1] * s[1][0]
    return [[s[1][1] / det, -s[0][1] / det], [-s[1][0] / det, s[0][0] / det]]


def route(rng: random.Random, start: tuple[float, float, float]) -> list[tuple[float, float]]:
    """(left, right) wheel rotation distance per step: random legs, turning back from the walls."""
    x, y, th = start
    cmds = []
    v, w, left = 0.8, 0.0, 0
    for _ in range(STEPS):
        if left <= 0:
            v, w, left = rng.uniform(0.4, 1.2), rng.choice([0.0, 0.0, rng.uniform(-0.45, 0.45)]), rng.randint(20, 80)
        left -= 1
        ahead = (x + 4 * math.cos(th), y + 4 * math.sin(th))
        if not (5 < ahead[0] < HALL[0] - 5 and 5 < ahead[1] < HALL[1] - 5):
            to_centre = math.atan2(HALL[1] / 2 - y, HALL[0] / 2 - x)
            w = max(-0.6, min(0.6, 1.5 * wrap(to_centre - th)))
            left = min(left, 5)
        cmds.append(((v - w * TRACK / 2) * DT, (v + w * TRACK / 2) * DT))
        th = wrap(th + w * DT)
        x, y = x + v * DT * math.cos(th), y + v * DT * math.sin(th)
    return cmds


def arc(pose: tuple[float, float, float], dl: float, dr: float) -> tuple[float, float, float]:
    x, y, th = pose
    for _ in range(10):
        d, dth = (dl + dr) / 20, (dr - dl) / (10 * TRACK)
        x += d * math.cos(th + dth / 2)
        y += d * math.sin(th + dth / 2)
        th += dth
    return x, y, wrap(th)


def observe(pose: tuple[float, float, float], lm: tuple[float, float]) -> tuple[float, float]:
    """Range and counter-clockwise bearing from the scanner to a landmark."""
    x, y, th = pose
    sx, sy = x + MOUNT_X * math.cos(th), y + MOUNT_X * math.sin(th)
    return math.hypot(lm[0] - sx, lm[1] - sy), wrap(math.atan2(lm[1] - sy, lm[0] - sx) - th)


def ekf(init: dict, odo: list[tuple[float, int, int]], obs: list[dict], lms: dict[int, tuple[float, float]]
        ) -> tuple[list[tuple[float, float, float, list[list[float]]]], set[int]]:
    """Reference EKF: midpoint odometry model, per-wheel slip + quantisation noise, sequential
    range/bearing updates with a 99.9 % innovation gate and the Joseph form."""
    x, y, th = init["x_m"], init["y_m"], math.radians(init["theta_deg"])
    p = [[INIT_STD_XY**2, 0, 0], [0, INIT_STD_XY**2, 0], [0, 0, math.radians(INIT_STD_TH_DEG) ** 2]]
    res = [[RANGE_STD**2, 0.0], [0.0, math.radians(BEARING_STD_DEG) ** 2]]
    per_tick = (2 * math.pi * R_WHEEL / CPR_CONFIG, 2 * math.pi * R_WHEEL / CPR_RIGHT_TRUE)
    by_t: dict[int, list[dict]] = {}
    for o in obs:
        by_t.setdefault(o["step"], []).append(o)
    out = [(x, y, th, [row[:] for row in p])]
    rejected = set()
    for k in range(1, len(odo)):
        dl = ((odo[k][1] - odo[k - 1][1]) % COUNTER) * per_tick[0]
        dr = ((odo[k][2] - odo[k - 1][2]) % COUNTER) * per_tick[1]
        d, dth = (dl + dr) / 2, (dr - dl) / TRACK
        phi = th + dth / 2
        c, s = math.cos(phi), math.sin(phi)
        f = [[1, 0, -d * s], [0, 1, d * c], [0, 0, 1]]
        g = [[c / 2 + d * s / (2 * TRACK), c / 2 - d * s / (2 * TRACK)],
             [s / 2 - d * c / (2 * TRACK), s / 2 + d * c / (2 * TRACK)],
             [-1 / TRACK, 1 / TRACK]]
        q = [[K_SLIP**2 * abs(dl) + per_tick[0] ** 2 / 6, 0], [0, K_SLIP**2 * abs(dr) + per_tick[1] ** 2 / 6]]
        x, y, th = x + d * c, y + d * s, wrap(th + dth)
        p = add(matmul(matmul(f, p), transpose(f)), matmul(matmul(g, q), transpose(g)))
        for o in by_t.get(k, []):
            lx, ly = lms[o["landmark_id"]]
            ct, st = math.cos(th), math.sin(th)
            dx, dy = lx - (x + MOUNT_X * ct), ly - (y + MOUNT_X * st)
            qq = dx * dx + dy * dy
            r = math.sqrt(qq)
            h = [[-dx / r, -dy / r, MOUNT_X * (dx * st - dy * ct) / r],
                 [dy / qq, -dx / qq, -MOUNT_X * (dy * st + dx * ct) / qq - 1]]
            nu = [o["range_m"] - r, wrap(-math.radians(o["bearing_deg"]) - wrap(math.atan2(dy, dx) - th))]
            ph = matmul(p, transpose(h))
            si = inv2(add(matmul(h, ph), res))
            d2 = sum(nu[i] * si[i][j] * nu[j] for i in range(2) for j in range(2))
            if d2 > GATE_CHI2_2DOF_999:
                rejected.add(o["obs_id"])
                continue
            kg = matmul(ph, si)
            x += kg[0][0] * nu[0] + kg[0][1] * nu[1]
            y += kg[1][0] * nu[0] + kg[1][1] * nu[1]
            th = wrap(th + kg[2][0] * nu[0] + kg[2][1] * nu[1])
            ikh = [[(i == j) - sum(kg[i][m] * h[m][j] for m in range(2)) for j in range(3)] for i in range(3)]
            p = add(matmul(matmul(ikh, p), transpose(ikh)), matmul(matmul(kg, res), transpose(kg)))
        out.append((x, y, th, [row[:] for row in p]))
    return out, rejected


def scores(est: list, truth: list) -> dict:
    errs, herrs, nees = [], [], []
    for (x, y, th, p), (tx, ty, tth) in zip(est, truth, strict=True):
        e = [x - tx, y - ty, wrap(th - tth)]
        errs.append(math.hypot(e[0], e[1]))
        herrs.append(abs(e[2]))
        a, b, c, d_, e_, f_ = p[0][0], p[0][1], p[0][2], p[1][1], p[1][2], p[2][2]
        det = a * (d_ * f_ - e_ * e_) - b * (b * f_ - e_ * c) + c * (b * e_ - d_ * c)
        inv = [[d_ * f_ - e_ * e_, c * e_ - b * f_, b * e_ - c * d_],
               [c * e_ - b * f_, a * f_ - c * c, b * c - a * e_],
               [b * e_ - c * d_, b * c - a * e_, a * d_ - b * b]]
        nees.append(sum(e[i] * inv[i][j] * e[j] for i in range(3) for j in range(3)) / det)
    n = len(errs)
    return {"pos_rmse_m": math.sqrt(sum(v * v for v in errs) / n),
            "heading_rmse_rad": math.sqrt(sum(v * v for v in herrs) / n),
            "pos_p95_m": sorted(errs)[int(0.95 * n)],
            "mean_nees": sum(nees) / n}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)

    lms = {}
    while len(lms) < 26:
        cand = (round(rng.uniform(2, HALL[0] - 2), 3), round(rng.uniform(2, HALL[1] - 2), 3))
        if all(math.dist(cand, other) > 4 for other in lms.values()):
            lms[101 + len(lms)] = cand
    init = {"x_m": 6.0, "y_m": 5.0, "theta_deg": 35.0}
    pose = (init["x_m"] + rng.gauss(0, INIT_STD_XY), init["y_m"] + rng.gauss(0, INIT_STD_XY),
            math.radians(init["theta_deg"] + rng.gauss(0, INIT_STD_TH_DEG)))
    cmds = route(rng, pose)

    truth = [pose]
    rot_l = rot_r = 0.0
    odo = [(0.0, 31000, 52000)]
    obs: list[dict] = []
    outliers: list[int] = []
    for k, (dl, dr) in enumerate(cmds, start=1):
        gl = dl + rng.gauss(0, K_SLIP * math.sqrt(abs(dl)))
        gr = dr + rng.gauss(0, K_SLIP * math.sqrt(abs(dr)))
        pose = arc(pose, gl, gr)
        truth.append(pose)
        rot_l, rot_r = rot_l + dl, rot_r + dr
        odo.append((round(k * DT, 1),
                    (31000 + math.floor(rot_l / (2 * math.pi * R_WHEEL) * CPR_CONFIG)) % COUNTER,
                    (52000 + math.floor(rot_r / (2 * math.pi * R_WHEEL) * CPR_RIGHT_TRUE)) % COUNTER))
        if k % SCAN_EVERY:
            continue
        for lid in sorted(lms):
            rr, bb = observe(pose, lms[lid])
            if rr > MAX_RANGE or abs(math.degrees(bb)) > FOV_DEG:
                continue
            o = {"obs_id": 0, "step": k, "landmark_id": lid,
                 "range_m": rr + rng.gauss(0, RANGE_STD), "bearing_deg": -math.degrees(bb) + rng.gauss(0, BEARING_STD_DEG)}
            if rng.random() < OUTLIER_RATE:
                if rng.random() < 0.5:
                    o["range_m"] += rng.uniform(1.5, 5.0)
                else:
                    others = [j for j in sorted(lms) if j != lid and abs(observe(pose, lms[j])[0] - rr) > 1.5]
                    o["landmark_id"] = rng.choice(others)
                o["outlier"] = True
            obs.append(o)
    rng.shuffle(obs)
    obs.sort(key=lambda o: o["step"])
    for i, o in enumerate(obs, start=1):
        o["obs_id"] = i
        o["range_m"] = round(o["range_m"], 3)
        o["bearing_deg"] = round(o["bearing_deg"], 2)
        if o.pop("outlier", False):
            outliers.append(i)

    est, rejected = ekf(init, odo, obs, lms)
    ref_scores = scores(est, truth)

    (inputs / "landmarks.csv").write_text("landmark_id,x_m,y_m\n" + "".join(
        f"{lid},{x:.3f},{y:.3f}\n" for lid, (x, y) in sorted(lms.items())))
    (inputs / "odometry.csv").write_text("t_s,left_count,right_count\n" + "".join(
        f"{t:.1f},{lc},{rc}\n" for t, lc, rc in odo))
    (inputs / "scans.csv").write_text("obs_id,t_s,landmark_id,range_m,bearing_deg\n" + "".join(
        f"{o['obs_id']},{o['step'] * DT:.1f},{o['landmark_id']},{o['range_m']:.3f},{o['bearing_deg']:.2f}\n" for o in obs))
    config = {
        "robot": "AGV-7, differential drive",
        "wheel_radius_m": R_WHEEL,
        "track_width_m": TRACK,
        "encoders": {"left_ticks_per_rev": CPR_CONFIG, "right_ticks_per_rev": CPR_CONFIG, "counter_bits": 16,
                     "count": "cumulative wheel rotation, forward positive, modulo 2^16"},
        "wheel_slip_std_m_per_sqrt_m": K_SLIP,
        "odometry_rate_hz": 1 / DT,
        "scanner": {"mount_x_m": MOUNT_X, "mount_y_m": 0.0, "mount_yaw_deg": 0.0,
                    "range_std_m": RANGE_STD, "bearing_std_deg": BEARING_STD_DEG,
                    "bearing_zero": "scanner +x axis", "bearing_positive": "clockwise, seen from above",
                    "rate_hz": 1 / (SCAN_EVERY * DT)},
        "initial_pose": {**init, "std_xy_m": INIT_STD_XY, "std_theta_deg": INIT_STD_TH_DEG},
    }
    (inputs / "agv7_config.json").write_text(json.dumps(config, indent=2) + "\n")
    (inputs / "maintenance_log.txt").write_text(MAINTENANCE)
    (ref / "truth.csv").write_text("t_s,x_m,y_m,theta_rad\n" + "".join(
        f"{k * DT:.1f},{x:.5f},{y:.5f},{th:.6f}\n" for k, (x, y, th) in enumerate(truth)))
    ref_json = {"canary": CANARY, "reference_ekf": {k: round(v, 5) for k, v in ref_scores.items()},
                "reference_rejected": len(rejected), "outliers": outliers, "observations": len(obs)}
    (ref / "expected.json").write_text(json.dumps(ref_json, indent=1) + "\n")


MAINTENANCE = """AGV fleet maintenance log, hall B (extract)
2026-10-02  AGV-3  bumper switch replaced; functional test OK
2026-10-14  AGV-7  scanner window cleaned, reflector map resurveyed (hall B, 26 posts); no change > 5 mm
2026-10-29  AGV-5  battery pack swapped (SN 55-1187)
2026-11-06  AGV-7  tyre wear check: both drive wheels 200.0 mm diameter, within tolerance
2026-11-18  AGV-7  right drive motor encoder replaced: EN-4096 out of stock, fitted EN-2048-A (2048 lines/rev);
                   controller parameter file not updated yet, ticket FW-2231
2026-11-20  AGV-2  caster wheel bearing replaced
2026-11-27  AGV-7  log recorded for localisation tuning (this data set)
"""


if __name__ == "__main__":
    main()
