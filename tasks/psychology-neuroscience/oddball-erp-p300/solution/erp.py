"""Oracle for oddball-erp-p300: the lab's ERP pipeline with MNE-Python.

    python3 erp.py INPUT_DIR OUTPUT_DIR
"""

import csv
import json
import sys
from pathlib import Path

import mne
import numpy as np

LAG_S = 0.024
WINDOWS = [  # component, channel, peak window (s), polarity, mean window (s)
    ("P3", "Fz", 0.25, 0.50, "max", 0.30, 0.45),
    ("P3", "Cz", 0.25, 0.50, "max", 0.30, 0.45),
    ("P3", "Pz", 0.25, 0.50, "max", 0.30, 0.45),
    ("N1", "Oz", 0.12, 0.22, "min", 0.14, 0.20),
]


def main() -> None:
    inputs, out = Path(sys.argv[1]), Path(sys.argv[2])
    mne.set_log_level("WARNING")
    raw = mne.io.read_raw_brainvision(inputs / "sub-07_task-oddball_eeg.vhdr", preload=True)
    raw.set_channel_types({"VEOG": "eog"})
    raw.set_montage("standard_1020")
    raw.filter(l_freq=0.1, h_freq=30.0)

    # Bad channels: robust amplitude (median absolute deviation) far from the cap's median.
    picks = mne.pick_types(raw.info, eeg=True)
    x = raw.get_data(picks=picks)
    mad = np.median(np.abs(x - np.median(x, axis=1, keepdims=True)), axis=1)
    ratio = mad / np.median(mad)
    bads = sorted(raw.ch_names[p] for p, r in zip(picks, ratio, strict=False) if r > 3.0 or r < 0.2)
    raw.info["bads"] = bads
    raw.interpolate_bads(reset_bads=True)
    raw.set_eeg_reference("average", projection=False)

    events, event_id = mne.events_from_annotations(raw)
    sfreq = raw.info["sfreq"]
    lag = int(round(LAG_S * sfreq))
    responses = events[events[:, 2] == event_id["Response/R  1"], 0]
    found = {"standard": 0, "target": 0}
    excluded = {"standard": 0, "target": 0}
    kept, rts = [], []
    for code, cond in ((event_id["Stimulus/S  1"], "standard"), (event_id["Stimulus/S  2"], "target")):
        for sample in events[events[:, 2] == code, 0]:
            onset = sample + lag
            found[cond] += 1
            rel = (responses - onset) / sfreq
            in_window = rel[(rel >= 0.15) & (rel <= 1.0)]
            if cond == "target" and len(in_window):
                rts.append(in_window.min() * 1000.0)
                kept.append([onset, 0, 2])
            elif cond == "standard" and not len(in_window):
                kept.append([onset, 0, 1])
            else:
                excluded[cond] += 1
    kept = np.array(sorted(kept), dtype=int)

    epochs = mne.Epochs(raw, kept, {"standard": 1, "target": 2}, tmin=-0.2, tmax=0.8,
                        baseline=(-0.2, 0.0), reject={"eeg": 100e-6, "eog": 120e-6}, preload=True)
    standard = epochs["standard"].average()
    target = epochs["target"].average()
    difference = mne.combine_evoked([target, standard], weights=[1, -1])
    standard.comment, target.comment, difference.comment = "standard", "target", "difference"
    mne.write_evokeds(out / "evokeds-ave.fif", [standard, target, difference], overwrite=True)

    with open(out / "erp_measures.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition", "component", "channel", "peak_latency_ms", "peak_amplitude_uv",
                    "mean_amplitude_uv"])
        for comp, ch, p0, p1, pol, m0, m1 in WINDOWS:
            for ev in (standard, target, difference):
                y = ev.get_data(picks=[ch])[0] * 1e6
                t = ev.times
                win = np.flatnonzero((t >= p0 - 1e-4) & (t <= p1 + 1e-4))
                k = win[np.argmax(y[win])] if pol == "max" else win[np.argmin(y[win])]
                mean = y[(t >= m0 - 1e-4) & (t <= m1 + 1e-4)].mean()
                w.writerow([ev.comment, comp, ch, f"{t[k] * 1000:.1f}", f"{y[k]:.4f}", f"{mean:.4f}"])

    retained = {c: len(epochs[c]) for c in ("standard", "target")}
    summary = {
        "bad_channels": bads,
        "trials_found": found,
        "excluded_behaviour": excluded,
        "rejected_artifact": {c: found[c] - excluded[c] - retained[c] for c in found},
        "epochs_retained": retained,
        "hit_rate": round(len(rts) / found["target"], 4),
        "mean_rt_ms": round(float(np.mean(rts)), 2),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
