"""Seeded generator of inputs/ and reference/ for usb-exfiltration-triage: python3 generate.py --out DIR.

Builds a partitioned FAT16 USB-stick image without root (mkfs.fat --invariant, mtools), plants
file timestamps in the workstation's local time (America/Chicago, across the 2026 DST change),
deletes files (one of them later overwritten), and splits the raw image into FTK-style segments.
"""

import argparse
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import tempfile
import zipfile
import zlib
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

SEED = 1
CANARY = "e5ede100-725b-4797-bba5-3000226886c2"
ZONE = ZoneInfo("America/Chicago")
PART_START = 63
FS_SECTORS = 4937
SEGMENT = 640_000  # 1250 sectors; 4 segments
FORMAT_TIME = "2026-02-20 08:12:40"
SEIZED = "2026-03-14 07:00"  # local (CDT)
ACQUIRED_UTC = "2026-03-14T15:20:00Z"

# name, directory, kind, created (local), modified (local), fate
FILES = [
    ("README.TXT", "", "readme", "2026-02-20 08:15:02", "2026-02-20 08:15:02", "keep"),
    ("Quarterly_Report.docx", "", "docx", "2026-02-23 10:02:14", "2026-01-30 16:44:08", "keep"),
    ("transfer_plan.docx", "", "docx", "2026-03-02 19:21:36", "2026-03-02 18:58:10", "overwritten"),
    ("system32.dll", "", "zip", "2026-03-09 01:47:22", "2026-03-09 01:46:58", "keep"),
    ("holiday.png", "", "png", "2026-02-21 12:00:06", "2025-12-26 09:31:44", "keep"),
    ("customer_list.csv", "", "customers", "2026-03-08 03:12:30", "2026-03-08 03:10:02", "delete"),
    ("vacation.jpg", "", "zip", "2026-03-10 22:40:18", "2026-03-10 22:39:50", "delete"),
    ("pump_assembly.pdf", "PROJECTS", "pdf", "2026-02-25 14:05:10", "2026-02-24 17:20:36", "keep"),
    ("photo_0231.jpg", "PROJECTS", "pdf", "2026-03-07 23:55:48", "2026-03-07 23:54:12", "keep"),
    ("notes.txt", "PROJECTS", "notes", "2026-02-27 09:00:00", "2026-03-12 16:30:14", "keep"),
    ("BOM_rev4.xlsx", "PROJECTS", "xlsx", "2026-03-04 11:11:12", "2026-03-04 11:09:40", "keep"),
    ("gearbox_drawing.pdf", "PROJECTS", "pdf", "2026-03-11 20:05:54", "2026-03-11 20:04:30", "delete"),
    ("old_spec.txt", "PROJECTS", "notes", "2019-05-04 10:20:30", "2019-05-04 10:20:30", "keep"),
    ("photo_0232.jpg", "PROJECTS", "jpeg", "2026-03-07 23:56:10", "2026-03-06 18:12:44", "keep"),
    ("sync.log", "PROJECTS", "log", "2026-03-14 09:30:06", "2026-03-14 09:41:20", "late"),
]
MISMATCH = {"system32.dll", "vacation.jpg", "photo_0231.jpg"}
ANOMALY = {"old_spec.txt", "sync.log"}
DIR_TIME = {"PROJECTS": "2026-02-20 08:16:00"}


def local(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZONE)


def utc_text(stamp: str) -> str:
    return local(stamp).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- file contents -------------------------------------------------------------------------

def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 12, 9, 30, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buf.getvalue()


def _ooxml(rng: random.Random, kind: str) -> bytes:
    words = " ".join(rng.choice(["pump", "gear", "housing", "seal", "flange", "rotor", "cost", "rev"])
                     for _ in range(rng.randint(400, 900)))
    if kind == "docx":
        ctype, part = "wordprocessingml.document.main+xml", "word/document.xml"
        body = f'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>{words}</w:t></w:r></w:p></w:body></w:document>'
        rel = "officeDocument"
    else:
        ctype, part = "spreadsheetml.sheet.main+xml", "xl/workbook.xml"
        body = '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="BOM" sheetId="1"/></sheets></workbook>'
        rel = "officeDocument"
    types = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
             '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
             '<Default Extension="xml" ContentType="application/xml"/>'
             f'<Override PartName="/{part}" ContentType="application/vnd.openxmlformats-officedocument.{ctype}"/></Types>')
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/{rel}" Target="{part}"/></Relationships>')
    members = [("[Content_Types].xml", types.encode()), ("_rels/.rels", rels.encode()), (part, body.encode())]
    if kind == "xlsx":
        rows = "".join(f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>P-{rng.randint(1000, 9999)}</t></is></c>'
                       f'<c r="B{i}"><v>{rng.randint(1, 40)}</v></c></row>' for i in range(1, 120))
        sheet = f'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>'
        members.append(("xl/worksheets/sheet1.xml", sheet.encode()))
    return _zip(members)


