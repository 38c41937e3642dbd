"""Grader for ct-lesion-volumetry-seg: the SEG and the measurements against the phantom's truth.

Tolerances (and why):
- Dice >= 0.90 (check) and >= 0.75 (crux gate): the truth is the set of voxel centres inside the
  analytic lesion; noise (SD 12 HU) and partial volume on 2.5 mm slabs cost a careful
  segmentation 0.03-0.06; a sphere placed at the seed, a global threshold that swallows the cyst
  or a mask shifted by a slice-ordering error falls far below 0.75;
- volume, two ways: within 4 % of the volume the agent's own SEG fills, each image standing for
  the span between the midpoints to its neighbours (the missing image's span shared by its two
  neighbours; interpolating the missing frame gives the same), which isolates the spacing: the
  SliceThickness (2.5 mm) as the spacing adds 25 %, ignoring the gap loses 14 %; and within 10 %
  of the analytic volume, which catches the cyst (+25 %) while accepting valid segmentations
  (half-way threshold 3 % low, unsmoothed 6 % low, a 40 % threshold with Dice 0.95 8 % low:
  slab partial volume thins the lesion's poles; that 40 % threshold on 3D-smoothed HU, Dice 0.93,
  lands 13 % low and fails);
- mean HU 5 HU of the mean over the truth mask: boundary voxels move it by 1-3 HU; one rescale
  applied to the other reconstruction job's files moves it by hundreds;
- mean and SD against the agent's own SEG 0.6 HU: both are asked to 0.1 HU; population and
  sample SD differ by < 0.01 HU for thousands of voxels; the slack covers rounding;
- diameters 2.5 mm: nearly three pixels (0.9 mm), for pixel-centre vs pixel-edge conventions and
  boundary differences of a valid segmentation;
- reconstruction interval 0.05 mm and missing positions 0.5 mm: read from the headers.
"""

from __future__ import annotations

import numpy as np

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, as_number, get, load_json, near

SEG_CLASS = "1.2.840.10008.5.1.4.1.1.66.4"
MAX_SEG_BYTES = 64 * 1024 * 1024
CATEGORY, TYPE = ("49755003", "SCT"), ("4147007", "SCT")
CRUX_DICE, GOOD_DICE = 0.75, 0.90
POS_MM = 0.05  # a frame belongs to a CT slice when its position matches within this
MAX_FRAMES = 4096  # a hundred times the series' images
TRUE_VOLUME_REL, OWN_VOLUME_REL = 0.10, 0.04  # the volume check names them: change both together


def _group(frame, shared, name):
    """A functional group's item, per frame or, when absent there, shared (PS3.3 C.7.6.16)."""
    if name in frame:
        return frame[name].value[0]
    return shared[name].value[0]


def read_seg(path, truth):
    """(dataset, mask on the CT grid, outcome); dataset and mask are None when the SEG is unusable."""
    import pydicom

    if not path.is_file():
        return None, None, Outcome(False, "lesion_seg.dcm is missing")
    if path.stat().st_size > MAX_SEG_BYTES:
        return None, None, Outcome(False, f"lesion_seg.dcm is larger than {MAX_SEG_BYTES} bytes")
    try:
        ds = pydicom.dcmread(path)
        if ds.get("SOPClassUID") != SEG_CLASS:
            return None, None, Outcome(False, f"SOPClassUID is {ds.get('SOPClassUID')!r}, not Segmentation Storage",
                                 expected=SEG_CLASS, seen=str(ds.get("SOPClassUID")))
        if ds.get("SegmentationType") != "BINARY":
            return None, None, Outcome(False, f"SegmentationType is {ds.get('SegmentationType')!r}, not BINARY")
        rows, cols, n_frames = int(ds.Rows), int(ds.Columns), int(ds.get("NumberOfFrames") or 1)
        # A compressed SEG can declare frames far larger than its file: check before decoding.
        if (rows, cols) != tuple(truth["mask_shape"][1:]) or not 0 < n_frames <= MAX_FRAMES:
            return None, None, Outcome(False, f"{n_frames} frames of {rows}x{cols}; the CT grid is "
                                              f"{truth['mask_shape'][1]}x{truth['mask_shape'][2]}, at most {MAX_FRAMES} frames")
        frames = np.asarray(ds.pixel_array)
        frames = frames.reshape((-1, int(ds.Rows), int(ds.Columns)))
        per_frame = ds.PerFrameFunctionalGroupsSequence
        shared = ds.SharedFunctionalGroupsSequence[0] if "SharedFunctionalGroupsSequence" in ds else None
        orient = _group(per_frame[0], shared, "PlaneOrientationSequence").ImageOrientationPatient
        spacings = {tuple(float(v) for v in _group(f, shared, "PixelMeasuresSequence").PixelSpacing) for f in per_frame}
        positions = [[float(v) for v in _group(f, shared, "PlanePositionSequence").ImagePositionPatient]
                     for f in per_frame]
        segments = [int(_group(f, shared, "SegmentIdentificationSequence").ReferencedSegmentNumber) for f in per_frame]
    except Exception as e:  # pydicom raises many types on hostile files
        return None, None, Outcome(False, f"lesion_seg.dcm is not a readable binary SEG: {type(e).__name__}: {e}"[:300])
    shape = truth["mask_shape"]
    if len(positions) != len(frames) or (int(ds.Rows), int(ds.Columns)) != tuple(shape[1:]):
        return None, None, Outcome(False, f"{len(frames)} frames of {ds.Rows}x{ds.Columns} for {len(positions)} positions; "
                                    f"the CT grid is {shape[1]}x{shape[2]}")
    if not np.allclose([float(v) for v in orient], [1, 0, 0, 0, 1, 0], atol=1e-4):
        return None, None, Outcome(False, f"frames are not axial like the CT: orientation {list(orient)}")
    grid, zs = truth["grid"], np.array(truth["slice_z_mm"])
    if any(len(s) != 2 or not np.allclose(s, [grid["pixel_mm"]] * 2, atol=1e-3) for s in spacings):
        return None, None, Outcome(False, f"PixelMeasuresSequence PixelSpacing {sorted(spacings)[:3]} is not the CT's "
                                          f"{grid['pixel_mm']} mm", expected=[grid["pixel_mm"]] * 2, seen=sorted(spacings)[:3])
    mask = np.zeros(shape, dtype=bool)
    off = []
    for k, (pos, seg) in enumerate(zip(positions, segments, strict=True)):
        hit = np.nonzero(np.abs(zs - pos[2]) <= POS_MM)[0]
        if seg != 1 or not hit.size or abs(pos[0] - grid["x0"]) > POS_MM or abs(pos[1] - grid["y0"]) > POS_MM:
            off.append({"frame": k + 1, "segment": seg, "position": pos})
            continue
        mask[hit[0]] |= frames[k] > 0
    if off:
        return None, None, Outcome(False, f"{len(off)} frame(s) are not segment 1 on a CT slice position", seen=off[:6])
    return ds, mask, Outcome(True, f"{len(frames)} frames mapped onto the CT slices; {int(mask.sum())} voxels")


