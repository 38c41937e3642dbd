"""Seeded generator of inputs/ and reference/ for oddball-erp-p300.

    python3 generate.py --out DIR      (run in the `neuro` environment: MNE is needed)

Simulates one participant's visual oddball EEG session recorded with a 28-channel cap referenced
online to FCz, plus a bipolar VEOG, written as a BrainVision set (.vhdr/.vmrk/.eeg, INT_16 at
0.1 uV). Planted: an occipital P1/N1 complex in both conditions, a centro-parietal P3b that is
large for targets, 1/f background with posterior alpha, slow drifts, 50 Hz mains, blinks, one
noisy and one dead electrode, button presses with misses and false alarms, practice trials, and
a constant 24 ms display lag between trigger and stimulus. The reference values are the stated
MNE pipeline run on the written files.
"""

import argparse
import json
from pathlib import Path

import numpy as np

SEED = 3108
CANARY = "3bf61661-2838-497c-9a89-7a5ae9129257"
SFREQ = 250.0
RESOLUTION_UV = 0.1
EEG = ["Fp1", "Fp2", "F7", "F3", "Fz", "F4", "F8", "FC5", "FC1", "FC2", "FC6", "T7", "C3", "Cz",
       "C4", "T8", "CP5", "CP1", "CP2", "CP6", "P7", "P3", "Pz", "P4", "P8", "O1", "Oz", "O2"]
NOISY, DEAD = "T8", "CP6"
LAG_S = 0.024
BASENAME = "sub-07_task-oddball_eeg"
# 64-bit words the generator draws for the 559 603 trial orders rejected at SEED before the
# first one without adjacent targets; `--search` redraws them (some 3 s of CPU).
REJECTED_ORDER_DRAWS = 120_534_295

# The pipeline of instruction.md; shared with nothing else on purpose (the oracle is separate).
L_FREQ, H_FREQ = 0.1, 30.0
BAD_HIGH, BAD_LOW = 3.0, 0.2
TMIN, TMAX = -0.2, 0.8
REJECT = {"eeg": 100e-6, "eog": 120e-6}
RESP_WIN = (0.15, 1.0)
MEASURES = [  # component, channel, window for the peak (s), polarity, window for the mean (s)
    ("P3", "Fz", (0.25, 0.50), "pos", (0.30, 0.45)),
    ("P3", "Cz", (0.25, 0.50), "pos", (0.30, 0.45)),
    ("P3", "Pz", (0.25, 0.50), "pos", (0.30, 0.45)),
    ("N1", "Oz", (0.12, 0.22), "neg", (0.14, 0.20)),
]


def unit_positions(names):
    import mne

    pos = mne.channels.make_standard_montage("standard_1020").get_positions()["ch_pos"]
    out = np.array([pos[n] for n in names], dtype=float)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def topography(positions, centre, width):
    centre = np.asarray(centre, float) / np.linalg.norm(centre)
    ang = np.arccos(np.clip(positions @ centre, -1, 1))
    return np.exp(-(ang**2) / (2 * width**2))


def pink(rng, n, sfreq, fmin=0.5):
    spec = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    f = np.fft.rfftfreq(n, 1 / sfreq)
    spec *= 1 / np.sqrt(np.maximum(f, fmin))
    x = np.fft.irfft(spec, n)
    return x / x.std()


def bandlimited(rng, n, sfreq, lo, hi):
    spec = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    f = np.fft.rfftfreq(n, 1 / sfreq)
    spec[(f < lo) | (f > hi)] = 0
    x = np.fft.irfft(spec, n)
    return x / x.std()


def trial_order(rng, search: bool):
    """Shuffle the 300 experimental trials (60 targets) until no two targets are adjacent."""
    ordered = np.array([1] * 240 + [2] * 60)
    # Elements are only 1 or 2, so this pattern can only match on an element boundary.
    adjacent_targets = np.array([2, 2]).tobytes()
    if not search:
        rng.bit_generator.advance(REJECTED_ORDER_DRAWS)
    while True:
        kinds = ordered.copy()
        rng.shuffle(kinds)
        if adjacent_targets not in kinds.tobytes():
            return kinds
        if not search:
            raise SystemExit("REJECTED_ORDER_DRAWS does not skip to an accepted order: run with --search")


