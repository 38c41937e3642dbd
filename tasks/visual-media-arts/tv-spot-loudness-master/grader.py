"""Grader for tv-spot-loudness-master.

The grader rebuilds the ideal mix from the stems and the resolved cue timeline, re-measures
every deliverable with ffmpeg's ebur128 filter (BS.1770-4 / EBU R128, true peak by 4x
oversampling), and recovers the gain each stem received in each cue interval by least squares
on the known stems.

Tolerances:
- integrated loudness +-0.5 LU: the EBU R128 / Tech 3341 delivery tolerance the instruction states;
- true peak: <= -1.0 dBTP as ebur128 reports it (0.1 dB resolution), no slack;
- the gate on the mix: per-stem gains +-2 dB, so that loudness, format and metadata count only
  for a master that follows the cue sheet;
- per-stem gains +-0.5 dB on the broadcast master (a linear master recovers them to 0.01 dB;
  0.5 dB allows short ramps and 24-bit quantisation) and +-1.0 dB on the web master, whose
  true-peak limiter legitimately bends transients;
- spot positions +-2 samples (the cue points are whole TV frames, so any correct method is exact);
- QC figures: integrated +-0.2 LU and true peak +-0.3 dB (meters differ by a few hundredths,
  ebur128 prints one decimal); LRA +-1.0 LU (Tech 3342 implementations differ by up to ~1 LU).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import numpy as np

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, get, load_json, near, within

TIMEOUT = 120
CRUX_DB = 2.0
SILENT_DB = -900.0  # fitted_gains marks a non-positive gain as -999 dB


def _run(cmd: list[str]) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None


def probe(path: Path) -> dict | None:
    """Sample rate, channels, codec and sample count of the first audio stream, or None."""
    if not path.is_file():
        return None
    proc = _run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-count_packets",
                 "-show_entries", "stream=sample_rate,channels,codec_name,bits_per_sample,duration_ts",
                 "-of", "json", str(path)])
    if proc is None or proc.returncode != 0:
        return None
    try:
        streams = json.loads(proc.stdout).get("streams") or []
        s = streams[0]
        return {
            "sample_rate": int(s["sample_rate"]),
            "channels": int(s["channels"]),
            "codec": s.get("codec_name"),
            "samples": int(s["duration_ts"]) if "duration_ts" in s else None,
        }
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def decode(path: Path, rate: int | None = None) -> np.ndarray | None:
    """The file as float64 stereo samples (optionally resampled by ffmpeg), or None."""
    cmd = ["ffmpeg", "-v", "error", "-i", str(path), "-ac", "2"]
    if rate:
        cmd += ["-af", f"aresample={rate}"]
    proc = _run(cmd + ["-f", "f64le", "-"])
    if proc is None or proc.returncode != 0 or not proc.stdout:
        return None
    x = np.frombuffer(proc.stdout, dtype="<f8")
    return x[: len(x) // 2 * 2].reshape(-1, 2).copy()


def measure(path: Path, raw_rate: int | None = None) -> dict | None:
    """ebur128 summary (I, LRA, true peak) of a file, or of raw f64le stereo at raw_rate."""
    src = ["-f", "f64le", "-ar", str(raw_rate), "-ac", "2", "-i", str(path)] if raw_rate else ["-i", str(path)]
    proc = _run(["ffmpeg", "-nostats", "-hide_banner", *src, "-filter_complex",
                 "ebur128=peak=true:framelog=verbose", "-f", "null", "-"])
    if proc is None or proc.returncode != 0:
        return None
    text = proc.stderr.decode(errors="replace")
    summary = text[text.rfind("Summary:"):]
    found = {}
    for key, pat in (("integrated_lufs", r"I:\s+(-?[\d.]+|-inf)\s+LUFS"),
                     ("lra_lu", r"LRA:\s+(-?[\d.]+)\s+LU"),
                     ("true_peak_dbtp", r"Peak:\s+(-?[\d.]+|-inf)\s+dBFS")):
        m = re.search(pat, summary)
        if not m:
            return None
        found[key] = float(m.group(1))
    return found


def read_wav24(path: Path) -> np.ndarray:
    """A trusted input stem (plain 24-bit PCM WAV) as float64 (samples, channels)."""
    import wave

    with wave.open(str(path), "rb") as w:
        ch, n = w.getnchannels(), w.getnframes()
        raw = np.frombuffer(w.readframes(n), dtype=np.uint8).reshape(-1, 3)
    ints = (raw[:, 0].astype(np.int32) | (raw[:, 1].astype(np.int32) << 8) | (raw[:, 2].astype(np.int32) << 16))
    ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
    return (ints / 8388607.0).reshape(-1, ch)


def components(ctx: GradeContext, tl: dict) -> dict[str, dict]:
    """Each mix element as stereo signal at unity gain, with its per-sample cue gain (linear)."""
    n = tl["samples"]
    comps: dict[str, dict] = {}
    for track in ("dialogue", "music", "ambience"):
        x = read_wav24(ctx.inputs / "stems" / f"{track}.wav")[:n]
        x = np.repeat(x, 2, axis=1) if x.shape[1] == 1 else x
        g = np.zeros(n)
        for c in tl["cues"]:
            if c["track"] == track:
                g[c["start"]:c["end"]] = 10 ** (c["gain_db"] / 20)
        comps[track] = {"signal": x, "gain": g}
    for s in tl["spots"]:
        clip = read_wav24(ctx.inputs / s["file"])
        clip = np.repeat(clip, 2, axis=1) if clip.shape[1] == 1 else clip
        x = np.zeros((n, 2))
        end = min(n, s["start"] + len(clip))
        x[s["start"]:end] = clip[: end - s["start"]]
        g = np.zeros(n)
        g[s["start"]:end] = 10 ** (s["gain_db"] / 20)
        comps[s["spot"]] = {"signal": x, "gain": g, "start": s["start"], "clip": clip}
    return comps


def reference_mix(comps: dict[str, dict]) -> np.ndarray:
    return sum(c["signal"] * c["gain"][:, None] for c in comps.values())


def intervals(tl: dict, comps: dict[str, dict]) -> list[tuple[int, int]]:
    """Stretches where no cue changes, shrunk by a guard: 10 ms before each change and one TV
    frame plus 10 ms after it (the instruction allows a transition of up to one frame)."""
    n, spf = tl["samples"], tl["frame_samples"]
    edges = {0, n}
    for c in tl["cues"]:
        edges.update((c["start"], c["end"]))
    for _name, c in comps.items():
        if "start" in c:
            edges.update((c["start"], min(n, c["start"] + len(c["clip"]))))
    edges = sorted(edges)
    out = []
    for a, b in zip(edges, edges[1:], strict=False):
        lo, hi = a + (spf + 480 if a else 0), b - (480 if b < n else 0)
        if hi - lo >= SR_MIN_INTERVAL:
            out.append((lo, hi))
    return out


SR_MIN_INTERVAL = 4800  # 0.1 s: shorter stretches give unstable fits


def fitted_gains(master: np.ndarray, tl: dict, comps: dict[str, dict]) -> list[dict]:
    """Per interval and element: the gain the master applied, by least squares on both channels."""
    rows = []
    for lo, hi in intervals(tl, comps):
        active = [k for k, c in comps.items()
                  if c["gain"][lo:hi].min() > 0 and np.sqrt(np.mean(c["signal"][lo:hi] ** 2)) > 1e-4]
        if not active:
            continue
        a = np.stack([np.concatenate([comps[k]["signal"][lo:hi, 0], comps[k]["signal"][lo:hi, 1]]) for k in active], axis=1)
        y = np.concatenate([master[lo:hi, 0], master[lo:hi, 1]])
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        for k, g in zip(active, coef, strict=True):
            cue = comps[k]["gain"][lo]
            rows.append({"element": k, "from": lo, "to": hi,
                         "ratio_db": 20 * math.log10(g / cue) if g > 0 else -999.0})
    return rows


def gains_follow_cues(master: np.ndarray | None, tl: dict, comps: dict, tol_db: float) -> tuple[Outcome, float | None]:
    """All per-interval element gains equal the cue gains up to one common make-up gain."""
    if master is None or len(master) < tl["samples"] - 2:
        return Outcome(False, "master could not be decoded to the programme length"), None
    rows = fitted_gains(master[: tl["samples"]], tl, comps)
    if not rows:
        return Outcome(False, "no stretch between cues to fit"), None
    common = float(np.median([r["ratio_db"] for r in rows]))
    if common <= SILENT_DB:
        return Outcome(False, "the master does not contain the mix (no element recovered with a positive gain)",
                       expected="the cued mix times one gain", seen=f"median gain {common:.0f} dB"), None
    bad = [r for r in rows if abs(r["ratio_db"] - common) > tol_db]
    shown = [{"element": r["element"], "seconds": round(r["from"] / tl["sample_rate"], 2),
              "off_db": round(r["ratio_db"] - common, 2)} for r in bad[:6]]
    msg = f"{len(rows) - len(bad)} of {len(rows)} element-interval gains within {tol_db} dB of the cue sheet"
    return Outcome(not bad, msg, expected=f"all within {tol_db} dB of cue + common gain", seen=shown or "all within"), common


def spots_aligned(master: np.ndarray | None, comps: dict, tl: dict) -> Outcome:
    """Each spot effect's lag in the master by cross-correlation within +-0.5 s of its cue point."""
    if master is None:
        return Outcome(False, "master could not be decoded")
    mono = master.sum(axis=1)
    lags = {}
    for name, c in sorted(comps.items()):
        if "start" not in c:
            continue
        clip = c["clip"].sum(axis=1)[: tl["sample_rate"] // 2]
        search = tl["sample_rate"] // 2
        lo = max(0, c["start"] - search)
        hi = min(len(mono), c["start"] + search + len(clip))
        seg = mono[lo:hi]
        if len(seg) < len(clip):
            lags[name] = None
            continue
        nfft = 1 << int(math.ceil(math.log2(len(seg) + len(clip))))
        xc = np.fft.irfft(np.fft.rfft(seg, nfft) * np.conj(np.fft.rfft(clip, nfft)), nfft)[: len(seg) - len(clip) + 1]
        lags[name] = int(lo + int(np.argmax(xc)) - c["start"])
    bad = {k: v for k, v in lags.items() if v is None or abs(v) > 2}
    return Outcome(not bad, "all spots within 2 samples" if not bad else f"misplaced spots (lag in samples): {bad}",
                   expected={k: 0 for k in lags}, seen=lags)


def lag_against(master: np.ndarray | None, mix: np.ndarray) -> Outcome:
    """Lag of a master against the ideal mix, over the first 4 s (in samples at 48 kHz)."""
    if master is None or len(master) < 4 * 48000:
        return Outcome(False, "master could not be decoded")
    a, b = master[: 4 * 48000].sum(axis=1), mix[: 4 * 48000].sum(axis=1)
    nfft = 1 << 19
    xc = np.fft.irfft(np.fft.rfft(a, nfft) * np.conj(np.fft.rfft(b, nfft)), nfft)
    lag = int(np.argmax(xc))
    lag = lag - nfft if lag > nfft // 2 else lag
    return Outcome(abs(lag) <= 2, f"lag {lag} samples at 48 kHz", expected=0, seen=lag)


def read_bext(path: Path) -> dict | None:
    """The bext chunk of a RIFF/WAVE file as a dict, or None."""
    try:
        data = path.read_bytes()[: 1 << 16]
    except OSError:
        return None
    if data[:4] not in (b"RIFF", b"RF64") or data[8:12] != b"WAVE":
        return None
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        body = data[pos + 8:pos + 8 + size]
        if cid == b"bext" and len(body) >= 346:
            def s(a: int, b: int) -> str:
                return body[a:b].split(b"\0", 1)[0].decode("ascii", errors="replace").strip()
            return {
                "description": s(0, 256), "originator": s(256, 288), "originator_reference": s(288, 320),
                "origination_date": s(320, 330), "origination_time": s(330, 338),
                "time_reference": int.from_bytes(body[338:346], "little"),
            }
        if cid == b"data":
            return None
        pos += 8 + size + (size & 1)
    return None


def format_ok(info: dict | None, rate: int, codec: str, samples: int) -> Outcome:
    want = {"sample_rate": rate, "channels": 2, "codec": codec, "samples": samples}
    seen = {k: (info or {}).get(k) for k in want}
    return Outcome(info is not None and seen == want, "format as specified" if seen == want else "format differs",
                   expected=want, seen=seen)


def qc_matches(qc: dict | None, section: str, meas: dict | None) -> list[tuple[str, Outcome]]:
    if meas is None:
        return [(section, Outcome(False, f"{section}: no measurement to compare with"))]
    return [
        (f"{section}.integrated_lufs", near(get(qc, f"{section}.integrated_lufs"), meas["integrated_lufs"], abs=0.2)),
        (f"{section}.true_peak_dbtp", near(get(qc, f"{section}.true_peak_dbtp"), meas["true_peak_dbtp"], abs=0.3)),
        (f"{section}.lra_lu", near(get(qc, f"{section}.lra_lu"), meas["lra_lu"], abs=1.0)),
    ]


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    tl = ctx.reference_json("timeline.json")
    tgt = tl["targets"]
    comps = components(ctx, tl)
    mix = reference_mix(comps)
    mix_path = ctx.scratch / "ideal_mix.f64"
    mix.astype("<f8").tofile(mix_path)
    mix_meas = measure(mix_path, raw_rate=tl["sample_rate"])

    qc, parsed = load_json(ctx.out("qc.json"))
    r.gate("qc.json parses as a JSON object", parsed)

    bpath, wpath = ctx.out("master_r128.wav"), ctx.out("master_web.wav")
    binfo, winfo = probe(bpath), probe(wpath)
    bmeas = measure(bpath) if binfo else None
    wmeas = measure(wpath) if winfo else None
    bsig = decode(bpath) if binfo and binfo["sample_rate"] == tl["sample_rate"] else None
    wsig = decode(wpath, rate=tl["sample_rate"]) if winfo else None

    r.check("broadcast master is 48 kHz / 24-bit PCM stereo, programme length to the sample", 1,
            format_ok(binfo, tl["sample_rate"], "pcm_s24le", tl["samples"]))
    r.check("broadcast master integrated loudness -23 LUFS +-0.5 LU", 2,
            near(get(bmeas, "integrated_lufs"), tgt["r128_lufs"], abs=0.5))
    r.check("broadcast master true peak <= -1.0 dBTP", 2,
            within(get(bmeas, "true_peak_dbtp"), -200.0, tgt["max_true_peak_dbtp"]))
    # The crux is the mix: a master that ignores the cue sheet earns nothing for its loudness,
    # format or metadata. 2 dB is four times the check's tolerance below and far under the
    # 3-14 dB by which the cues move each element.
    mixed, _ = gains_follow_cues(bsig, tl, comps, CRUX_DB)
    r.gate("broadcast master is the cued mix (every stem and spot gain within 2 dB of the cue sheet)", mixed)
    follows, common_db = gains_follow_cues(bsig, tl, comps, 0.5)
    r.check("broadcast mix follows the cue sheet (every stem and spot gain within 0.5 dB)", 3, follows)
    r.check("spot effects placed at their cue timecodes (+-2 samples)", 2, spots_aligned(bsig, comps, tl))

    bext = read_bext(bpath) if binfo else None
    want = tl["bext"]
    seen = {k: (bext or {}).get(k) for k in want}
    r.check("broadcast master carries the bext chunk with the delivery metadata and timecode", 2,
            Outcome(seen == want, "bext as specified" if seen == want else "bext missing or differs",
                    expected=want, seen=seen))

    r.check("web master is 44.1 kHz / 16-bit PCM stereo, programme length to the sample", 1,
            format_ok(winfo, tl["web_sample_rate"], "pcm_s16le", tl["web_samples"]))
    r.check("web master integrated loudness -16 LUFS +-0.5 LU", 2,
            near(get(wmeas, "integrated_lufs"), tgt["web_lufs"], abs=0.5))
    r.check("web master true peak <= -1.0 dBTP", 2,
            within(get(wmeas, "true_peak_dbtp"), -200.0, tgt["max_true_peak_dbtp"]))
    web_follows, _ = gains_follow_cues(wsig, tl, comps, 1.0)
    lag = lag_against(wsig, mix)
    r.check("web master is the same mix, time-aligned (gains within 1 dB, lag <= 2 samples)", 2,
            all_of([("gains", web_follows), ("lag", lag)]))

    r.check("qc.json figures agree with a re-measurement (mix and both masters)", 2,
            all_of([*qc_matches(qc, "mix", mix_meas), *qc_matches(qc, "master_r128", bmeas),
                    *qc_matches(qc, "master_web", wmeas)]))
    if common_db is None:
        gain_ok = Outcome(False, "no broadcast master gain could be recovered")
    else:
        gain_ok = near(get(qc, "master_r128.gain_db"), round(common_db, 2), abs=0.3)
    r.check("qc.json broadcast gain equals the gain actually applied (+-0.3 dB)", 1, gain_ok)
    return r
