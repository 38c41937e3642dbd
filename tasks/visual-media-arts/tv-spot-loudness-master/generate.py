"""Seeded generator of a 20-second TV spot: voice-over, music and ambience stems, four spot
effects, the fader cue sheet and the SFX spot list (inputs/), and the resolved timeline the
grader rebuilds the mix from (reference/).

    python3 generate.py --out DIR      # writes DIR/inputs and DIR/reference
"""

from __future__ import annotations

import argparse
import json
import wave
from pathlib import Path

import numpy as np

SEED = 20240917
SR = 48000
FPS = 25
SPF = SR // FPS  # samples per TV frame
FRAMES = 500  # 20 s
N = FRAMES * SPF
TC_START_H = 10  # programme starts at 10:00:00:00
CANARY = "09e4e5b9-9c1f-4d62-a273-b4bb0ea0d975"

# Fader automation, frames from programme start: (track, first frame, end frame, gain dB).
CUES = [
    ("dialogue", 0, 168, 0.0),
    ("dialogue", 168, 327, -1.5),
    ("dialogue", 327, 500, 1.0),
    ("music", 0, 17, 0.0),
    ("music", 17, 141, -14.0),
    ("music", 141, 164, -5.0),
    ("music", 164, 303, -14.0),
    ("music", 303, 326, -6.0),
    ("music", 326, 446, -14.0),
    ("music", 446, 500, -3.0),
    ("ambience", 0, 252, -6.0),
    ("ambience", 252, 500, -11.0),
]
# Spot effects: (spot id, file, first frame, gain dB).
SPOTS = [
    ("FX01", "whoosh.wav", 5, -3.0),
    ("FX02", "door_slam.wav", 152, 3.0),
    ("FX03", "impact.wav", 313, -2.0),
    ("FX04", "chime.wav", 470, -4.0),
]
# Voice-over lines, frames: (first, end).
VO_LINES = [(19, 131), (171, 298), (334, 441)]

VOWELS = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410)]

BEXT = {
    "description": "SUNFIELD ORANGE - SUMMER 20s TVC - BROADCAST MIX",
    "originator": "Northlight Post",
    "originator_reference": "NLP-SFO-TVC20-0042",
    "origination_date": "2024-09-17",
    "origination_time": "14:30:00",
    "time_reference": TC_START_H * 3600 * SR,
}


def timecode(frame: int) -> str:
    s, f = divmod(frame, FPS)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h + TC_START_H:02d}:{m:02d}:{s:02d}:{f:02d}"