def _codes(seq) -> tuple[str, str] | None:
    try:
        return str(seq[0].CodeValue), str(seq[0].CodingSchemeDesignator)
    except Exception:  # absent or malformed code sequence
        return None


def references(ds, truth) -> Outcome:
    sops = set(truth["sop_instance_uids"])
    try:
        series = [(str(s.SeriesInstanceUID), {str(i.ReferencedSOPInstanceUID) for i in s.ReferencedInstanceSequence})
                  for s in ds.ReferencedSeriesSequence]
        for_uid = str(ds.FrameOfReferenceUID)
    except Exception:  # the attribute is missing or malformed
        return Outcome(False, "no ReferencedSeriesSequence with ReferencedInstanceSequence, or no FrameOfReferenceUID")
    uids = {u for _, refs in series for u in refs}
    return all_of({
        "references the CT series": Outcome(truth["series_instance_uid"] in {s for s, _ in series},
                                            "series referenced", expected=truth["series_instance_uid"],
                                            seen=[s for s, _ in series]),
        "references only images of the CT series": Outcome(bool(uids) and uids <= sops,
                                                           f"{len(uids - sops)} foreign instance(s)",
                                                           seen=sorted(uids - sops)[:4]),
        "shares the CT frame of reference": Outcome(for_uid == truth["frame_of_reference_uid"], "frame of reference",
                                                    expected=truth["frame_of_reference_uid"], seen=for_uid),
    })


