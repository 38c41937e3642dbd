"""Oracle analysis with ObsPy: QC, clock correction, response removal and rotation, STA/LTA +
AIC picks, TauP (iasp91) grid-search location, Wood-Anderson ML, QuakeML.

usage: analyse.py INPUTS_DIR OUTPUT_DIR
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

import numpy as np
from obspy import Stream, UTCDateTime, read, read_inventory
from obspy.core.event import (
    Amplitude,
    Arrival,
    Catalog,
    CreationInfo,
    Event,
    Magnitude,
    Origin,
    OriginQuality,
    Pick,
    StationMagnitude,
    StationMagnitudeContribution,
    WaveformStreamID,
)
from obspy.geodetics import gps2dist_azimuth, locations2degrees
from obspy.signal.trigger import recursive_sta_lta, trigger_onset
from obspy.taup import TauPyModel
from obspy.taup.seismic_phase import SeismicPhase

FULL_SCALE = 8388607
VP_TOP, VS_TOP = 5.8, 3.36
KM_PER_DEG = 111.195
WA = {"poles": [-6.283 + 4.712j, -6.283 - 4.712j], "zeros": [0j, 0j], "gain": 1.0, "sensitivity": 2080.0}


def clock_offsets(log: str, when: UTCDateTime) -> dict[str, float]:
    """Linear interpolation of 'station time minus true time' checks found in the log."""
    checks: dict[str, set[tuple[float, float]]] = {}
    text = re.sub(r"\s+", " ", log)
    for sta, off, t in re.findall(r"(\w{4}): [^.]*?station time minus true time = ([+-][\d.]+) s at (\S+) UTC", text):
        checks.setdefault(sta, set()).add((UTCDateTime(t).timestamp, float(off)))
    out = {}
    for sta, pts in checks.items():
        (t1, o1), (t2, o2) = sorted(pts)[0], sorted(pts)[-1]
        out[sta] = o1 + (o2 - o1) * (when.timestamp - t1) / (t2 - t1)
    return out


def aic_onset(x: np.ndarray) -> int:
    """Index minimising the Maeda AIC of a window."""
    n = len(x)
    k = np.arange(1, n - 1)
    c1 = np.cumsum(x**2)
    v1 = c1[k - 1] / k
    v2 = (c1[-1] - c1[k - 1]) / (n - k)
    aic = k * np.log(np.maximum(v1, 1e-30)) + (n - k - 1) * np.log(np.maximum(v2, 1e-30))
    return int(k[np.argmin(aic)])


class TravelTimes:
    """First-arrival p and s times from TauP phase curves, tabulated per source depth."""

    def __init__(self, depths: np.ndarray):
        model = TauPyModel("iasp91").model
        self.depths = depths
        self.curves = {}
        for ph in ("P", "S"):
            rows = []
            for z in depths:
                tm = model.depth_correct(float(z))
                dist_grid = np.linspace(0, 2.0, 801)
                best = np.full(len(dist_grid), np.inf)
                for name in (ph.lower(), ph):
                    phase = SeismicPhase(name, tm)
                    d = np.degrees(phase.dist)
                    if len(d) < 2:
                        continue
                    o = np.argsort(d)
                    ok = (dist_grid >= d[o][0]) & (dist_grid <= d[o][-1])
                    best[ok] = np.minimum(best[ok], np.interp(dist_grid[ok], d[o], phase.time[o]))
                rows.append(best)
            self.curves[ph] = (np.linspace(0, 2.0, 801), np.array(rows))

    def __call__(self, phase: str, z: float, deg: np.ndarray) -> np.ndarray:
        grid, table = self.curves[phase]
        i = int(np.clip(np.searchsorted(self.depths, z) - 1, 0, len(self.depths) - 2))
        w = (z - self.depths[i]) / (self.depths[i + 1] - self.depths[i])
        return (1 - w) * np.interp(deg, grid, table[i]) + w * np.interp(deg, grid, table[i + 1])


def locate(obs: list[dict], tt: TravelTimes) -> dict:
    """Grid search (L2, origin time eliminated) over lat, lon, depth; then a finer grid."""
    lat0 = np.mean([o["lat"] for o in obs])
    lon0 = np.mean([o["lon"] for o in obs])
    best = None
    for span, step, zs in ((0.8, 0.01, np.arange(0.5, 30.0, 1.0)), (0.03, 0.001, None)):
        if best is not None:
            lat0, lon0 = best["lat"], best["lon"]
            zs = np.arange(max(0.2, best["depth"] - 2.0), best["depth"] + 2.0, 0.1)
        lats = np.arange(lat0 - span, lat0 + span + 1e-9, step)
        lons = np.arange(lon0 - span, lon0 + span + 1e-9, step)
        glat, glon = np.meshgrid(lats, lons, indexing="ij")
        degs = [locations2degrees(glat, glon, o["lat"], o["lon"]) for o in obs]
        for z in zs:
            pred = np.stack([tt(o["phase"], z, d) + o["elev_km"] / (VP_TOP if o["phase"] == "P" else VS_TOP)
                             for o, d in zip(obs, degs, strict=True)])
            t_obs = np.array([o["t"] for o in obs])[:, None, None]
            w = np.array([o["w"] for o in obs])[:, None, None]
            t0 = np.sum(w * (t_obs - pred), axis=0) / np.sum(w)
            res = t_obs - pred - t0
            misfit = np.sum(w * res**2, axis=0)
            k = np.unravel_index(np.argmin(misfit), misfit.shape)
            if best is None or misfit[k] < best["misfit"]:
                best = {"misfit": float(misfit[k]), "lat": float(glat[k]), "lon": float(glon[k]), "depth": float(z),
                        "t0": float(t0[k]), "res": res[:, k[0], k[1]].tolist()}
    return best


def main() -> None:
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    inv = read_inventory(str(root / "stations.xml"))
    raw = Stream()
    for f in sorted((root / "waveforms").glob("*.mseed")):
        raw += read(str(f))
    t_ref = min(tr.stats.starttime for tr in raw) + 20
    offsets = clock_offsets((root / "station_log.txt").read_text(), t_ref)
    for tr in raw:
        tr.stats.starttime -= offsets.get(tr.stats.station, 0.0)

    stations = sorted({tr.stats.station for tr in raw})
    info = {}
    for sta in stations:
        st = raw.select(station=sta)
        dead = sorted(tr.stats.channel for tr in st if np.std(tr.data.astype(float)) < 5.0)
        clipped = any(np.max(np.abs(tr.data)) >= 0.999 * FULL_SCALE for tr in st)
        coords = inv.get_coordinates(st[0].id, st[0].stats.starttime)
        vel = st.copy()
        vel.detrend("demean")
        vel.taper(0.05)
        vel.remove_response(inventory=inv, output="VEL", pre_filt=(0.3, 0.5, 35.0, 45.0), water_level=None)
        vel.rotate("->ZNE", inventory=inv, components=("ZNE", "Z12", "123"))
        info[sta] = {"dead": dead, "clipped": clipped, "lat": coords["latitude"], "lon": coords["longitude"],
                     "elev_km": coords["elevation"] / 1000.0, "vel": vel, "raw": st}

    # P: recursive STA/LTA on the 2-15 Hz vertical, refined by AIC, first motion from velocity.
    picks = {}
    for sta, d in info.items():
        z = d["vel"].select(component="Z")[0]
        zf = z.copy().filter("bandpass", freqmin=2.0, freqmax=15.0, corners=4, zerophase=False)
        sr = z.stats.sampling_rate
        cft = recursive_sta_lta(zf.data, int(0.5 * sr), int(10 * sr))
        on = trigger_onset(cft, 5.0, 1.5)
        i0 = int(on[0][0])
        lo = max(0, i0 - int(2.0 * sr))
        hp = z.copy().filter("highpass", freq=1.0, corners=2, zerophase=False)
        ip = lo + aic_onset(hp.data[lo:i0 + int(0.3 * sr)])
        first = hp.data[ip: ip + int(0.04 * sr)]
        pol = "U" if first[np.argmax(np.abs(first))] > 0 else "D"
        picks[(sta, "P")] = {"time": z.stats.starttime + ip / sr, "polarity": pol}

    tt = TravelTimes(np.arange(0.0, 40.01, 0.5))

    def obs_list(phases):
        rows = []
        for (sta, ph), p in sorted(picks.items()):
            if ph in phases:
                rows.append({"sta": sta, "phase": ph, "t": p["time"] - t_ref, "lat": info[sta]["lat"],
                             "lon": info[sta]["lon"], "elev_km": info[sta]["elev_km"], "w": 1.0 if ph == "P" else 0.5})
        return rows

    loc = locate(obs_list({"P"}), tt)
    # S: AIC on the horizontal energy around the S time predicted from the P-only location.
    for sta, d in info.items():
        deg = locations2degrees(loc["lat"], loc["lon"], d["lat"], d["lon"])
        ts_pred = t_ref + loc["t0"] + float(tt("S", loc["depth"], np.array(deg))) + d["elev_km"] / VS_TOP
        hs = [tr.copy().filter("bandpass", freqmin=1.0, freqmax=10.0, corners=4, zerophase=False)
              for tr in d["vel"] if tr.stats.channel[-1] in "NE" and tr.stats.channel not in d["dead"]]
        sr = hs[0].stats.sampling_rate
        a = int((ts_pred - 1.5 - hs[0].stats.starttime) * sr)
        b = int((ts_pred + 1.5 - hs[0].stats.starttime) * sr)
        energy = np.sqrt(sum(h.data[a:b] ** 2 for h in hs))
        picks[(sta, "S")] = {"time": hs[0].stats.starttime + (a + aic_onset(energy)) / sr, "polarity": ""}
    loc = locate(obs_list({"P", "S"}), tt)
    origin_time = t_ref + loc["t0"]

    # Wood-Anderson amplitudes on ZNE displacement, peak between P and 30 s after S.
    mags = []
    for sta, d in sorted(info.items()):
        epi_km = locations2degrees(loc["lat"], loc["lon"], d["lat"], d["lon"]) * KM_PER_DEG
        hypo = math.hypot(epi_km, loc["depth"])
        disp = d["raw"].copy()
        disp.detrend("demean")
        disp.taper(0.05)
        disp.remove_response(inventory=inv, output="DISP", pre_filt=(0.1, 0.2, 30.0, 40.0), water_level=None)
        disp.rotate("->ZNE", inventory=inv, components=("ZNE", "Z12", "123"))
        amps = {}
        for comp in "NE":
            tr = disp.select(component=comp)[0]
            if any(ch[-1] == comp for ch in d["dead"]):
                continue
            wa = tr.copy().simulate(paz_remove=None, paz_simulate=WA)
            a = picks[(sta, "P")]["time"]
            b = picks[(sta, "S")]["time"] + 30.0
            wa.trim(a, b)
            amps[comp] = float(np.max(np.abs(wa.data))) * 1000.0
        mls = [math.log10(v) + 1.11 * math.log10(hypo / 100.0) + 0.00189 * (hypo - 100.0) + 3.0 for v in amps.values()]
        mags.append({"station": sta, "hypo": hypo, "amps": amps, "ml": float(np.mean(mls)), "used": not d["clipped"]})
    ml = float(np.median([m["ml"] for m in mags if m["used"]]))

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "picks.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["station", "phase", "time", "polarity"])
        for (sta, ph), p in sorted(picks.items()):
            w.writerow([sta, ph, p["time"].strftime("%Y-%m-%dT%H:%M:%S.%fZ"), p["polarity"]])
    with open(out / "magnitudes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["station", "hypo_dist_km", "amp_n_mm", "amp_e_mm", "station_ml", "used"])
        for m in mags:
            w.writerow([m["station"], f"{m['hypo']:.2f}", f"{m['amps']['N']:.4f}" if "N" in m["amps"] else "",
                        f"{m['amps']['E']:.4f}" if "E" in m["amps"] else "", f"{m['ml']:.3f}", int(m["used"])])

    ev = Event(event_type="earthquake", creation_info=CreationInfo(agency_id="XS"))
    org = Origin(time=origin_time, latitude=loc["lat"], longitude=loc["lon"], depth=loc["depth"] * 1000.0,
                 depth_type="from location", method_id="smi:local/grid-search-iasp91",
                 earth_model_id="smi:local/iasp91", evaluation_mode="manual")
    obs = obs_list({"P", "S"})
    for o, r in zip(obs, loc["res"], strict=True):
        p = picks[(o["sta"], o["phase"])]
        tr = info[o["sta"]]["raw"].select(component="Z")[0]
        wid = WaveformStreamID(network_code="XS", station_code=o["sta"], location_code="00",
                               channel_code=tr.stats.channel if o["phase"] == "P" else tr.stats.channel[:2] + "N")
        pick = Pick(time=p["time"], waveform_id=wid, phase_hint=o["phase"], evaluation_mode="manual",
                    polarity={"U": "positive", "D": "negative"}.get(p["polarity"]))
        ev.picks.append(pick)
        deg = locations2degrees(loc["lat"], loc["lon"], o["lat"], o["lon"])
        az = gps2dist_azimuth(loc["lat"], loc["lon"], o["lat"], o["lon"])[1]
        org.arrivals.append(Arrival(pick_id=pick.resource_id, phase=o["phase"], distance=deg, azimuth=az,
                                    time_residual=r))
    org.quality = OriginQuality(used_phase_count=len(obs), used_station_count=len(info),
                                standard_error=math.sqrt(loc["misfit"] / len(obs)))
    ev.origins.append(org)
    mag = Magnitude(mag=round(ml, 2), magnitude_type="ML", origin_id=org.resource_id,
                    station_count=sum(m["used"] for m in mags), method_id="smi:local/ML-Hutton-Boore-1987")
    for m in mags:
        if not m["used"]:
            continue
        sm = StationMagnitude(origin_id=org.resource_id, mag=round(m["ml"], 3), station_magnitude_type="ML",
                              waveform_id=WaveformStreamID(network_code="XS", station_code=m["station"]))
        ev.station_magnitudes.append(sm)
        mag.station_magnitude_contributions.append(StationMagnitudeContribution(station_magnitude_id=sm.resource_id, weight=1.0))
        for comp, a in sorted(m["amps"].items()):
            ev.amplitudes.append(Amplitude(generic_amplitude=a / 1000.0, type="AML", unit="m",
                                           waveform_id=WaveformStreamID(network_code="XS", station_code=m["station"])))
    ev.magnitudes.append(mag)
    ev.preferred_origin_id = org.resource_id
    ev.preferred_magnitude_id = mag.resource_id
    Catalog(events=[ev]).write(str(out / "event.xml"), format="QUAKEML")
    print(f"origin {origin_time} {loc['lat']:.4f} {loc['lon']:.4f} {loc['depth']:.1f} km  ML {ml:.2f}  rms {org.quality.standard_error:.3f}")


if __name__ == "__main__":
    main()
