"""Lesion volumetry: load and sort the CT series, region-grow the lesion from the seed, measure, write a DICOM SEG."""

import json
import sys
from pathlib import Path

import highdicom as hd
import numpy as np
import pydicom
from pydicom.pixels import apply_modality_lut
from pydicom.sr.codedict import codes
from scipy import ndimage

SEED_LPS = np.array([12.0, 52.0, -80.0])


def load_series(folder: Path) -> list[pydicom.Dataset]:
    images = []
    for path in sorted(folder.iterdir()):
        ds = pydicom.dcmread(path)
        if ds.SOPClassUID == pydicom.uid.CTImageStorage and "LOCALIZER" not in ds.ImageType:
            images.append(ds)
    normal = np.cross(*np.reshape(images[0].ImageOrientationPatient, (2, 3)))
    return sorted(images, key=lambda d: float(np.dot(normal, d.ImagePositionPatient)))


def feret(points: np.ndarray) -> tuple[float, float]:
    d = points[:, None, :] - points[None, :, :]
    dist = np.hypot(d[..., 0], d[..., 1])
    i, j = np.unravel_index(np.argmax(dist), dist.shape)
    axis = d[i, j] / dist[i, j]
    cos = np.abs(d[..., 0] * axis[0] + d[..., 1] * axis[1]) / np.where(dist > 0, dist, 1.0)
    return float(dist[i, j]), float(np.where((dist > 0) & (cos <= 0.17), dist, 0.0).max())


def main(folder: Path, out: Path) -> None:
    images = load_series(folder)
    hu = np.stack([apply_modality_lut(ds.pixel_array, ds).astype(float) for ds in images])
    z = np.array([float(ds.ImagePositionPatient[2]) for ds in images])
    gaps = np.diff(z)
    interval = float(np.median(gaps))
    missing = [float(z[k] + interval * m) for k in np.nonzero(gaps > 1.5 * interval)[0]
               for m in range(1, int(round(gaps[k] / interval)))]
    edges = np.concatenate([[z[0] - interval / 2], (z[:-1] + z[1:]) / 2, [z[-1] + interval / 2]])
    extent = np.diff(edges)  # each slice's share of the z axis, from the positions

    row_mm, col_mm = (float(v) for v in images[0].PixelSpacing)
    x0, y0 = (float(v) for v in images[0].ImagePositionPatient[:2])
    seed = (int(np.argmin(np.abs(z - SEED_LPS[2]))), int(round((SEED_LPS[1] - y0) / row_mm)),
            int(round((SEED_LPS[0] - x0) / col_mm)))
    smooth = np.stack([ndimage.median_filter(s, size=3) for s in hu])
    lesion_level = float(np.median(smooth[seed[0], seed[1] - 2:seed[1] + 3, seed[2] - 2:seed[2] + 3]))
    liver_level = float(np.median(smooth[(smooth > lesion_level + 40) & (smooth < 160)]))
    candidate = smooth < (lesion_level + liver_level) / 2
    labels, _ = ndimage.label(candidate)
    mask = labels == labels[seed]
    mask = np.stack([ndimage.binary_fill_holes(m) for m in mask])

    best = (0.0, 0.0)
    for m in mask:
        if m.sum() >= 2:
            rr, cc = np.nonzero(m)
            best = max(best, feret(np.stack([x0 + cc * col_mm, y0 + rr * row_mm], axis=1)))
    vals = hu[mask]
    volume = float((mask.sum(axis=(1, 2)) * extent).sum() * row_mm * col_mm / 1000.0)
    measurements = {
        "series_instance_uid": str(images[0].SeriesInstanceUID),
        "slice_count": len(images),
        "reconstruction_interval_mm": round(interval, 3),
        "missing_slice_z_mm": [round(v, 2) for v in missing],
        "volume_ml": round(volume, 3),
        "mean_hu": round(float(vals.mean()), 1),
        "sd_hu": round(float(vals.std()), 1),
        "long_axis_mm": round(best[0], 1),
        "short_axis_mm": round(best[1], 1),
    }
    (out / "measurements.json").write_text(json.dumps(measurements, indent=2) + "\n")

    description = hd.seg.SegmentDescription(
        segment_number=1, segment_label="Target lesion",
        segmented_property_category=hd.sr.CodedConcept("49755003", "SCT", "Morphologically abnormal structure"),
        segmented_property_type=hd.sr.CodedConcept("4147007", "SCT", "Mass"),
        algorithm_type=hd.seg.SegmentAlgorithmTypeValues.SEMIAUTOMATIC,
        algorithm_identification=hd.AlgorithmIdentificationSequence(
            name="seeded threshold region growing", family=codes.cid7162.ArtificialIntelligence, version="1"),
    )
    seg = hd.seg.Segmentation(
        source_images=images, pixel_array=mask.astype(np.uint8), segmentation_type="BINARY",
        segment_descriptions=[description], series_instance_uid=hd.UID(), series_number=300,
        sop_instance_uid=hd.UID(), instance_number=1, manufacturer="lastexam oracle",
        manufacturer_model_name="solve.py", software_versions=hd.__version__, device_serial_number="1",
    )
    seg.save_as(out / "lesion_seg.dcm")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