def simulate(rng, search: bool):
    names = [*EEG, "FCz"]  # FCz is the online reference: simulated, then subtracted
    pos = unit_positions(names)
    pos_of = dict(zip(names, pos, strict=False))

    # Trial list: 10 practice trials, then 300 experimental trials (60 targets), no two
    # targets in a row.
    kinds = trial_order(rng, search)
    practice = np.array([11, 11, 12, 11, 11, 11, 12, 11, 11, 12])
    codes = np.concatenate([practice, kinds])
    onsets = []
    t = 4.0
    for i in range(len(codes)):
        if i == len(practice):
            t += 12.0  # pause after practice
        onsets.append(t)
        t += rng.uniform(1.1, 1.5)
    duration = t + 3.0
    n = int(round(duration * SFREQ))
    times = np.arange(n) / SFREQ
    onsets = np.round(np.array(onsets) * SFREQ).astype(int)  # trigger samples

    src = np.zeros((len(names), n))  # potentials against an ideal reference, in uV

    # Background: spatially smooth 1/f sources, posterior alpha, sensor noise.
    for _ in range(30):
        centre = rng.standard_normal(3)
        centre[2] = abs(centre[2]) + 0.3
        src += np.outer(topography(pos, centre, rng.uniform(0.2, 0.4)), pink(rng, n, SFREQ, 1.0)) * rng.uniform(3, 6)
    src += 4.0 * np.vstack([pink(rng, n, SFREQ, 1.0) for _ in names])
    alpha_env = np.convolve(np.abs(rng.standard_normal(n)), np.ones(int(SFREQ)) / SFREQ, "same")
    alpha = np.sin(2 * np.pi * 10.2 * times + rng.uniform(0, 2 * np.pi)) * alpha_env
    src += np.outer(topography(pos, pos_of["Oz"] + 0.3 * pos_of["Pz"], 0.4), alpha / alpha.std()) * 5.0

    # Evoked components at the true stimulus onset (trigger + display lag).
    true_onset = onsets / SFREQ + LAG_S
    p1_top = topography(pos, pos_of["Oz"], 0.45)
    n1_top = topography(pos, pos_of["Oz"] + 0.25 * pos_of["Pz"], 0.55)
    p3_top = topography(pos, pos_of["Pz"] + 0.3 * pos_of["Cz"], 0.75)
    for code, t0 in zip(codes, true_onset, strict=False):
        target = code in (2, 12)
        tt = times - t0
        win = (tt > -0.1) & (tt < 1.0)
        tw = tt[win]
        gain = rng.uniform(0.8, 1.2)
        p1 = 3.0 * gain * np.exp(-((tw - 0.100) ** 2) / (2 * 0.015**2))
        n1 = -7.0 * gain * np.exp(-((tw - 0.172) ** 2) / (2 * 0.022**2))
        lat = 0.372 + rng.normal(0, 0.035)
        amp = (13.0 if target else 3.0) * rng.uniform(0.75, 1.25)
        p3 = amp * np.exp(-((tw - lat) ** 2) / (2 * 0.075**2))
        src[:, win] += np.outer(p1_top, p1) + np.outer(n1_top, n1) + np.outer(p3_top, p3)

    # Behaviour: button R1 for targets (92 % hits), 3 % false alarms on standards.
    responses = []
    for code, t0 in zip(codes, true_onset, strict=False):
        if code in (2, 12) and rng.random() < 0.92:
            responses.append(t0 + float(np.clip(rng.lognormal(np.log(0.46), 0.18), 0.28, 0.95)))
        elif code in (1, 11) and rng.random() < 0.03:
            responses.append(t0 + rng.uniform(0.32, 0.75))
    resp_samples = np.round(np.array(responses) * SFREQ).astype(int)

    # Blinks: about one every 4 s, more likely shortly after a response.
    blink_times = list(np.cumsum(rng.exponential(6.0, size=int(duration / 3))))
    blink_times += [r + rng.uniform(0.15, 0.5) for r in responses if rng.random() < 0.35]
    blink_times = sorted(b for b in blink_times if 1.0 < b < duration - 1.0)
    blink = np.zeros(n)
    for b in blink_times:
        width = rng.uniform(0.25, 0.40)
        s0, s1 = int(b * SFREQ), int((b + width) * SFREQ)
        shape = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(s1 - s0) / (s1 - s0))
        blink[s0:s1] += rng.uniform(130, 260) * shape
    eye = np.array([0.0, 1.0, -0.35])
    eye_top = topography(pos, eye, 0.45)
    eye_top = eye_top / topography(pos_of["Fp1"][None, :], eye, 0.45)[0] * 0.65
    src += np.outer(eye_top, blink)

    # Slow drifts per electrode, then the online reference.
    for i in range(len(names)):
        for f in (0.008, 0.021, 0.043):
            src[i] += rng.uniform(3, 12) * np.sin(2 * np.pi * f * times + rng.uniform(0, 2 * np.pi))
    eeg = src[:-1] - src[-1]

    # Electrode-level problems and mains pickup (after referencing: they are local).
    idx = {c: i for i, c in enumerate(EEG)}
    eeg += 2.0 * rng.standard_normal(eeg.shape)
    for i in range(len(EEG)):
        eeg[i] += rng.uniform(4, 14) * np.sin(2 * np.pi * 50.0 * times + rng.uniform(0, 2 * np.pi))
    eeg[idx[NOISY]] += 55.0 * bandlimited(rng, n, SFREQ, 1.0, 25.0)
    eeg[idx[DEAD]] = -6.3 + 0.05 * rng.standard_normal(n)

    veog = blink + 1.5 * pink(rng, n, SFREQ) + 2.0 * rng.standard_normal(n)
    data = np.vstack([eeg, veog[None, :]])
    return data, codes, onsets, resp_samples