def _pdf(rng: random.Random, title: str) -> bytes:
    lines = [f"({title} sheet {i} dim {rng.uniform(5, 500):.2f} mm tol {rng.choice(['h7', 'g6', 'js9'])}) Tj T*"
             for i in range(rng.randint(60, 140))]
    stream = ("BT /F1 9 Tf 40 800 Td 11 TL " + " ".join(lines) + " ET").encode()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def _png(rng: random.Random) -> bytes:
    w, h = 96, 64
    raw = b"".join(b"\x00" + bytes((x * 2 + rng.randint(0, 9)) % 256 for x in range(w * 3)) for _ in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _jpeg(rng: random.Random) -> bytes:
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x48\x00\x48\x00\x00"
    body = bytes(rng.randint(0, 254) for _ in range(7000))
    return b"\xff\xd8" + app0 + b"\xff\xdb\x00\x43\x00" + bytes(range(1, 65)) + body + b"\xff\xd9"


def content(kind: str, name: str, rng: random.Random) -> bytes:
    if kind in ("docx", "xlsx"):
        return _ooxml(rng, kind)
    if kind == "pdf":
        return _pdf(rng, name)
    if kind == "png":
        return _png(rng)
    if kind == "jpeg":
        return _jpeg(rng)
    if kind == "zip":
        return _zip([(f"designs/{rng.choice(['pump', 'gear', 'valve'])}_{i:02d}.pdf", _pdf(rng, f"design {i}"))
                     for i in range(3)])
    if kind == "customers":
        rows = [f"{1000 + i},{rng.choice(['Acme', 'Borel', 'Caldera', 'Dunmore'])} {rng.choice(['Pumps', 'Hydraulics', 'Systems'])},"
                f"{rng.choice(['IL', 'WI', 'IN', 'IA'])},{rng.randint(5, 900) * 1000}" for i in range(180)]
        return ("id,customer,state,annual_usd\r\n" + "\r\n".join(rows) + "\r\n").encode()
    if kind == "log":
        return "".join(f"2026-03-14 09:{30 + i // 12:02d}:{(i * 5) % 60:02d} sync: pushed block {rng.randint(0, 99999):05d}\n"
                       for i in range(130)).encode()
    if kind == "readme":
        return b"Property of Halvorsen Pump Works - engineering department.\r\nIf found, call +1 312 555 0142.\r\n"
    return ("\n".join(f"- {rng.choice(['check', 'send', 'copy', 'review'])} {rng.choice(['drawings', 'BOM', 'quotes', 'specs'])} "
                      f"for {rng.choice(['Caldera', 'Dunmore', 'Orbis'])} #{rng.randint(10, 99)}" for _ in range(60)) + "\n").encode()


# ---- image building ------------------------------------------------------------------------

def fat_time(stamp: str) -> tuple[int, int]:
    t = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
    assert t.second % 2 == 0
    return (t.hour << 11) | (t.minute << 5) | (t.second // 2), ((t.year - 1980) << 9) | (t.month << 5) | t.day


class Fat:
    """Just enough of FAT16 to walk directory entries and patch their timestamps."""

    def __init__(self, img: bytearray) -> None:
        self.img = img
        bps, spc, reserved, nfats, root_n = struct.unpack_from("<HBHBH", img, 11)
        fat_sz = struct.unpack_from("<H", img, 22)[0]
        self.bps, self.spc = bps, spc
        self.fat_off = reserved * bps
        self.root_off = (reserved + nfats * fat_sz) * bps
        self.root_n = root_n
        self.data_off = self.root_off + root_n * 32

    def fat(self, cluster: int) -> int:
        return struct.unpack_from("<H", self.img, self.fat_off + 2 * cluster)[0]

    def chain(self, cluster: int) -> list[int]:
        out = []
        while 2 <= cluster < 0xFFF8:
            out.append(cluster)
            cluster = self.fat(cluster)
        return out

    def entries(self, cluster: int | None) -> list[tuple[int, str]]:
        """(byte offset, long or short name) of every short entry of a directory, deleted included."""
        if cluster is None:
            spans = [(self.root_off, self.root_n * 32)]
        else:
            size = self.bps * self.spc
            spans = [(self.data_off + (c - 2) * size, size) for c in self.chain(cluster)]
        out, lfn = [], []
        for start, length in spans:
            for off in range(start, start + length, 32):
                e = self.img[off:off + 32]
                if e[0] == 0:
                    return out
                if e[11] == 0x0F:
                    part = e[1:11] + e[14:26] + e[28:32]
                    lfn.insert(0, part.decode("utf-16-le").split("\x00")[0])
                    continue
                short = e[0:8].decode("latin-1").rstrip() + ("." + e[8:11].decode("latin-1").rstrip()).rstrip(".")
                out.append((off, "".join(lfn) or short))
                lfn = []
        return out

    def stamp(self, off: int, created: str, modified: str) -> None:
        ct, cd = fat_time(created)
        mt, md = fat_time(modified)
        struct.pack_into("<BHHH", self.img, off + 13, 0, ct, cd, md)
        struct.pack_into("<HH", self.img, off + 22, mt, md)


def run(cmd: list[str], env: dict[str, str]) -> None:
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def build_image(blobs: dict[str, bytes], tmp: Path) -> tuple[bytes, dict[str, dict]]:
    fs = tmp / "fs.img"
    fs.write_bytes(b"\x00" * (FS_SECTORS * 512))
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
    run(["mkfs.fat", "-F", "16", "-s", "1", "-h", str(PART_START), "-n", "HPW-USB", "-i", "5A3C19E2", "--invariant", str(fs)], env)
    run(["mmd", "-i", str(fs), "::PROJECTS"], env)
    src = tmp / "src"
    src.mkdir()

    def put(name: str, folder: str) -> None:
        (src / name).write_bytes(blobs[name])
        run(["mcopy", "-i", str(fs), str(src / name), f"::{folder}/{name}" if folder else f"::{name}"], env)

    def target(name: str, folder: str) -> str:
        return f"::{folder}/{name}" if folder else f"::{name}"
    for name, folder, *_r, fate in FILES:
        if fate != "late":
            put(name, folder)
    for name, folder, *_r, fate in FILES:
        if fate == "overwritten":
            run(["mdel", "-i", str(fs), target(name, folder)], env)
    for name, folder, *_r, fate in FILES:
        if fate == "late":
            put(name, folder)
    for name, folder, *_r, fate in FILES:
        if fate == "delete":
            run(["mdel", "-i", str(fs), target(name, folder)], env)

    img = bytearray(fs.read_bytes())
    fat = Fat(img)
    info = {name: {"created": c, "modified": m, "fate": fate} for name, _f, _k, c, m, fate in FILES}
    root = fat.entries(None)
    projects_cluster = None
    for off, name in root:
        if img[off + 11] & 0x08:  # the volume label entry: written when the file system was made
            fat.stamp(off, FORMAT_TIME, FORMAT_TIME)
        elif name.startswith("PROJECTS"):
            projects_cluster = struct.unpack_from("<H", img, off + 26)[0]
            fat.stamp(off, DIR_TIME["PROJECTS"], DIR_TIME["PROJECTS"])
    assert projects_cluster is not None
    seen: dict[str, int] = {}
    for off, found in root + fat.entries(projects_cluster):
        name = next((n for n in info if n.lower() == found.lower()
                     or (img[off] == 0xE5 and n.lower()[1:] == found.lower()[1:])), None)
        if name is not None:
            fat.stamp(off, info[name]["created"], info[name]["modified"])
            seen[name] = off
        elif found.strip() in (".", ".."):
            fat.stamp(off, DIR_TIME["PROJECTS"], DIR_TIME["PROJECTS"])
    assert sorted(seen) == sorted(info), sorted(set(info) - set(seen))
    for name, off in seen.items():  # The Sleuth Kit numbers FAT entries by 32-byte slot from the root directory on
        info[name]["inode"] = 3 + (off - fat.root_off) // 32
    # A deleted file whose first cluster now belongs to another file is overwritten; the others are intact.
    for name, off in seen.items():
        if info[name]["fate"] in ("delete", "overwritten"):
            first = struct.unpack_from("<H", img, off + 26)[0]
            size = struct.unpack_from("<I", img, off + 28)[0]
            n = -(-size // (fat.bps * fat.spc))
            taken = any(fat.fat(c) != 0 for c in range(first, first + n))
            assert taken == (info[name]["fate"] == "overwritten"), name

    mbr = bytearray(512)
    struct.pack_into("<I", mbr, 440, 0x48505755)
    entry = struct.pack("<B3sB3sII", 0x80, b"\x01\x01\x00", 0x04, b"\xfe\xff\xff", PART_START, FS_SECTORS)
    mbr[446:462] = entry
    mbr[510:512] = b"\x55\xaa"
    image = bytes(mbr) + b"\x00" * ((PART_START - 1) * 512) + bytes(img)
    return image, info


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    blobs = {name: content(kind, name, rng) for name, _f, kind, *_r in FILES}
    with tempfile.TemporaryDirectory() as t:
        image, info = build_image(blobs, Path(t))
    assert len(image) == (PART_START + FS_SECTORS) * 512 == 4 * SEGMENT
    inputs, ref = out / "inputs", out / "reference"
    (inputs / "evidence").mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    for i in range(4):
        (inputs / "evidence" / f"HPW-USB-01.{i + 1:03d}").write_bytes(image[i * SEGMENT:(i + 1) * SEGMENT])
    sha, md5 = hashlib.sha256(image).hexdigest(), hashlib.md5(image).hexdigest()
    custody = CUSTODY.format(sha=sha, md5=md5, seized=SEIZED, acquired=ACQUIRED_UTC[11:16])
    (inputs / "chain_of_custody.txt").write_text(custody)

    files = {}
    for name, folder, *_r in FILES:
        d = info[name]
        fate = d["fate"]
        files[str(d["inode"])] = {
            "name": name,
            "path": f"/{folder}/{name}" if folder else f"/{name}",
            "status": {"keep": "allocated", "late": "allocated", "delete": "deleted", "overwritten": "overwritten"}[fate],
            "size": len(blobs[name]),
            "sha256": "" if fate == "overwritten" else hashlib.sha256(blobs[name]).hexdigest(),
            "created_utc": utc_text(d["created"]),
            "modified_utc": utc_text(d["modified"]),
            "extension_mismatch": int(name in MISMATCH),
            "timestamp_anomaly": int(name in ANOMALY),
        }
    truth = {
        "canary": CANARY,
        "image_sha256": sha,
        "image_md5": md5,
        "custody_hash_verified": True,
        "partition_start_sector": PART_START,
        "filesystem": "FAT16",
        "filesystem_created_utc": utc_text(FORMAT_TIME),
        "seized_utc": utc_text(SEIZED + ":00"),
        "files": files,
    }
    (ref / "truth.json").write_text(json.dumps(truth, indent=2, sort_keys=True) + "\n")


CUSTODY = """HALVORSEN PUMP WORKS - CORPORATE SECURITY
EVIDENCE CHAIN OF CUSTODY                                   Case HPW-IR-2026-007

Item 01   USB flash drive, 2.5 MB (promotional stick, blue), label "HPW"
          Seized from the desk of employee E-2291 (engineering) at Schaumburg, IL,
          on {seized} local time, by J. Ortega (Corporate Security).
          The stick was used on workstation ENG-WS-114. Workstation settings per IT
          asset record: Windows 10, time zone "(UTC-06:00) Central Time (US & Canada)",
          "Adjust for daylight saving time automatically" = On.

Transfers
  2026-03-14 07:00 local   J. Ortega      seized, bagged, seal HPW-S-0418
  2026-03-14 08:10 local   J. Ortega -> M. Lindqvist (Forensics Lab), seal intact
  2026-03-14 {acquired} UTC     M. Lindqvist   acquisition started (raw/dd, hardware write blocker
                                           WB-3), segmented: HPW-USB-01.001 ... HPW-USB-01.004

Acquisition hashes, computed by the imager over the whole acquired image (all segments):
  MD5     {md5}
  SHA-256 {sha}

Notes
  - Suspect states the stick "only ever held holiday photos and the quarterly report".
  - Lab request: verify the image, list every file including deleted ones, recover what
    can be recovered, and build a UTC timeline for comparison with the proxy logs.
"""


if __name__ == "__main__":
    main()
