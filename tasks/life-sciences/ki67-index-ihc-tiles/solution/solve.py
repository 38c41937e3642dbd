"""Ki-67 index per tile: OD from the measured glass, deconvolution, nuclei by watershed, DAB per nucleus."""

import csv
import json
import re
import sys
from pathlib import Path

import numpy as np
import tifffile
from scipy import ndimage
from skimage import feature, filters, measure, morphology, segmentation

CUTOFF_OD = 0.15


def microns_per_pixel(tif: tifffile.TiffFile) -> float:
    found = re.search(r"MPP = ([0-9.]+)", tif.pages[0].description or "")
    return float(found.group(1))


def concentrations(rgb: np.ndarray, stains: np.ndarray) -> np.ndarray:
    flat = rgb.reshape(-1, 3).astype(float)
    bright = flat.sum(axis=1) >= np.percentile(flat.sum(axis=1), 95)
    glass = np.median(flat[bright], axis=0)
    od = -np.log10(np.clip(flat, 1, None) / glass)
    conc = od @ np.linalg.pinv(stains)
    return conc.reshape(rgb.shape[0], rgb.shape[1], -1)


def nuclei(conc: np.ndarray, mpp: float) -> np.ndarray:
    total = filters.gaussian(conc[..., 0] + conc[..., 1], sigma=0.8 / mpp)
    mask = total > filters.threshold_otsu(total)
    mask = ndimage.binary_fill_holes(morphology.remove_small_objects(mask, max(2, int(15 / mpp**2))))
    dist = ndimage.distance_transform_edt(mask)
    peaks = feature.peak_local_max(dist, min_distance=max(1, int(round(3.0 / mpp))), labels=measure.label(mask),
                                   exclude_border=False)
    markers = np.zeros(mask.shape, dtype=np.int32)
    markers[tuple(peaks.T)] = np.arange(1, len(peaks) + 1)
    return segmentation.watershed(-dist, markers, mask=mask).astype(np.uint16)


def main(inputs: Path, out: Path) -> None:
    cal = json.loads((inputs / "stain_calibration.json").read_text())
    h, d = np.array(cal["hematoxylin"]), np.array(cal["dab"])
    stains = np.stack([h, d, np.cross(h, d) / np.linalg.norm(np.cross(h, d))])
    (out / "labels").mkdir(parents=True, exist_ok=True)
    rows, summary = [], {"tiles": {}}
    for path in sorted((inputs / "tiles").glob("*.tif")):
        with tifffile.TiffFile(path) as tif:
            mpp = microns_per_pixel(tif)
            rgb = tif.asarray()
        conc = concentrations(rgb, stains)
        labels = nuclei(conc, mpp)
        tifffile.imwrite(out / "labels" / path.name, labels)
        n = pos = 0
        for region in measure.regionprops(labels, intensity_image=conc[..., 1]):
            y, x = region.centroid
            dab = float(region.intensity_mean)
            positive = int(dab > CUTOFF_OD)
            rows.append({"tile": path.stem, "label": region.label, "x_um": round((x + 0.5) * mpp, 2),
                         "y_um": round((y + 0.5) * mpp, 2), "area_um2": round(region.area * mpp**2, 2),
                         "dab_od": round(dab, 4), "ki67_positive": positive})
            n, pos = n + 1, pos + positive
        summary["tiles"][path.stem] = {"microns_per_pixel": mpp, "nuclei": n, "positive": pos,
                                       "ki67_index_pct": round(100 * pos / n, 2)}
    n_all = sum(t["nuclei"] for t in summary["tiles"].values())
    pos_all = sum(t["positive"] for t in summary["tiles"].values())
    summary["overall"] = {"nuclei": n_all, "positive": pos_all, "ki67_index_pct": round(100 * pos_all / n_all, 2)}
    with open(out / "nuclei.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
