"""Grader for product-turntable-gltf.

product.glb is read with a small glTF 2.0 reader of its own (JSON chunk, accessors, node
hierarchy, animation samplers) and evaluated as a viewer would: the world pose of every mesh at
every key of the clip. Geometry, placement, materials and the turntable are judged on that pose,
whatever node hierarchy, mesh split or export settings produced it.
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, near, no_problems

MAX_BYTES = 64 * 1024 * 1024
MAX_VERTICES = 200_000  # the CAD tessellation has about 6 000
# A web asset of three parts has a handful of nodes, primitives, channels and keys; the caps keep a
# pathological scene (thousands of one-triangle primitives, deep node chains) from stalling grading.
MAX_NODES = MAX_PRIMITIVES = 256
MAX_CHANNELS, MAX_KEYS = 768, 1000
COMPONENTS = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
# 1 mm is the delivery spec's placement tolerance; float32 positions are good to ~1e-7 m.
MM = 1e-3
# The gate is coarse (2 %): it only tells a model at true metric size, standing on +Y, from an
# unconverted one (100x too large, or lying on its side).
GATE_REL = 0.02


class GltfError(Exception):
    pass


def read_glb(data: bytes) -> tuple[dict, bytes]:
    if len(data) < 20 or data[:4] != b"glTF":
        raise GltfError("not a binary glTF (no 'glTF' magic)")
    version, length = struct.unpack_from("<II", data, 4)
    if version != 2 or length > len(data):
        raise GltfError(f"glTF version {version}, declared length {length} of {len(data)} bytes")
    chunks, pos = [], 12
    while pos + 8 <= length:
        size, kind = struct.unpack_from("<II", data, pos)
        chunks.append((kind, data[pos + 8:pos + 8 + size]))
        pos += 8 + size
    if not chunks or chunks[0][0] != 0x4E4F534A:
        raise GltfError("first chunk is not JSON")
    try:
        doc = json.loads(chunks[0][1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise GltfError(f"JSON chunk does not parse: {e}") from e
    if not isinstance(doc, dict):
        raise GltfError("JSON chunk is not an object")
    binary = chunks[1][1] if len(chunks) > 1 and chunks[1][0] == 0x004E4942 else b""
    return doc, binary


def accessor(doc: dict, binary: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    if "sparse" in acc or "bufferView" not in acc:
        raise GltfError(f"accessor {index}: sparse or view-less accessors are not supported")
    view = doc["bufferViews"][acc["bufferView"]]
    if view.get("buffer", 0) != 0 or "uri" in doc["buffers"][0]:
        raise GltfError("data must be in the GLB's own binary chunk")
    dtype = np.dtype(COMPONENTS[acc["componentType"]])
    width, count = WIDTH[acc["type"]], int(acc["count"])
    start = int(view.get("byteOffset", 0)) + int(acc.get("byteOffset", 0))
    stride = int(view.get("byteStride", 0)) or dtype.itemsize * width
    if stride < dtype.itemsize * width or start < 0:  # a negative stride would read outside the buffer
        raise GltfError(f"accessor {index}: byteStride {stride} or byteOffset {start} out of range")
    end = start + stride * (count - 1) + dtype.itemsize * width
    if count < 1 or end > len(binary):
        raise GltfError(f"accessor {index} runs past the binary chunk")
    raw = np.lib.stride_tricks.as_strided(
        np.frombuffer(binary, dtype=np.uint8, count=end - start, offset=start),
        shape=(count, dtype.itemsize * width), strides=(stride, 1)).copy()
    values = raw.view(dtype).reshape(count, width).astype(np.float64)
    if acc.get("normalized") and dtype.kind in "iu":
        values /= float(np.iinfo(dtype).max)
    return values


def quat_matrix(q) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=float) / (np.linalg.norm(q) or 1.0)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def sample(times: np.ndarray, values: np.ndarray, mode: str, t: float) -> np.ndarray:
    if mode == "CUBICSPLINE":
        values = values.reshape(len(times), 3, -1)[:, 1, :]
    i = int(np.searchsorted(times, t, side="right")) - 1
    if i < 0:
        return values[0]
    if i >= len(times) - 1 or mode == "STEP":
        return values[min(i, len(times) - 1)]
    u = (t - times[i]) / (times[i + 1] - times[i])
    a, b = values[i], values[i + 1]
    if len(a) == 4 and float(np.dot(a, b)) < 0:
        b = -b
    return a + u * (b - a)


class Scene:
    """Mesh triangles in node space and the clip, ready to pose at any time."""

    def __init__(self, doc: dict, binary: bytes):
        self.doc, self.nodes = doc, doc.get("nodes", [])
        if len(self.nodes) > MAX_NODES:
            raise GltfError(f"{len(self.nodes)} nodes, over {MAX_NODES}: not this product's scene")
        scenes = doc.get("scenes") or [{"nodes": list(range(len(self.nodes)))}]
        self.parent: dict[int, int | None] = {}
        stack = [(n, None) for n in scenes[int(doc.get("scene", 0))].get("nodes", [])]
        while stack:
            n, p = stack.pop()
            if n in self.parent:
                raise GltfError(f"node {n} is reached twice")
            self.parent[n] = p
            stack += [(c, n) for c in self.nodes[n].get("children", [])]
        self.prims: list[dict] = []  # node, material name, positions, normals, triangles
        materials, vertices = doc.get("materials", []), 0
        for n in sorted(self.parent):
            if "mesh" not in self.nodes[n]:
                continue
            for prim in doc["meshes"][self.nodes[n]["mesh"]]["primitives"]:
                if prim.get("mode", 4) != 4:
                    raise GltfError("only triangle primitives are expected")
                pos = accessor(doc, binary, prim["attributes"]["POSITION"])
                nrm = accessor(doc, binary, prim["attributes"]["NORMAL"]) if "NORMAL" in prim["attributes"] else None
                idx = (accessor(doc, binary, prim["indices"]).astype(np.int64).ravel() if "indices" in prim
                       else np.arange(len(pos)))
                if len(idx) % 3 or (len(idx) and (idx.min() < 0 or idx.max() >= len(pos))):
                    raise GltfError("triangle indices out of range")
                if pos.shape[1] != 3 or (nrm is not None and nrm.shape != pos.shape):
                    raise GltfError("POSITION and NORMAL must be VEC3 of the same count")
                if not np.isfinite(pos).all():
                    raise GltfError("POSITION holds values that are not finite")
                vertices += len(pos)
                if vertices > MAX_VERTICES or len(self.prims) >= MAX_PRIMITIVES:
                    raise GltfError(f"over {MAX_VERTICES} vertices or {MAX_PRIMITIVES} primitives: not this product's scene")
                mat = prim.get("material")
                name = materials[mat].get("name", f"material {mat}") if mat is not None else "(none)"
                self.prims.append({"node": n, "material": name, "pos": pos, "nrm": nrm, "tri": idx.reshape(-1, 3)})
        if not self.prims:
            raise GltfError("the scene holds no mesh")
        self.channels: list[tuple[int, str, np.ndarray, np.ndarray, str]] = []
        anims = doc.get("animations", [])
        if anims and len(anims[0]["channels"]) > MAX_CHANNELS:
            raise GltfError(f"over {MAX_CHANNELS} animation channels: not a turntable clip")
        for ch in anims[0]["channels"] if anims else []:
            smp = anims[0]["samplers"][ch["sampler"]]
            t = accessor(doc, binary, smp["input"]).ravel()
            v = accessor(doc, binary, smp["output"])
            path, mode = ch["target"]["path"], smp.get("interpolation", "LINEAR")
            width = {"rotation": 4, "translation": 3, "scale": 3}.get(path)
            per_key = 3 if mode == "CUBICSPLINE" else 1
            if width is not None and (v.shape[1] != width or len(v) != per_key * len(t)):
                raise GltfError(f"animation channel {path}: {len(v)} values of {v.shape[1]} for {len(t)} keys")
            if not (np.isfinite(t).all() and np.isfinite(v).all()) or (np.diff(t) <= 0).any():
                raise GltfError("animation keys must be finite with increasing times")
            self.channels.append((ch["target"]["node"], ch["target"]["path"], t, v, smp.get("interpolation", "LINEAR")))
        self.by_node = {n: [c for c in self.channels if c[0] == n] for n in self.parent}
        self.times = np.unique(np.concatenate([c[2] for c in self.channels])) if self.channels else np.array([])
        if len(self.times) > MAX_KEYS:
            raise GltfError(f"{len(self.times)} distinct key times, over {MAX_KEYS}: not a turntable clip")
        for n in self.parent:  # malformed node transforms fail here, while reading
            if not np.isfinite(self.local(n, 0.0)).all():
                raise GltfError(f"node {n} has a transform that is not finite")

    def local(self, n: int, t: float) -> np.ndarray:
        node = self.nodes[n]
        if "matrix" in node:
            return np.array(node["matrix"], dtype=float).reshape(4, 4).T
        trs = {"translation": np.array(node.get("translation", [0, 0, 0]), dtype=float),
               "rotation": np.array(node.get("rotation", [0, 0, 0, 1]), dtype=float),
               "scale": np.array(node.get("scale", [1, 1, 1]), dtype=float)}
        for _, path, times, values, mode in self.by_node.get(n, []):
            if path in trs:
                trs[path] = sample(times, values, mode, t)
        m = np.eye(4)
        m[:3, :3] = quat_matrix(trs["rotation"]) * trs["scale"]
        m[:3, 3] = trs["translation"]
        return m

    def world(self, n: int, t: float, cache: dict[int, np.ndarray]) -> np.ndarray:
        if n not in cache:
            parent = self.parent[n]
            cache[n] = self.local(n, t) if parent is None else self.world(parent, t, cache) @ self.local(n, t)
        return cache[n]

    def posed(self, t: float) -> list[dict]:
        out, cache = [], {}
        for p in self.prims:
            w = self.world(p["node"], t, cache)
            pos = p["pos"] @ w[:3, :3].T + w[:3, 3]
            nrm = None if p["nrm"] is None else p["nrm"] @ np.linalg.pinv(w[:3, :3])
            out.append({**p, "wpos": pos, "wnrm": nrm, "matrix": w})
        return out


def shell(prims: list[dict]) -> dict:
    """Volume, area, bounds and outward-normal agreement of a set of posed primitives."""
    vol = area = 0.0
    agree = total = 0
    pts = []
    for p in prims:
        a, b, c = (p["wpos"][p["tri"][:, i]] for i in range(3))
        cross = np.cross(b - a, c - a)
        vol += float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0
        area += float(np.linalg.norm(cross, axis=1).sum()) / 2.0
        if p["wnrm"] is not None:
            vn = p["wnrm"][p["tri"]].sum(axis=1)
            agree += int((np.einsum("ij,ij->i", vn, cross) > 0).sum())
        total += len(cross)
        pts.append(p["wpos"])
    allp = np.vstack(pts)
    return {"volume": vol, "area": area, "min": allp.min(axis=0), "max": allp.max(axis=0),
            "normals_agree": agree / total if total else 0.0}


def turn_y(degrees: float) -> np.ndarray:  # a turn about +Y, counter-clockwise seen from above
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    path = ctx.out("product.glb")
    scene, why = None, "product.glb is missing"
    if path.is_file() and path.stat().st_size <= MAX_BYTES:
        try:
            scene = Scene(*read_glb(path.read_bytes()))
            why = f"{len(scene.prims)} triangle primitives, {len(scene.channels)} animation channels"
        except (GltfError, KeyError, IndexError, TypeError, ValueError, AttributeError, struct.error,
                np.linalg.LinAlgError, ArithmeticError, RecursionError) as e:  # int(1e400), deep JSON
            scene, why = None, f"product.glb does not read as glTF 2.0: {type(e).__name__}: {e}"
    elif path.exists():
        why = "product.glb is not a file of at most 64 MiB"
    r.gate("product.glb is a readable binary glTF 2.0 with triangle meshes", Outcome(scene is not None, why))
    if scene is None:
        return r

    times = scene.times
    posed = scene.posed(float(times[0]) if len(times) else 0.0)
    whole = shell(posed)
    size, ref_size = whole["max"] - whole["min"], np.subtract(ref["bbox_max"], ref["bbox_min"])
    centre = (whole["max"] + whole["min"]) / 2
    r.gate("the client's assembly, upright on +Y at true metric size (extents within 2 %, silhouette"
           " within 2 mm)", all_of([(axis, near(float(size[i]), float(ref_size[i]), rel=GATE_REL))
                                    for i, axis in enumerate("xyz")] + [silhouette(whole, posed, ref)]))

    # Coarse, like the gate above: a turntable at all (a still model is not the deliverable); rate, keys and loop are checks.
    turn = motion(scene, posed, np.array([centre[0], 0.0, centre[2]]), ref["frames"])
    r.gate("the clip is a turntable: the product turns about the vertical axis (at least 300 degrees, one way)", revolution(turn))

    r.check("overall height and footprint within 1 mm", 2, all_of([
        (axis, near(float(size[i]), float(ref_size[i]), abs=MM)) for i, axis in enumerate("xyz")]))
    r.check("origin at the centre of the base (within 1 mm)", 2, all_of([
        ("x centre", near(float(centre[0]), 0.0, abs=MM)),
        ("lowest point y", near(float(whole["min"][1]), 0.0, abs=MM)),
        ("z centre", near(float(centre[2]), 0.0, abs=MM))]))
    scales = [float(s) for p in posed for s in np.linalg.norm(p["matrix"][:3, :3], axis=0)]
    r.check("transforms applied: unit scale on every mesh node", 1, near(max(abs(s - 1.0) for s in scales), 0.0, abs=1e-4))

    by_mat = {name: shell([p for p in posed if p["material"] == name]) for name in sorted({p["material"] for p in posed})}
    found, parts = sorted(by_mat), ref["parts"]

    def per_part(test) -> Outcome:
        return all_of([(name, test(by_mat[name], spec) if name in by_mat
                        else Outcome(False, "no primitive uses this material", seen=found))
                       for name, spec in sorted(parts.items())])

    r.check("every shell faces outward (positive volume, normals agree with the winding)", 2, per_part(
        lambda s, spec: all_of([("signed volume", Outcome(s["volume"] > 0, f"signed volume {s['volume']:.3e} m3",
                                                          expected="> 0", seen=s["volume"])),
                                ("normals", near(s["normals_agree"], 1.0, abs=0.01))])))
    # 1 %: a duplicated shell doubles both; tessellation is the CAD's, so a faithful export is exact.
    r.check("each part once and true to the CAD (volume and area within 1 %)", 2, per_part(
        lambda s, spec: all_of([("volume", near(abs(s["volume"]), spec["volume_m3"], rel=0.01)),
                                ("area", near(s["area"], spec["area_m2"], rel=0.01))])))
    r.check("each part where the assembly puts it (bounds within 1 mm)", 1, per_part(
        lambda s, spec: all_of([(f"{k}[{i}]", near(float(s[k][i]), spec[f"bbox_{k}"][i], abs=MM))
                                for k in ("min", "max") for i in range(3)])))
    materials = {m.get("name"): m for m in scene.doc.get("materials", []) if isinstance(m, dict)}

    def pbr(name: str) -> dict:
        value = materials.get(name, {}).get("pbrMetallicRoughness", {})
        return value if isinstance(value, dict) else {}

    # 0.003: the sRGB decode of an 8-bit value is exact; this leaves float32 and rounding room but
    # not an undecoded (sRGB) value or a 2.2-gamma approximation.
    r.check("base colours are the spec's sRGB values decoded to linear (within 0.003)", 3, all_of([
        (f"{name}[{i}]", near(as_float(pbr(name).get("baseColorFactor", [1, 1, 1, 1]), i), v, abs=0.003))
        for name, spec in sorted(parts.items()) for i, v in enumerate(spec["base_color_factor"])]))
    # 0.005: the spec gives two decimals. glTF defaults: metallic and roughness 1, transmission 0.
    r.check("metallic, roughness and transmission as specified (within 0.005)", 2, all_of([
        (f"{name} {key}", near(as_float(pbr(name).get(f"{key}Factor", 1.0)), spec[key], abs=0.005))
        for name, spec in sorted(parts.items()) for key in ("metallic", "roughness")] + [
        (f"{name} transmission", near(transmission(materials.get(name, {})), spec["transmission"], abs=0.005))
        for name, spec in sorted(parts.items())]))
    r.check("closed shells are single-sided (no doubleSided material)", 1, all_of([
        (name, Outcome(name in materials and materials[name].get("doubleSided", False) is False,
                       expected=False, seen=materials.get(name, {}).get("doubleSided", "(no such material)")))
        for name in sorted(parts)]))

    fps, frames = ref["fps"], ref["frames"]
    steps = np.diff(times)
    r.check("one clip, one linear key per frame: 120 keys at 30 fps", 1, all_of([
        ("clips", near(len(scene.doc.get("animations", [])), 1, abs=0)),
        ("keys", near(len(times), frames, abs=0)),
        ("frame spacing (s)", near(float(np.abs(steps - 1 / fps).max()) if len(steps) else None, 0.0, abs=1e-4)),
        ("interpolation", Outcome(all(c[4] == "LINEAR" for c in scene.channels),
                                  expected="LINEAR", seen=sorted({c[4] for c in scene.channels})))]))
    yaw, tilt = turn["yaw"][:frames], turn["tilt"][:frames]
    want = np.arange(len(yaw))[:, None] * ref["degrees_per_frame"]
    bad = (np.abs((yaw - want + 180.0) % 360.0 - 180.0) > 0.05) | (tilt > 1e-3)
    problems = [f"frame {k + 1}: {posed[i]['material']} turned {yaw[k, i]:.3f} deg (want"
                f" {(want[k, 0] + 180) % 360 - 180:.3f}), off the vertical by {tilt[k, i]:.1e}"
                for k, i in zip(*np.nonzero(bad), strict=True) if i == np.argmax(bad[k])]
    if len(times) != frames:
        # 121 keys ending on 360 degrees repeat frame 1 when the clip loops: the hitch of a turntable.
        problems.append(f"the clip has {len(times)} keys, not {frames}: the loop does not close on frame 1")
    # 0.05 degree: 1/60 of a frame's 3 degrees; float32 quaternions are good to ~1e-5 degree.
    r.check("turntable: 3 degrees per frame counter-clockwise from above, seamless loop", 4,
            no_problems(problems, "every frame within 0.05 degree of 3 degrees x frame, about +Y", expected="yaw = 3 deg"
                        " x (frame - 1), counter-clockwise seen from +Y"))
    # 1 mm: the spec's placement tolerance, applied to every vertex of every part on every frame.
    r.check("turntable pivots on the product axis: every part turns rigidly about the vertical through the base centre"
            " (every vertex within 1 mm, every frame)", 1, near(turn["drift"] if len(times) >= 2 else None, 0.0, abs=MM))
    return r


def motion(scene: Scene, posed: list[dict], base: np.ndarray, frames: int) -> dict:
    """Per key (rows) and primitive (columns): the turn about +Y since the first key and the tilt off a pure turn;
    over the first `frames` keys, the farthest a vertex lies from a rigid turn by that angle about the vertical at `base`."""
    yaw, tilt, drift = np.zeros((len(scene.times), len(posed))), np.zeros((len(scene.times), len(posed))), 0.0
    # Per primitive, the first key's inverse rotation and vertices about `base`; no key, no inverse taken.
    undo = [np.linalg.pinv(p0["matrix"][:3, :3]) for p0 in posed] if len(scene.times) else []
    rest = [p0["wpos"] - base for p0 in posed]
    for k, t in enumerate(scene.times):
        for i, (p, inverse, offsets) in enumerate(zip(scene.posed(float(t)), undo, rest, strict=True)):
            rot = p["matrix"][:3, :3] @ inverse
            yaw[k, i] = math.degrees(math.atan2(rot[0, 2], rot[0, 0]))
            turn = turn_y(yaw[k, i])
            tilt[k, i] = float(np.abs(rot - turn).max())
            if k < frames:
                drift = max(drift, float(np.linalg.norm(p["wpos"] - (offsets @ turn.T + base), axis=1).max()))
    return {"yaw": yaw, "tilt": tilt, "drift": drift}


def revolution(turn: dict) -> Outcome:
    """Some part of the product turns about +Y: one way, no tilt, most of a revolution (parts left still: turntable check)."""
    if len(turn["yaw"]) < 2:
        return Outcome(False, f"{len(turn['yaw'])} key(s): no turntable clip", expected=">= 300 degrees about +Y")
    steps = (np.diff(turn["yaw"], axis=0) + 180.0) % 360.0 - 180.0
    total, tilt = steps.sum(axis=0), turn["tilt"].max(axis=0)
    one_way = (steps >= -1e-6).all(axis=0) | (steps <= 1e-6).all(axis=0)
    turning = (tilt <= 1e-3) & one_way & (np.abs(total) >= 300.0)
    return Outcome(bool(turning.any()), f"{int(turning.sum())} of {len(total)} primitives turn at least 300"
                   f" degrees one way about +Y over {len(turn['yaw'])} keys; turns {np.round(total, 2).tolist()}",
                   expected=">= 300 degrees about +Y, one way, no tilt", seen=np.round(total, 3).tolist())


def silhouette(whole: dict, posed: list[dict], ref: dict) -> tuple[str, Outcome]:
    """Every vertex on the CAD's (radius, height) profile about the vertical axis through the
    model's own centre, and every point of the profile carried by a vertex: a stand-in shape, a
    wrong scale or a product lying down fails; a misplaced pivot or a flipped shell does not."""
    centre = (whole["max"] + whole["min"]) / 2
    pts = np.vstack([p["wpos"] for p in posed])
    seen = np.unique(np.round(np.column_stack([
        np.hypot(pts[:, 0] - centre[0], pts[:, 2] - centre[2]), pts[:, 1] - whole["min"][1]]), 5), axis=0)
    want = np.array(ref["profile_r_y"], dtype=float)
    if len(seen) > 20000:
        return "profile", Outcome(False, f"{len(seen)} distinct profile points: not the CAD's tessellation")
    dist = np.sqrt(((seen[:, None, :] - want[None, :, :]) ** 2).sum(axis=2))
    stray, uncovered = float(dist.min(axis=1).max()), float(dist.min(axis=0).max())
    # 2 mm: the same tolerance as the delivery spec's 1 mm on each of radius and height.
    return "profile", Outcome(max(stray, uncovered) <= 2 * MM,
                              f"farthest vertex {stray * 1e3:.2f} mm off the CAD profile, farthest"
                              f" profile point {uncovered * 1e3:.2f} mm from any vertex",
                              expected="both within 2 mm", seen=[round(stray, 6), round(uncovered, 6)])


def transmission(material: dict) -> float | None:
    ext = material.get("extensions", {})
    ext = ext.get("KHR_materials_transmission", {}) if isinstance(ext, dict) else {}
    return as_float(ext.get("transmissionFactor", 0.0)) if isinstance(ext, dict) else None


def as_float(value, index: int | None = None) -> float | None:
    try:
        v = value[index] if index is not None else value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    except (IndexError, KeyError, TypeError):
        return None
