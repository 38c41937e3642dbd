"""Seeded generator of inputs/ and reference/ for ct-lesion-volumetry-seg: python3 generate.py --out DIR.

A portal-venous liver CT (targeted reconstruction) with one solid hypodense lesion, a simple cyst
next to it, a portal vein branch and the liver edge. Planted: reconstruction interval 2.0 mm with
SliceThickness 2.5 mm, one slice dropped inside the lesion, files from two reconstruction jobs
with different pixel representation and RescaleIntercept, random file names, and the localizer
exported into the same folder.
"""

import argparse
import json
from pathlib import Path

import numpy as np
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

SEED = 20261203
CANARY = "011401d6-9542-46ad-9bab-e12ced0f2983"
ROWS = COLS = 96
PIXEL_MM = 0.9
X0, Y0 = -30.0, 10.0  # centre of the first pixel, LPS mm
Z0, INTERVAL, N_RECON = -118.0, 2.0, 40
DROPPED = 20  # index of the reconstruction position lost in transfer
THICKNESS = 2.5
HU = {"fat": -95.0, "liver": 108.0, "lesion": 36.0, "cyst": 6.0, "vein": 175.0}
NOISE_SD = 12.0
LESION = [  # (centre LPS mm, semi-axes mm, in-plane rotation deg)
    ((12.0, 52.0, -80.0), (18.0, 9.0, 9.0), 28.0),
    ((26.0, 63.0, -75.0), (9.0, 7.0, 7.0), -20.0),
    ((0.0, 43.0, -87.0), (7.0, 6.0, 6.0), -15.0),
]
SEED_POINT = (12.0, 52.0, -80.0)
CYST = ((-9.0, 76.0, -77.0), 8.0)
VEIN = ((28.0, 30.0), 3.2)  # centre (x, y) and radius: runs along z
LIVER = ((10.0, 60.0), (62.0, 50.0))  # in-plane ellipse (centre, semi-axes); outside is fat
UID_ROOT = "1.2.826.0.1.3680043.8.498."


def uid(*parts: object) -> str:
    return generate_uid(prefix=UID_ROOT, entropy_srcs=[str(SEED), *map(str, parts)])