def write_brainvision(folder: Path, data_uv, codes, onsets, resp_samples):
    names = [*EEG, "VEOG"]
    ints = np.clip(np.round(data_uv / RESOLUTION_UV), -32768, 32767).astype("<i2")
    (folder / f"{BASENAME}.eeg").write_bytes(ints.T.tobytes())
    hdr = [
        "Brain Vision Data Exchange Header File Version 1.0",
        "; Data created by the lab's acquisition PC (BrainAmp DC, 28 EEG + VEOG)",
        "",
        "[Common Infos]",
        "Codepage=UTF-8",
        f"DataFile={BASENAME}.eeg",
        f"MarkerFile={BASENAME}.vmrk",
        "DataFormat=BINARY",
        "; Data orientation: MULTIPLEXED=ch1,pt1, ch2,pt1 ...",
        "DataOrientation=MULTIPLEXED",
        f"NumberOfChannels={len(names)}",
        "; Sampling interval in microseconds",
        f"SamplingInterval={int(round(1e6 / SFREQ))}",
        "",
        "[Binary Infos]",
        "BinaryFormat=INT_16",
        "",
        "[Channel Infos]",
        "; Each entry: Ch<Channel number>=<Name>,<Reference channel name>,",
        "; <Resolution in \"Unit\">,<Unit>",
    ]
    for i, name in enumerate(names, start=1):
        ref = "" if name == "VEOG" else "FCz"
        hdr.append(f"Ch{i}={name},{ref},{RESOLUTION_UV},\u00b5V")
    hdr += ["", "[Comment]", "A m p l i f i e r  S e t u p", "Online reference: FCz (not recorded)",
            "VEOG: bipolar, above/below the left eye", ""]
    (folder / f"{BASENAME}.vhdr").write_text("\n".join(hdr), encoding="utf-8")

    marks = [(0, "New Segment", "", 1)]
    marks += [(int(s), "Stimulus", f"S{c:3d}", 1) for c, s in zip(codes, onsets, strict=False)]
    marks += [(int(s), "Response", "R  1", 1) for s in resp_samples]
    marks.sort(key=lambda m: (m[0], m[1]))
    vmrk = [
        "Brain Vision Data Exchange Marker File, Version 1.0",
        "",
        "[Common Infos]",
        "Codepage=UTF-8",
        f"DataFile={BASENAME}.eeg",
        "",
        "[Marker Infos]",
        "; Each entry: Mk<Marker number>=<Type>,<Description>,<Position in data points>,",
        "; <Size in data points>, <Channel number (0 = marker is related to all channels)>",
    ]
    for i, (sample, kind, desc, size) in enumerate(marks, start=1):
        vmrk.append(f"Mk{i}={kind},{desc},{sample + 1},{size},0")
    (folder / f"{BASENAME}.vmrk").write_text("\n".join(vmrk) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Reference: the pipeline of instruction.md with MNE on the written files.


def reference(folder: Path) -> dict:
    import mne

    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_brainvision(folder / f"{BASENAME}.vhdr", preload=True)
    raw.set_channel_types({"VEOG": "eog"})
    raw.set_montage("standard_1020")
    raw.filter(L_FREQ, H_FREQ)
    eeg = raw.get_data(picks="eeg")
    sd = np.median(np.abs(eeg - np.median(eeg, axis=1, keepdims=True)), axis=1)
    med = np.median(sd)
    eeg_names = [raw.ch_names[i] for i in mne.pick_types(raw.info, eeg=True)]
    bads = sorted(c for c, s in zip(eeg_names, sd, strict=False) if s > BAD_HIGH * med or s < BAD_LOW * med)
    raw.info["bads"] = bads
    raw.interpolate_bads(reset_bads=True)
    raw.set_eeg_reference("average", projection=False)

    events, mapping = mne.events_from_annotations(raw)
    inv = {v: k for k, v in mapping.items()}
    stim = [(s, inv[c]) for s, _, c in events if inv[c] in ("Stimulus/S  1", "Stimulus/S  2")]
    resp = np.array([s for s, _, c in events if inv[c] == "Response/R  1"])
    lag = int(round(LAG_S * raw.info["sfreq"]))
    rows, rts = [], []
    counts = {"standard": [0, 0], "target": [0, 0]}  # found, excluded
    for s, desc in stim:
        cond = "target" if desc.endswith("2") else "standard"
        counts[cond][0] += 1
        onset = s + lag
        later = resp[(resp >= onset + RESP_WIN[0] * SFREQ) & (resp <= onset + RESP_WIN[1] * SFREQ)]
        hit = len(later) > 0
        if (cond == "target") != hit:
            counts[cond][1] += 1
            continue
        if cond == "target":
            rts.append((later[0] - onset) / SFREQ * 1000)
        rows.append([onset, 0, 1 if cond == "standard" else 2])
    ev = np.array(rows, dtype=int)
    epochs = mne.Epochs(raw, ev, {"standard": 1, "target": 2}, tmin=TMIN, tmax=TMAX,
                        baseline=(None, 0), reject=REJECT, preload=True)
    standard, target = epochs["standard"].average(), epochs["target"].average()
    unrejected = mne.Epochs(raw, ev, {"standard": 1, "target": 2}, tmin=TMIN, tmax=TMAX,
                            baseline=(None, 0), preload=True)
    ptp = np.ptp(unrejected.get_data(), axis=2)
    types = unrejected.get_channel_types()
    margin_uv = min(
        float(np.min(np.abs(ptp[:, [i for i, t in enumerate(types) if t == kind]] - REJECT[kind]))) * 1e6
        for kind in REJECT
    )
    diff = mne.combine_evoked([target, standard], weights=[1, -1])
    evokeds = {"standard": standard, "target": target, "difference": diff}

    measures = []
    for comp, ch, (p0, p1), mode, (m0, m1) in MEASURES:
        for cond, ev_ in evokeds.items():
            wave = ev_.copy().pick([ch]).data[0]
            t = ev_.times
            inside = np.flatnonzero((t >= p0 - 1e-4) & (t <= p1 + 1e-4))
            k = inside[np.argmax(wave[inside]) if mode == "pos" else np.argmin(wave[inside])]
            lat, amp = t[k], wave[k]
            mean = wave[(t >= m0 - 1e-4) & (t <= m1 + 1e-4)].mean()
            measures.append({
                "condition": cond, "component": comp, "channel": ch,
                "peak_latency_ms": round(lat * 1000, 3), "peak_amplitude_uv": round(amp * 1e6, 4),
                "mean_amplitude_uv": round(mean * 1e6, 4),
            })

    n_kept = {c: len(epochs[c]) for c in ("standard", "target")}
    summary = {
        "bad_channels": bads,
        "trials_found": {c: counts[c][0] for c in counts},
        "excluded_behaviour": {c: counts[c][1] for c in counts},
        "rejected_artifact": {c: counts[c][0] - counts[c][1] - n_kept[c] for c in counts},
        "epochs_retained": n_kept,
        "hit_rate": round(1 - counts["target"][1] / counts["target"][0], 6),
        "mean_rt_ms": round(float(np.mean(rts)), 4),
    }
    # Margin of each decision the grader treats as exact: how close the nearest epoch came to a
    # rejection threshold, and channel SD ratios against the bad-channel limits.
    margins = {
        "mad_ratio": {c: round(float(s / med), 4) for c, s in zip(eeg_names, sd, strict=False)},
        "mad_median_uv": round(float(med) * 1e6, 4),
        "closest_peak_to_peak_to_a_threshold_uv": round(margin_uv, 4),
    }
    waves = {
        cond: {"times": [round(float(t), 4) for t in e.times],
               "channels": e.ch_names,
               "data_uv": [[round(float(v) * 1e6, 4) for v in row] for row in e.data]}
        for cond, e in evokeds.items()
    }
    return {"canary": CANARY, "summary": summary, "measures": measures, "margins": margins,
            "evoked": waves}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--search", action="store_true",
                        help="draw every rejected trial order instead of skipping REJECTED_ORDER_DRAWS")
    args = parser.parse_args()
    out = args.out
    rng = np.random.default_rng(SEED)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    data, codes, onsets, resp = simulate(rng, args.search)
    write_brainvision(inputs, data, codes, onsets, resp)
    (ref / "expected.json").write_text(json.dumps(reference(inputs), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
