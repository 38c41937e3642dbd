"""Builds the ffmpeg filtergraph of the mix from the cue sheet and the SFX spot list.

usage: graph.py INPUTS_DIR  -> prints "<input files>\n<filtergraph>" on stdout
"""

import csv
import sys
import wave
from pathlib import Path

SR, FPS = 48000, 25
SPF = SR // FPS
ORIGIN_H = 10


def frames(tc: str) -> int:
    h, m, s, f = (int(v) for v in tc.split(":"))
    return ((h - ORIGIN_H) * 3600 + m * 60 + s) * FPS + f


def main() -> None:
    root = Path(sys.argv[1])
    cues: dict[str, list[tuple[int, int, float]]] = {}
    with open(root / "cue_sheet.csv", newline="") as f:
        for row in csv.DictReader(f):
            cues.setdefault(row["track"], []).append((frames(row["tc_in"]), frames(row["tc_out"]), float(row["gain_db"])))
    with open(root / "sfx_spots.csv", newline="") as f:
        spots = list(csv.DictReader(f))
    total = max(b for segs in cues.values() for _, b, _ in segs)
    n = total * SPF

    files, chains, labels = [], [], []
    for i, track in enumerate(sorted(cues)):
        files.append(str(root / "stems" / f"{track}.wav"))
        expr = "0"
        for a, b, g in sorted(cues[track], reverse=True):
            expr = f"if(between(n,{a},{b - 1}),{10 ** (g / 20):.9f},{expr})"
        # 1920-sample frames: the volume expression's frame number n is the TV frame index.
        with wave.open(files[-1]) as w:
            # A mono stem goes to both channels at unity: an implicit upmix would apply -3 dB.
            up = "pan=stereo|c0=c0|c1=c0," if w.getnchannels() == 1 else ""
        chains.append(f"[{i}:a]{up}aformat=sample_fmts=dbl:channel_layouts=stereo,asetnsamples=n={SPF}:p=0,"
                      f"volume=volume='{expr}':eval=frame:precision=double,apad=whole_len={n},atrim=end_sample={n}[t{i}]")
        labels.append(f"[t{i}]")
    for j, s in enumerate(spots, start=len(files)):
        files.append(str(root / s["file"]))
        delay = frames(s["tc_in"]) * SPF
        chains.append(f"[{j}:a]aformat=sample_fmts=dbl:channel_layouts=stereo,volume={float(s['gain_db']):+.2f}dB:precision=double,"
                      f"adelay=delays={delay}S:all=1,apad=whole_len={n},atrim=end_sample={n}[t{j}]")
        labels.append(f"[t{j}]")
    chains.append(f"{''.join(labels)}amix=inputs={len(labels)}:normalize=0:duration=longest,atrim=end_sample={n}[mix]")
    print(" ".join(files))
    print(";".join(chains))


if __name__ == "__main__":
    main()