def in_lesion(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    inside = np.zeros(np.broadcast_shapes(x.shape, y.shape, z.shape), dtype=bool)
    for (cx, cy, cz), (a, b, c), rot in LESION:
        t = np.deg2rad(rot)
        u = (x - cx) * np.cos(t) + (y - cy) * np.sin(t)
        v = -(x - cx) * np.sin(t) + (y - cy) * np.cos(t)
        inside |= (u / a) ** 2 + (v / b) ** 2 + ((z - cz) / c) ** 2 <= 1.0
    return inside


def phantom(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    (lx, ly), (la, lb) = LIVER
    img = np.where(((x - lx) / la) ** 2 + ((y - ly) / lb) ** 2 <= 1.0, HU["liver"], HU["fat"])
    img = np.broadcast_to(img, np.broadcast_shapes(x.shape, y.shape, z.shape)).copy()
    (vx, vy), vr = VEIN
    img[np.broadcast_to((x - vx) ** 2 + (y - vy) ** 2 <= vr**2, img.shape)] = HU["vein"]
    (cx, cy, cz), cr = CYST
    img[(x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 <= cr**2] = HU["cyst"]
    img[in_lesion(x, y, z)] = HU["lesion"]
    return img


def slice_image(z: float, rng: np.random.Generator) -> np.ndarray:
    """A slice with partial volume (3x3 in plane, 5 through the slab) and correlated noise."""
    sub = (np.arange(3 * COLS) - 1) / 3.0
    xs = X0 + sub * PIXEL_MM
    ys = Y0 + sub * PIXEL_MM
    acc = np.zeros((3 * ROWS, 3 * COLS))
    for dz in np.linspace(-THICKNESS / 2, THICKNESS / 2, 5):
        acc += phantom(xs[None, :], ys[:, None], np.array(z + dz))
    img = (acc / 5).reshape(ROWS, 3, COLS, 3).mean(axis=(1, 3))
    noise = rng.normal(0.0, 1.0, (ROWS + 2, COLS + 2))
    noise = (noise[1:-1, 1:-1] * 2 + noise[:-2, 1:-1] + noise[2:, 1:-1] + noise[1:-1, :-2] + noise[1:-1, 2:]) / np.sqrt(8.0)
    return np.rint(img + NOISE_SD * noise)


def base_dataset(sop_uid: str, series_uid: str) -> Dataset:
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CTImageStorage
    meta.MediaStorageSOPInstanceUID = sop_uid
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID = CTImageStorage
    ds.SOPInstanceUID = sop_uid
    ds.StudyInstanceUID = uid("study")
    ds.SeriesInstanceUID = series_uid
    ds.FrameOfReferenceUID = uid("for")
    ds.PatientName = "PHANTOM^LIVER"
    ds.PatientID = "LX-20461"
    ds.PatientBirthDate = "19580412"
    ds.PatientSex = "F"
    ds.StudyDate = ds.SeriesDate = ds.ContentDate = "20261102"
    ds.StudyTime = "101500"
    ds.AccessionNumber = "A26110217"
    ds.StudyID = "1"
    ds.Modality = "CT"
    ds.Manufacturer = "lastexam synthetic"
    ds.PositionReferenceIndicator = ""
    ds.BodyPartExamined = "ABDOMEN"
    ds.PatientPosition = "FFS"
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    ds.RescaleType = "HU"
    ds.KVP = "120"
    return ds


def write_ct(out: Path, rng: np.random.Generator) -> dict:
    series_uid = uid("series", "ct")
    names = sorted({f"IM{rng.integers(0, 16**8):08X}" for _ in range(80)})
    order = rng.permutation(len(names))
    kept = [i for i in range(N_RECON) if i != DROPPED]
    job_b = set(int(i) for i in rng.choice(kept, size=16, replace=False))
    slices = []
    for n, i in enumerate(kept):
        z = Z0 + INTERVAL * i
        hu = slice_image(z, rng)
        sop = uid("ct", i)
        ds = base_dataset(sop, series_uid)
        ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
        ds.SeriesNumber = 3
        ds.SeriesDescription = "Liver PV 2.5mm"
        ds.InstanceNumber = N_RECON - i  # acquired cranio-caudal: numbers fall with z
        ds.ImagePositionPatient = [X0, Y0, z]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.SliceLocation = z
        ds.SliceThickness = THICKNESS
        ds.Rows, ds.Columns = ROWS, COLS
        ds.PixelSpacing = [PIXEL_MM, PIXEL_MM]
        if i in job_b:  # second reconstruction job: signed, intercept 0, 0.5 HU per unit
            ds.PixelRepresentation, ds.RescaleSlope, ds.RescaleIntercept = 1, 0.5, 0
            ds.PixelData = (hu * 2).astype("<i2").tobytes()
        else:
            ds.PixelRepresentation, ds.RescaleSlope, ds.RescaleIntercept = 0, 1, -1024
            ds.PixelData = (hu + 1024).astype("<u2").tobytes()
        ds.WindowCenter, ds.WindowWidth = 60, 400
        ds.save_as(out / names[order[n]], enforce_file_format=True)
        slices.append({"z": z, "sop": sop, "hu": hu})
    loc = base_dataset(uid("localizer"), uid("series", "localizer"))
    loc.ImageType = ["ORIGINAL", "PRIMARY", "LOCALIZER"]
    loc.SeriesNumber = 1
    loc.SeriesDescription = "Topogram 0.6"
    loc.InstanceNumber = 1
    loc.ImagePositionPatient = [-200.0, 0.0, 50.0]
    loc.ImageOrientationPatient = [1, 0, 0, 0, 0, -1]
    loc.Rows, loc.Columns = 80, 64
    loc.PixelSpacing = [4.0, 6.25]
    loc.PixelRepresentation, loc.RescaleSlope, loc.RescaleIntercept = 0, 1, -1024
    loc.PixelData = np.clip(rng.normal(900, 200, (80, 64)), 0, 4095).astype("<u2").tobytes()
    loc.save_as(out / names[order[len(kept)]], enforce_file_format=True)
    return {"series_uid": series_uid, "localizer_sop": loc.SOPInstanceUID, "slices": slices}


def feret(points: np.ndarray) -> tuple[float, float]:
    """Longest chord between pixel centres, and the longest chord perpendicular (within 10 deg) to it."""
    d = points[:, None, :] - points[None, :, :]
    dist = np.hypot(d[..., 0], d[..., 1])
    i, j = np.unravel_index(np.argmax(dist), dist.shape)
    axis = d[i, j] / dist[i, j]
    cos = np.abs(d[..., 0] * axis[0] + d[..., 1] * axis[1]) / np.where(dist > 0, dist, 1.0)
    perp = np.where((dist > 0) & (cos <= np.sin(np.deg2rad(10.0))), dist, 0.0)
    return float(dist[i, j]), float(perp.max())


def truth(ct: dict) -> dict:
    xs = X0 + np.arange(COLS) * PIXEL_MM
    ys = Y0 + np.arange(ROWS) * PIXEL_MM
    masks = np.stack([in_lesion(xs[None, :], ys[:, None], np.array(s["z"])) for s in ct["slices"]])
    hu = np.stack([s["hu"] for s in ct["slices"]])
    best = (0.0, 0.0, 0.0)
    for k, m in enumerate(masks):
        if m.sum() >= 2:
            rr, cc = np.nonzero(m)
            long_mm, short_mm = feret(np.stack([xs[cc], ys[rr]], axis=1))
            if long_mm > best[0]:
                best = (long_mm, short_mm, ct["slices"][k]["z"])
    g = np.arange(-40.0, 40.0, 0.2) + 0.1  # fine grid around the lesion for its true volume
    cx, cy, cz = SEED_POINT
    vol = sum(int(in_lesion(cx + g[None, :, None], cy + g[:, None, None], np.array(cz + z)).sum()) for z in g) * 0.2**3
    return {
        "canary": CANARY,
        "series_instance_uid": ct["series_uid"],
        "frame_of_reference_uid": uid("for"),
        "StudyInstanceUID": uid("study"),
        "PatientID": "LX-20461",
        "localizer_sop_instance_uid": ct["localizer_sop"],
        "slice_z_mm": [s["z"] for s in ct["slices"]],
        "sop_instance_uids": [s["sop"] for s in ct["slices"]],
        "slice_count": len(ct["slices"]),
        "reconstruction_interval_mm": INTERVAL,
        "missing_slice_z_mm": [Z0 + INTERVAL * DROPPED],
        "volume_ml": round(vol / 1000.0, 4),
        "mean_hu": round(float(hu[masks].mean()), 3),
        "lesion_hu": HU["lesion"],
        "long_axis_mm": round(best[0], 3),
        "short_axis_mm": round(best[1], 3),
        "long_axis_z_mm": best[2],
        "mask_shape": list(masks.shape),
        "grid": {"x0": X0, "y0": Y0, "pixel_mm": PIXEL_MM},
    }, masks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = np.random.default_rng(SEED)
    series = out / "inputs" / "series"
    series.mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    ct = write_ct(series, rng)
    ref, masks = truth(ct)
    (out / "reference" / "truth.json").write_text(json.dumps(ref, indent=1) + "\n")
    np.save(out / "reference" / "truth_mask_packed.npy", np.packbits(masks.ravel()))


if __name__ == "__main__":
    main()
