"""Seeded generator of inputs/ and reference/ for product-turntable-gltf: python3 generate.py --out DIR.

The product is a three-part diffuser bottle built as solids of revolution. The OBJ is written the
way the client's CAD exports it: centimetres, +Z up, the assembly far from the origin, the cap
shell wound inside out and the body shell exported twice. The reference holds each part as it
must arrive in the glTF (metres, +Y up, base centre at the origin).
"""

import argparse
import json
import math
import random
from pathlib import Path

SEED = 20431
CANARY = "ff131e12-0674-4e99-b270-6fec351a57ea"
SEGMENTS = 48
FPS = 30
FRAMES = 120


def lathe(profile: list[tuple[float, float]]) -> tuple[list[tuple[float, float, float]], list[list[int]]]:
    """Closed solid of revolution about +Z from a (radius, z) profile running bottom pole to top pole."""
    verts: list[tuple[float, float, float]] = []
    rings: list[list[int] | int] = []
    for r, z in profile:
        if r == 0.0:
            rings.append(len(verts))
            verts.append((0.0, 0.0, z))
            continue
        ring = []
        for k in range(SEGMENTS):
            a = 2 * math.pi * k / SEGMENTS
            ring.append(len(verts))
            verts.append((r * math.cos(a), r * math.sin(a), z))
        rings.append(ring)
    faces: list[list[int]] = []
    for lo, hi in zip(rings, rings[1:], strict=False):
        for k in range(SEGMENTS):
            k2 = (k + 1) % SEGMENTS
            if isinstance(lo, int):
                faces.append([lo, hi[k2], hi[k]])
            elif isinstance(hi, int):
                faces.append([lo[k], lo[k2], hi])
            else:
                faces.append([lo[k], lo[k2], hi[k2], hi[k]])
    return verts, faces


def triangles(verts, faces):
    for f in faces:
        for i in range(1, len(f) - 1):
            yield verts[f[0]], verts[f[i]], verts[f[i + 1]]


def measure(verts, faces) -> tuple[float, float]:
    """Signed volume and surface area of a closed polygon mesh."""
    vol = area = 0.0
    for a, b, c in triangles(verts, faces):
        cross = (
            (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1]),
            (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]),
            (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]),
        )
        area += 0.5 * math.sqrt(sum(x * x for x in cross))
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0
    return vol, area


def profiles(rng: random.Random) -> dict[str, list[tuple[float, float]]]:
    rb, hb = rng.uniform(5.2, 6.0), rng.uniform(1.1, 1.5)
    r0, h = rng.uniform(4.4, 4.9), rng.uniform(19.0, 23.0)
    rn = rng.uniform(1.3, 1.6)
    rc, hc = rn + rng.uniform(0.35, 0.5), rng.uniform(4.0, 5.5)
    base = [(0.0, 0.0), (rb - 0.3, 0.0), (rb, 0.3), (rb, hb), (0.0, hb)]
    body = [(0.0, hb)]
    shoulder = 0.72
    for i in range(13):
        t = i / 12
        z = hb + t * shoulder * h
        body.append((r0 * (1.0 + 0.06 * math.sin(math.pi * t)), z))
    for i in range(1, 9):
        t = i / 8
        z = hb + (shoulder + t * (0.9 - shoulder)) * h
        r = rn + (r0 - rn) * 0.5 * (1 + math.cos(math.pi * t))
        body.append((r, z))
    body += [(rn, hb + h), (0.0, hb + h)]
    ztop = hb + h
    cap = [(0.0, ztop), (rc, ztop), (rc, ztop + hc - 0.4), (rc - 0.4, ztop + hc), (0.0, ztop + hc)]
    return {"base": base, "body": body, "cap": cap}


def srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)

    offset = (rng.uniform(30, 45), rng.uniform(-60, -40), rng.uniform(8, 15))
    parts = {"base": "PRT-2043-BASE", "body": "PRT-2043-BODY", "cap": "PRT-2043-CAP"}
    shells = profiles(rng)
    meshes: dict[str, tuple[list, list]] = {}
    for key in ("base", "body", "cap"):
        verts, faces = lathe(shells[key])
        # What the OBJ holds, to its printed precision: the reference is measured on exactly that.
        verts = [tuple(round(v + o, 4) for v, o in zip(p, offset, strict=True)) for p in verts]
        if key == "cap":
            faces = [f[::-1] for f in faces]
        meshes[key] = (verts, faces)

    lines = [
        "# SolidForm CAD 2024.2 OBJ export",
        "# Assembly: PRT-2043 Aria reed diffuser bottle, rev C",
        "# Units: centimeters",
        "# Axes: right-handed, +Z up, -Y front",
        "# Placement: assembly coordinates (fixture datum)",
    ]
    base_index = 1
    for key in ("base", "body", "cap", "body"):
        verts, faces = meshes[key]
        lines.append(f"o {parts[key]}")
        lines += [f"v {x:.4f} {y:.4f} {z:.4f}" for x, y, z in verts]
        lines += ["f " + " ".join(str(base_index + i) for i in f) for f in faces]
        base_index += len(verts)
    (out / "inputs" / "PRT-2043_assembly.obj").write_text("\n".join(lines) + "\n")

    finishes = {
        "base": ("M_Base_BrushedAluminium", "brushed aluminium", (196, 199, 201), 1.0, 0.35, 0.0),
        "body": ("M_Body_AmberGlass", "polished amber glass", (166, 92, 28), 0.0, 0.08, 0.9),
        "cap": ("M_Cap_SoftTouchBlack", "soft-touch black PP", (28, 27, 30), 0.0, 0.72, 0.0),
    }
    rows = ["part_number,material_name,finish,base_color_srgb,metallic,roughness,transmission"]
    reference_parts = {}
    for key in ("base", "body", "cap"):
        name, finish, rgb, metal, rough, trans = finishes[key]
        rgb = tuple(min(255, max(0, c + rng.randint(-6, 6))) for c in rgb)
        rough = round(rough + rng.uniform(-0.04, 0.04), 2)
        rows.append(f"{parts[key]},{name},{finish},#{rgb[0]:02X}{rgb[1]:02X}{rgb[2]:02X},{metal:.2f},{rough:.2f},{trans:.2f}")
        verts, faces = meshes[key]
        # glTF frame: metres, +Y up, CAD -Y (front) towards +Z, base centre at the origin.
        gl = [((x - offset[0]) * 0.01, (z - offset[2]) * 0.01, -(y - offset[1]) * 0.01) for x, y, z in verts]
        vol, area = measure(gl, faces)
        reference_parts[name] = {
            "part_number": parts[key],
            "base_color_factor": [round(srgb_to_linear(c / 255), 6) for c in rgb] + [1.0],
            "metallic": metal,
            "roughness": rough,
            "transmission": trans,
            "volume_m3": round(abs(vol), 10),
            "area_m2": round(area, 8),
            "bbox_min": [round(min(p[i] for p in gl), 6) for i in range(3)],
            "bbox_max": [round(max(p[i] for p in gl), 6) for i in range(3)],
        }
    (out / "inputs" / "materials.csv").write_text("\n".join(rows) + "\n")
    # The assembly's silhouette: every (radius, height) pair its vertices sit on.
    profile = sorted({(round(math.hypot(x, z), 5), round(y, 5)) for verts, faces in meshes.values()
                      for x, y, z in [((v[0] - offset[0]) * 0.01, (v[2] - offset[2]) * 0.01,
                                       (v[1] - offset[1]) * 0.01) for v in verts]})
    lo = [min(p["bbox_min"][i] for p in reference_parts.values()) for i in range(3)]
    hi = [max(p["bbox_max"][i] for p in reference_parts.values()) for i in range(3)]
    reference = {
        "canary": CANARY,
        "fps": FPS,
        "frames": FRAMES,
        "degrees_per_frame": 360.0 / FRAMES,
        "bbox_min": lo,
        "bbox_max": hi,
        "parts": reference_parts,
        "profile_r_y": [list(p) for p in profile],
    }
    (out / "reference" / "expected.json").write_text(json.dumps(reference, indent=2) + "\n")


if __name__ == "__main__":
    main()