def grade(ctx: GradeContext) -> Rubric:
    import pydicom
    from pydicom.pixels import apply_modality_lut

    r = Rubric()
    truth = ctx.reference_json("truth.json")
    shape = tuple(truth["mask_shape"])
    true_mask = np.unpackbits(np.load(ctx.ref("truth_mask_packed.npy")))[: int(np.prod(shape))].reshape(shape).astype(bool)

    meas, parsed = load_json(ctx.out("measurements.json"))
    r.gate("measurements.json parses as a JSON object", parsed)
    ds, seg_mask, seg_ok = read_seg(ctx.out("lesion_seg.dcm"), truth)
    r.gate("lesion_seg.dcm is a binary DICOM SEG whose frames lie on the CT slices", seg_ok)
    mask = seg_mask if seg_mask is not None else np.zeros(shape, dtype=bool)
    both = int((mask & true_mask).sum())
    dice = 2.0 * both / max(1, int(mask.sum()) + int(true_mask.sum()))
    dice_seen = {"dice": round(dice, 4), "voxels": int(mask.sum()), "true_voxels": int(true_mask.sum())}
    r.gate(f"the lesion is segmented: Dice >= {CRUX_DICE} against the truth",
           Outcome(dice >= CRUX_DICE, f"Dice {dice:.3f}", expected=f">= {CRUX_DICE}", seen=dice_seen))
    r.check(f"segmentation Dice >= {GOOD_DICE}", 3,
            Outcome(dice >= GOOD_DICE, f"Dice {dice:.3f}", expected=f">= {GOOD_DICE}", seen=dice_seen))

    if ds is not None:
        r.check("SEG references the CT series and its frame of reference, not the localizer", 2, references(ds, truth))
        seg_seq = ds.get("SegmentSequence") or []
        coded = (_codes(seg_seq[0].get("SegmentedPropertyCategoryCodeSequence")) if seg_seq else None,
                 _codes(seg_seq[0].get("SegmentedPropertyTypeCodeSequence")) if seg_seq else None)
        r.check("one segment coded SCT 49755003 / SCT 4147007", 1,
                Outcome(len(seg_seq) == 1 and coded == (CATEGORY, TYPE), f"{len(seg_seq)} segment(s), codes {coded}",
                        expected=[list(CATEGORY), list(TYPE)], seen=[list(c) if c else None for c in coded]))
        same_patient = all(str(ds.get(k)) == truth[k] for k in ("StudyInstanceUID", "PatientID"))
        r.check("SEG is in the CT's study, for the same patient", 1,
                Outcome(same_patient, "study and patient", expected=[truth["StudyInstanceUID"], truth["PatientID"]],
                        seen=[str(ds.get("StudyInstanceUID")), str(ds.get("PatientID"))]))
    else:
        for name, w in (("SEG references the CT series and its frame of reference, not the localizer", 2),
                        ("one segment coded SCT 49755003 / SCT 4147007", 1),
                        ("SEG is in the CT's study, for the same patient", 1)):
            r.check(name, w, Outcome(False, "no usable SEG"))

    zs = np.array(truth["slice_z_mm"])
    half = truth["reconstruction_interval_mm"] / 2
    span = np.diff(np.concatenate([[zs[0] - half], (zs[:-1] + zs[1:]) / 2, [zs[-1] + half]]))
    own_ml = float((mask.sum(axis=(1, 2)) * span).sum()) * truth["grid"]["pixel_mm"] ** 2 / 1000.0
    r.check("lesion volume within 4 % of the SEG's own voxels and 10 % of the true volume", 3,
            all_of({"own SEG": near(get(meas, "volume_ml"), round(own_ml, 4), rel=OWN_VOLUME_REL),
                    "truth": near(get(meas, "volume_ml"), truth["volume_ml"], rel=TRUE_VOLUME_REL)}))
    r.check("mean HU within 5 HU of the lesion's mean", 2, near(get(meas, "mean_hu"), truth["mean_hu"], abs=5.0))
    r.check("long axis within 2.5 mm", 2, near(get(meas, "long_axis_mm"), truth["long_axis_mm"], abs=2.5))
    r.check("perpendicular short axis within 2.5 mm", 1, near(get(meas, "short_axis_mm"), truth["short_axis_mm"], abs=2.5))

    if mask.any():
        by_sop = {}
        for path in sorted((ctx.inputs / "series").iterdir()):
            img = pydicom.dcmread(path)
            by_sop[str(img.SOPInstanceUID)] = img
        hu = np.stack([apply_modality_lut(by_sop[u].pixel_array, by_sop[u]).astype(float)
                       for u in truth["sop_instance_uids"]])
        own = hu[mask]
        consistent = all_of({
            "mean_hu": near(get(meas, "mean_hu"), round(float(own.mean()), 2), abs=0.6),
            "sd_hu": near(get(meas, "sd_hu"), round(float(own.std()), 2), abs=0.6),
        })
    else:
        consistent = Outcome(False, "no segmented voxels")
    r.check("mean and SD HU are those of the voxels in the SEG", 1, consistent)

    missing = get(meas, "missing_slice_z_mm")
    seen_missing = [as_number(v) for v in missing] if isinstance(missing, list) else None
    r.check("series geometry: image count, reconstruction interval and the missing position", 2, all_of({
        "series_instance_uid": Outcome(get(meas, "series_instance_uid") == truth["series_instance_uid"], "series UID",
                                       expected=truth["series_instance_uid"], seen=str(get(meas, "series_instance_uid"))[:80]),
        "slice_count": near(get(meas, "slice_count"), truth["slice_count"], abs=0),
        "reconstruction_interval_mm": near(get(meas, "reconstruction_interval_mm"), truth["reconstruction_interval_mm"], abs=0.05),
        "missing_slice_z_mm": Outcome(
            seen_missing is not None and len(seen_missing) == len(truth["missing_slice_z_mm"])
            and None not in seen_missing
            and all(abs(v - t) <= 0.5 for v, t in zip(sorted(seen_missing), truth["missing_slice_z_mm"], strict=True)),
            "missing positions", expected=truth["missing_slice_z_mm"], seen=missing if isinstance(missing, list) else str(missing)[:80]),
    }))
    return r
