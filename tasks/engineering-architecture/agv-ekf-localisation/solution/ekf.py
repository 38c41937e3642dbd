"""Oracle EKF for agv-ekf-localisation (NumPy): writes trajectory.csv and rejected.csv.

Diagnosis baked in after inspecting the logs:
- encoder counts are 16-bit and wrap: deltas are taken modulo 2^16;
- the right encoder was replaced by a 2048-line part (maintenance log, 2026-11-18) while the
  parameter file still says 4096: with 4096 the right wheel reads half its travel;
- bearings are clockwise-positive in degrees: negated and converted for the REP-103 frame;
- the scanner sits 0.30 m ahead of the axle: the measurement model includes the lever arm.
"""

import csv
import json
import sys
from pathlib import Path

import numpy as np

GATE = 13.815510557964274  # chi-square, 2 dof, 99.9 %
RIGHT_CPR_FITTED = 2048


def wrap(a: float) -> float:
    return (a + np.pi) % (2 * np.pi) - np.pi


def main(inputs: Path, output: Path) -> None:
    cfg = json.loads((inputs / "agv7_config.json").read_text())
    r_w, b = cfg["wheel_radius_m"], cfg["track_width_m"]
    enc, sc, ini = cfg["encoders"], cfg["scanner"], cfg["initial_pose"]
    modulo = 2 ** enc["counter_bits"]
    per_tick = np.array([2 * np.pi * r_w / enc["left_ticks_per_rev"], 2 * np.pi * r_w / RIGHT_CPR_FITTED])
    k_slip, a = cfg["wheel_slip_std_m_per_sqrt_m"], sc["mount_x_m"]
    rmat = np.diag([sc["range_std_m"] ** 2, np.radians(sc["bearing_std_deg"]) ** 2])
    lms = {int(r["landmark_id"]): (float(r["x_m"]), float(r["y_m"])) for r in csv.DictReader(open(inputs / "landmarks.csv"))}
    odo = [(r["t_s"], int(r["left_count"]), int(r["right_count"])) for r in csv.DictReader(open(inputs / "odometry.csv"))]
    scans: dict[str, list[dict]] = {}
    for r in csv.DictReader(open(inputs / "scans.csv")):
        scans.setdefault(r["t_s"], []).append(r)

    x = np.array([ini["x_m"], ini["y_m"], np.radians(ini["theta_deg"])])
    p = np.diag([ini["std_xy_m"] ** 2, ini["std_xy_m"] ** 2, np.radians(ini["std_theta_deg"]) ** 2])
    rows, rejected = [], []

    def emit(t: str) -> None:
        rows.append([t, f"{x[0]:.4f}", f"{x[1]:.4f}", f"{x[2]:.5f}",
                     *(f"{p[i, j]:.6e}" for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))])

    emit(odo[0][0])
    for (_, l0, r0), (t, l1, r1) in zip(odo, odo[1:], strict=False):
        dl, dr = ((l1 - l0) % modulo) * per_tick[0], ((r1 - r0) % modulo) * per_tick[1]
        d, dth = (dl + dr) / 2, (dr - dl) / b
        phi = x[2] + dth / 2
        c, s = np.cos(phi), np.sin(phi)
        f = np.array([[1, 0, -d * s], [0, 1, d * c], [0, 0, 1]])
        g = np.array([[c / 2 + d * s / (2 * b), c / 2 - d * s / (2 * b)],
                      [s / 2 - d * c / (2 * b), s / 2 + d * c / (2 * b)],
                      [-1 / b, 1 / b]])
        q = np.diag([k_slip**2 * abs(dl) + per_tick[0] ** 2 / 6, k_slip**2 * abs(dr) + per_tick[1] ** 2 / 6])
        x = np.array([x[0] + d * c, x[1] + d * s, wrap(x[2] + dth)])
        p = f @ p @ f.T + g @ q @ g.T
        for o in scans.get(t, []):
            lx, ly = lms[int(o["landmark_id"])]
            ct, st = np.cos(x[2]), np.sin(x[2])
            dx, dy = lx - x[0] - a * ct, ly - x[1] - a * st
            qq = dx * dx + dy * dy
            rng = np.sqrt(qq)
            h = np.array([[-dx / rng, -dy / rng, a * (dx * st - dy * ct) / rng],
                          [dy / qq, -dx / qq, -a * (dy * st + dx * ct) / qq - 1]])
            bearing_ccw = -np.radians(float(o["bearing_deg"]))
            nu = np.array([float(o["range_m"]) - rng, wrap(bearing_ccw - (np.arctan2(dy, dx) - x[2]))])
            s_mat = h @ p @ h.T + rmat
            if nu @ np.linalg.solve(s_mat, nu) > GATE:
                rejected.append(o["obs_id"])
                continue
            k = np.linalg.solve(s_mat, h @ p).T
            x = x + k @ nu
            x[2] = wrap(x[2])
            ikh = np.eye(3) - k @ h
            p = ikh @ p @ ikh.T + k @ rmat @ k.T
        emit(t)

    output.mkdir(parents=True, exist_ok=True)
    with open(output / "trajectory.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "x_m", "y_m", "theta_rad", "p_xx", "p_xy", "p_xt", "p_yy", "p_yt", "p_tt"])
        w.writerows(rows)
    with open(output / "rejected.csv", "w", newline="") as fh:
        fh.write("obs_id\n" + "".join(f"{i}\n" for i in rejected))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