def shaped_noise(rng: np.random.Generator, n: int, lo: float, hi: float, tilt: float = 0.0) -> np.ndarray:
    """White noise band-limited to [lo, hi] Hz with a spectral tilt of f**tilt, unit RMS."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1.0 / SR)
    gain = np.where((f >= lo) & (f <= hi), 1.0, 0.0)
    gain[1:] *= f[1:] ** tilt
    gain[0] = 0.0
    x = np.fft.irfft(spec * gain, n)
    return x / np.sqrt(np.mean(x**2))


def envelope(n: int, attack: int, release: int) -> np.ndarray:
    e = np.ones(n)
    a = min(attack, n // 2)
    r = min(release, n - a)
    if a:
        e[:a] = 0.5 - 0.5 * np.cos(np.pi * np.arange(a) / a)
    if r:
        e[n - r:] = 0.5 + 0.5 * np.cos(np.pi * np.arange(r) / r)
    return e


def syllable(rng: np.random.Generator, n: int, f0a: float, f0b: float) -> np.ndarray:
    f0 = np.linspace(f0a, f0b, n)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    formants = VOWELS[int(rng.integers(len(VOWELS)))]
    fmean = 0.5 * (f0a + f0b)
    out = np.zeros(n)
    k = 1
    while k * fmean < 5000:
        fk = k * fmean
        amp = 0.08 / k + sum(g * np.exp(-0.5 * ((fk - fr) / 90.0) ** 2) for fr, g in zip(formants, (1.0, 0.6, 0.25), strict=True))
        out += amp * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
        k += 1
    out *= envelope(n, int(0.02 * SR), int(0.05 * SR))
    if rng.random() < 0.35:
        m = int(rng.uniform(0.03, 0.07) * SR)
        burst = shaped_noise(rng, m, 2500, 9000) * 0.25 * envelope(m, 40, m // 2)
        out = np.concatenate([burst, out])[:n]
    return out


def voice_over(rng: np.random.Generator) -> np.ndarray:
    x = np.zeros(N)
    for first, end in VO_LINES:
        t = first * SPF + int(rng.integers(0, SPF // 2))
        stop = end * SPF - SPF // 2
        f0 = rng.uniform(105, 125)
        while True:
            n = int(rng.uniform(0.11, 0.27) * SR)
            if t + n > stop:
                break
            drift = rng.uniform(-18, 18)
            x[t:t + n] += syllable(rng, n, f0 + drift, f0 + drift + rng.uniform(-25, 10))
            t += n + int((rng.uniform(0.12, 0.2) if rng.random() < 0.2 else rng.uniform(0.015, 0.05)) * SR)
    return 0.5 * x / np.max(np.abs(x))


def tone(freq: float, n: int, harmonics: int, detune_cents: float = 0.0) -> np.ndarray:
    f = freq * 2 ** (detune_cents / 1200)
    t = np.arange(n) / SR
    return sum(np.sin(2 * np.pi * f * h * t) / h**1.3 for h in range(1, harmonics + 1))


def music(rng: np.random.Generator) -> np.ndarray:
    beat = int(0.6 * SR)  # 100 BPM
    chords = [(261.63, 329.63, 392.0), (220.0, 261.63, 329.63), (174.61, 220.0, 261.63), (196.0, 246.94, 293.66)]
    roots = [65.41, 55.0, 87.31, 98.0]
    out = np.zeros((N, 2))
    bar = 4 * beat
    for i, start in enumerate(range(0, N, bar)):
        n = min(bar, N - start)
        chord, root = chords[i % 4], roots[i % 4]
        env = envelope(n, int(0.25 * SR), int(0.3 * SR))
        for ch, det in ((0, -4.0), (1, 4.0)):
            pad = sum(tone(f, n, 6, det) for f in chord)
            out[start:start + n, ch] += 0.09 * pad * env
        for b in range(4):
            s = start + b * beat
            if s >= N:
                break
            m = min(beat, N - s)
            t = np.arange(m) / SR
            bass = (np.sin(2 * np.pi * root * t) + 0.3 * np.sin(4 * np.pi * root * t)) * np.exp(-t / 0.35)
            out[s:s + m] += 0.32 * bass[:, None]
            if b in (0, 2):
                kf = 45 + 75 * np.exp(-t / 0.03)
                kick = np.sin(2 * np.pi * np.cumsum(kf) / SR) * np.exp(-t / 0.12)
                out[s:s + m] += 0.45 * kick[:, None]
            for half in (0, beat // 2):
                h0 = s + half
                hn = min(int(0.06 * SR), N - h0)
                if hn <= 0:
                    continue
                hat = shaped_noise(rng, hn, 7000, 16000) * np.exp(-np.arange(hn) / (0.012 * SR))
                pan = rng.uniform(0.35, 0.65)
                out[h0:h0 + hn, 0] += 0.05 * hat * (1 - pan)
                out[h0:h0 + hn, 1] += 0.05 * hat * pan
    return 0.7 * out / np.max(np.abs(out))


def ambience(rng: np.random.Generator) -> np.ndarray:
    left = shaped_noise(rng, N, 40, 6000, -0.5)
    right = shaped_noise(rng, N, 40, 6000, -0.5)
    common = shaped_noise(rng, N, 40, 6000, -0.5)
    x = np.stack([0.6 * left + 0.8 * common, 0.6 * right + 0.8 * common], axis=1)
    return 0.05 * x


def sfx(rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    n = int(1.0 * SR)
    t = np.arange(n) / SR
    w = shaped_noise(rng, n, 200, 9000, -0.3) * np.sin(np.pi * t / t[-1]) ** 2
    pan = t / t[-1]
    out["whoosh.wav"] = 0.35 * np.stack([w * np.cos(pan * np.pi / 2), w * np.sin(pan * np.pi / 2)], axis=1)

    n = int(0.7 * SR)
    t = np.arange(n) / SR
    thump = np.sin(2 * np.pi * 58 * t) * np.exp(-t / 0.07)
    crack = shaped_noise(rng, n, 300, 20000) * np.exp(-t / 0.012)
    rattle = shaped_noise(rng, n, 1500, 6000) * np.exp(-t / 0.15) * 0.15
    door = 0.8 * thump + 0.55 * crack + rattle
    out["door_slam.wav"] = 0.95 * np.stack([door, 0.92 * np.roll(door, 12)], axis=1) / np.max(np.abs(door))

    n = int(0.5 * SR)
    t = np.arange(n) / SR
    hit = np.sin(2 * np.pi * 90 * t) * np.exp(-t / 0.05) + 0.4 * shaped_noise(rng, n, 500, 15000) * np.exp(-t / 0.02)
    out["impact.wav"] = 0.7 * np.stack([0.9 * hit, hit], axis=1) / np.max(np.abs(hit))

    n = int(2.0 * SR)
    t = np.arange(n) / SR
    bell = sum(a * np.sin(2 * np.pi * 880 * r * t) * np.exp(-t / d) for r, a, d in ((1.0, 1.0, 0.9), (2.76, 0.5, 0.5), (5.4, 0.3, 0.25), (8.93, 0.15, 0.12)))
    bell *= envelope(n, 48, 4800)
    out["chime.wav"] = 0.5 * np.stack([bell, 0.85 * bell], axis=1) / np.max(np.abs(bell))
    return out


def write_wav24(path: Path, x: np.ndarray) -> None:
    x = x if x.ndim == 2 else x[:, None]
    ints = np.clip(np.round(x * 8388607.0), -8388608, 8388607).astype("<i4")
    raw = ints.reshape(-1).view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(x.shape[1])
        w.setsampwidth(3)
        w.setframerate(SR)
        w.writeframes(raw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    out = ap.parse_args().out
    inputs, reference = out / "inputs", out / "reference"
    rng = np.random.default_rng(SEED)

    write_wav24(inputs / "stems" / "dialogue.wav", voice_over(rng))
    write_wav24(inputs / "stems" / "music.wav", music(rng))
    write_wav24(inputs / "stems" / "ambience.wav", ambience(rng))
    effects = sfx(rng)
    for name in sorted(effects):
        write_wav24(inputs / "sfx" / name, effects[name])

    lines = ["track,tc_in,tc_out,gain_db"]
    lines += [f"{tr},{timecode(a)},{timecode(b)},{g:+.1f}" for tr, a, b, g in CUES]
    (inputs / "cue_sheet.csv").write_text("\n".join(lines) + "\n")
    lines = ["spot,file,tc_in,gain_db"]
    lines += [f"{sid},sfx/{f},{timecode(a)},{g:+.1f}" for sid, f, a, g in SPOTS]
    (inputs / "sfx_spots.csv").write_text("\n".join(lines) + "\n")

    ref = {
        "canary": CANARY,
        "sample_rate": SR,
        "samples": N,
        "web_sample_rate": 44100,
        "web_samples": N * 44100 // SR,
        "frame_samples": SPF,
        "cues": [{"track": tr, "start": a * SPF, "end": b * SPF, "gain_db": g} for tr, a, b, g in CUES],
        "spots": [{"spot": s, "file": "sfx/" + f, "start": a * SPF, "gain_db": g} for s, f, a, g in SPOTS],
        "targets": {"r128_lufs": -23.0, "web_lufs": -16.0, "max_true_peak_dbtp": -1.0},
        "bext": BEXT,
    }
    reference.mkdir(parents=True, exist_ok=True)
    (reference / "timeline.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
