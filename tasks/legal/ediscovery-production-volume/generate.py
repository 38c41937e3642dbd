"""Seeded generator of the collection (inputs/) and the expected production (reference/).

    python3 generate.py --out DIR

Three custodians' mailboxes and loose files for Brightline Logistics. Most messages are
scripted scenes that plant one trap each (UTC date edges, duplicate copies that differ only in
formatting, the sender's BCC copy, a re-send with a corrected attachment, hits visible only
after quoted-printable/base64 decoding or only in an attachment, privilege with and without a
third party, a work-product attachment inside a producible family, SSNs to redact, natives);
the rest is seeded filler. The reference applies the protocol of instruction.md to the
generated ground truth (not to a re-parse of the files).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import quopri
import random
import re
from datetime import UTC, datetime, timedelta, timezone
from email.header import Header
from pathlib import Path

import docfmt

SEED = 4207
CANARY = "e7014245-19a2-4290-b7e9-7af78240163c"
DOMAIN = "brightline-logistics.com"
CUSTODIANS = ["dana.whitfield", "marco.reyes", "priya.natarajan"]
RANGE = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC))
BATES_PREFIX, BATES_START, VOLUME = "BRL", 4201, "PROD002"
SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
WP_LEGEND = "PRIVILEGED & CONFIDENTIAL - ATTORNEY WORK PRODUCT"

PEOPLE = {
    "dana": ("Dana Whitfield", f"dana.whitfield@{DOMAIN}"),
    "marco": ("Marco Reyes", f"marco.reyes@{DOMAIN}"),
    "priya": ("Priya Natarajan", f"priya.natarajan@{DOMAIN}"),
    "luis": ("Luis Ortega", f"luis.ortega@{DOMAIN}"),
    "amy": ("Amy Chen", f"amy.chen@{DOMAIN}"),
    "it": ("IT Helpdesk", f"it-helpdesk@{DOMAIN}"),
    "hr": ("People Team", f"people@{DOMAIN}"),
    "helen": ("Helen Park", f"helen.park@{DOMAIN}"),
    "sam": ("Sam Adeyemi", f"sam.adeyemi@{DOMAIN}"),
    "ruth": ("Ruth Garrison", "rgarrison@garrisonwelk.com"),
    "paul": ("Paul Welk", "pwelk@garrisonwelk.com"),
    "greg": ("Greg Holt", "gholt@kessler-industrial.com"),
    "zoe": ("Zoë Lambert", "zoe.lambert@kessler-industrial.com"),
    "oscar": ("Oscar Lind", "olind@freightaudit-partners.com"),
    "jose": ("José Ibáñez", "jose.ibanez@freightaudit-partners.com"),
    "dana_home": ("Dana W", "d.whitfield.home@gmail.com"),
}
COUNSEL_LIST = [("Helen Park", "helen.park@brightline-logistics.com", "General Counsel (in-house)"),
                ("Sam Adeyemi", "sam.adeyemi@brightline-logistics.com", "Senior Counsel (in-house)"),
                ("Garrison & Welk LLP", "@garrisonwelk.com", "Outside litigation counsel (whole domain)")]
SEARCH_TERMS = [("T01", "fuel w/3 surcharg*"), ("T02", '"rate increase"'), ("T03", "kessler w/5 delay*"),
                ("T04", "(penalty OR penalties) AND invoice*"), ("T05", "chargeback*"),
                ("T06", "audit* AND warehouse"), ("T07", '"project falcon"')]
CITIES = ["Reno", "Sparks", "Fresno", "Modesto", "Stockton", "Boise", "Ogden", "Elko"]
TZS = [-7, -5, -4, 0, 1, 2]


# --- documents ---------------------------------------------------------------------------

class Att:
    """An attachment: file bytes plus the text a reviewer's tools extract from it."""

    def __init__(self, filename: str, data: bytes, text: str, kind: str, pages: int = 0):
        self.filename, self.data, self.text, self.kind, self.pages = filename, data, text, kind, pages
        self.email = None  # a nested Msg for message/rfc822 attachments

    @property
    def md5(self) -> str:
        return self.email.hash() if self.email else hashlib.md5(self.data).hexdigest()


class Msg:
    def __init__(self, mid: str, sent: datetime, frm: str, to: list[str], cc=(), bcc=(), subject="", body="",
                 atts=(), enc="7bit"):
        self.mid, self.sent, self.frm = mid, sent, frm
        self.to, self.cc, self.bcc = list(to), list(cc), list(bcc)
        self.subject, self.body, self.atts, self.enc = subject, body, list(atts), enc
        self.tag = ""

    def addr(self, key: str) -> str:
        return PEOPLE[key][1]

    def hash(self, with_bcc: bool = True) -> str:
        def lst(keys):
            return ";".join(sorted(self.addr(k).lower() for k in keys))
        body = norm_body(self.body)
        s = (f"FROM:{self.addr(self.frm).lower()}\nTO:{lst(self.to)}\nCC:{lst(self.cc)}\n"
             f"BCC:{lst(self.bcc) if with_bcc else ''}\nSUBJECT:{' '.join(self.subject.split())}\n"
             f"DATE:{utc(self.sent).strftime('%Y-%m-%dT%H:%M:%SZ')}\nBODY:{body}\n"
             f"ATTACHMENTS:{';'.join(sorted(a.md5 for a in self.atts))}")
        return hashlib.md5(s.encode("utf-8")).hexdigest()

    def search_text(self) -> str:
        return self.subject + "\n" + norm_body(self.body)


def utc(d: datetime) -> datetime:
    return d.astimezone(UTC)


def norm_body(body: str) -> str:
    lines = [ln.rstrip(" \t") for ln in body.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


# --- raw RFC 5322 rendering ------------------------------------------------------------

def fmt_addr(key: str, style: int) -> str:
    name, addr = PEOPLE[key]
    if not name.isascii():
        return f"{Header(name, 'utf-8').encode()} <{addr}>"
    return f'"{name}" <{addr}>' if style else f"{name} <{addr}>"


def fmt_date(d: datetime, offset_h: int | None) -> str:
    if offset_h is not None:
        d = d.astimezone(timezone(timedelta(hours=offset_h)))
    off = d.utcoffset()
    mins = int(off.total_seconds() // 60)
    sign = "+" if mins >= 0 else "-"
    return d.strftime("%a, %d %b %Y %H:%M:%S ") + f"{sign}{abs(mins) // 60:02d}{abs(mins) % 60:02d}"


def encode_body(text: str, enc: str) -> str:
    raw = text.replace("\n", "\n").encode("utf-8")
    if enc == "base64":
        return base64.encodebytes(raw).decode("ascii")
    if enc == "quoted-printable":
        return quopri.encodestring(raw).decode("ascii")
    return text


def render(m: Msg, rng: random.Random, variant: dict) -> str:
    """One copy of a message. variant: bcc (show Bcc), date_offset, to_order, quote_style, enc,
    trailing (trailing spaces on body lines), qp_raw (prebuilt quoted-printable body)."""
    style = variant.get("quote_style", 0)
    to = list(m.to)
    if variant.get("to_reversed"):
        to.reverse()
    h = [f"From: {fmt_addr(m.frm, style)}", "To: " + ",\n\t".join(fmt_addr(k, style) for k in to)]
    if m.cc:
        h.append("Cc: " + ", ".join(fmt_addr(k, style) for k in m.cc))
    if m.bcc and variant.get("bcc"):
        h.append("Bcc: " + ", ".join(fmt_addr(k, style) for k in m.bcc))
    subj = m.subject if m.subject.isascii() else Header(m.subject, "utf-8").encode()
    h += [f"Subject: {subj}", f"Date: {fmt_date(m.sent, variant.get('date_offset'))}",
          f"Message-ID: <{m.mid}>", "MIME-Version: 1.0"]
    body = m.body
    if variant.get("trailing"):
        body = "\n".join(line + "  " if line else line for line in body.split("\n")) + "\n\n"
    enc = variant.get("enc", m.enc)
    if not body.isascii() and enc == "7bit":
        enc = "quoted-printable"
    text_part = ['Content-Type: text/plain; charset="utf-8"', f"Content-Transfer-Encoding: {enc}", "",
                 variant["qp_raw"] if "qp_raw" in variant else encode_body(body, enc).rstrip("\n")]
    if not m.atts:
        return "\n".join(h + text_part) + "\n"
    boundary = f"=_bnd_{m.mid.split('@')[0]}_{rng.randrange(10**6):06d}"
    out = h + [f'Content-Type: multipart/mixed; boundary="{boundary}"', "", "This is a multi-part message in MIME format.",
               f"--{boundary}", *text_part]
    for a in m.atts:
        out.append(f"--{boundary}")
        if a.email is not None:
            out += ["Content-Type: message/rfc822", f'Content-Disposition: attachment; filename="{a.filename}"', "",
                    render(a.email, rng, {}).rstrip("\n")]
            continue
        ctype = {"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                 "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                 "pdf": "application/pdf", "csv": "text/csv", "txt": "text/plain"}[a.kind]
        if a.filename.isascii():
            disp = f'attachment; filename="{a.filename}"'
        else:
            from urllib.parse import quote
            disp = f"attachment; filename*=utf-8''{quote(a.filename)}"
        out += [f"Content-Type: {ctype}", "Content-Transfer-Encoding: base64", f"Content-Disposition: {disp}", "",
                base64.encodebytes(a.data).decode("ascii").rstrip("\n")]
    out.append(f"--{boundary}--")
    return "\n".join(out) + "\n"


# --- content ------------------------------------------------------------------------------

def sentence(rng: random.Random, pool: list[str]) -> str:
    s = rng.choice(pool)
    return s.format(city=rng.choice(CITIES), city2=rng.choice(CITIES), amt=f"{rng.randint(3, 95) * 137:,}",
                    inv=f"INV-24-{rng.randint(1000, 9999)}", q=rng.randint(1, 2), n=rng.randint(3, 28),
                    day=rng.choice(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]))


TOPICS = {
    "fuel": ["The fuel surcharge table for Q{q} still uses the old diesel index.",
             "Kessler questioned the fuel surcharges on the {city} lane again.",
             "Can you send me the fuel surcharge calculation for the {city} runs?",
             "We applied a fuel and accessorial surcharge of {n} percent on the {city} lane."],
    "rate": ["Greg says Kessler will not accept the rate increase before the contract review.",
             "The rate increase for the {city} lanes takes effect next month if nobody objects.",
             "Let us hold the rate increase discussion until the volumes settle."],
    "delay": ["Kessler loads were delayed at the {city} cross-dock for {n} hours.",
              "The Kessler trailer delays in {city} were caused by the dock scheduling change.",
              "Kessler is upset about the delayed pickups out of {city}."],
    "penalty": ["Their invoice {inv} includes a late-delivery penalty of ${amt}.",
                "Marco wants every penalty line on the invoices broken out by lane.",
                "The contract penalties apply only when the invoice is disputed within {n} days."],
    "chargeback": ["Kessler issued chargebacks of ${amt} against our March billing.",
                   "Please log the chargeback from Kessler under the {city} account."],
    "audit": ["The audit of the {city} warehouse starts on {day}.",
              "Oscar wants the warehouse cycle counts before the audit fieldwork.",
              "Our auditors will sample {n} pallets in the {city} warehouse."],
    "falcon": ["Project Falcon would merge the {city} and {city2} routes into one hub.",
               "Keep Project Falcon quiet until the board meets."],
    "noise": ["Lunch is on me on {day}.", "Reminder: benefits enrollment closes on {day}.",
              "The printer on the second floor is fixed.", "Please submit your timesheets by {day}.",
              "Parking lot resurfacing starts on {day}.", "Can we move our one-on-one to {day}?",
              "The quarterly town hall is on {day} at 10.", "Thanks, talk soon.",
              "The {city} office will close early on {day}.", "New badge readers go live on {day}.",
              "The surcharge on parking permits goes up next quarter.",
              "Please review the draft agenda before {day}."],
}


def body_of(rng: random.Random, topics: list[str], greet: str, sign: str, extra: list[str] = ()) -> str:
    lines = [f"Hi {greet},", ""]
    for t in topics:
        lines.append(sentence(rng, TOPICS[t]))
    lines += list(extra)
    lines += ["", sign]
    return "\n".join(lines)


# --- the collection -----------------------------------------------------------------------

class Collection:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.msgs: list[Msg] = []
        self.copies: dict[str, list[tuple[str, dict]]] = {}  # custodian -> [(raw, meta)]
        self.loose: list[dict] = []
        self.used_times: set[int] = set()
        self.n = 0

    def when(self, lo: datetime, hi: datetime) -> datetime:
        while True:
            t = lo + timedelta(seconds=self.rng.randrange(int((hi - lo).total_seconds())))
            t = t.replace(microsecond=0)
            if int(t.timestamp()) // 60 not in self.used_times:
                self.used_times.add(int(t.timestamp()) // 60)
                return t.astimezone(timezone(timedelta(hours=self.rng.choice(TZS))))

    def mid(self) -> str:
        self.n += 1
        return f"{self.n:04d}.{self.rng.randrange(16**8):08x}@mail.{DOMAIN}"

    def add(self, m: Msg, tag: str = "", variants: dict[str, dict] | None = None) -> Msg:
        """Deliver one message to every custodian among its participants."""
        m.tag = tag
        self.msgs.append(m)
        holders = [c for c in CUSTODIANS if any(PEOPLE[k][1].split("@")[0] == c
                                                 for k in [m.frm, *m.to, *m.cc, *m.bcc])]
        for c in holders:
            v = dict((variants or {}).get(c, {}))
            is_sender = PEOPLE[m.frm][1].split("@")[0] == c
            v.setdefault("bcc", is_sender)
            self.copies.setdefault(c, []).append((render(m, self.rng, v), {"msg": m, "bcc": bool(m.bcc) and v["bcc"]}))
        return m


def att_docx(name: str, paras: list[str]) -> Att:
    return Att(name, docfmt.docx(paras), "\n".join(paras), "docx")


def att_xlsx(name: str, rows: list[list]) -> Att:
    text = "\n".join(" ".join(str(v) for v in row) for row in rows)
    return Att(name, docfmt.xlsx(rows), text, "xlsx")


def att_csv(name: str, rows: list[list]) -> Att:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return Att(name, buf.getvalue().encode("utf-8"), buf.getvalue(), "csv")


def att_pdf(name: str, pages: list[list[str]]) -> Att:
    return Att(name, docfmt.pdf(pages), "\n".join("\n".join(p) for p in pages), "pdf", pages=len(pages))


def att_txt(name: str, text: str) -> Att:
    return Att(name, text.encode("utf-8"), text, "txt")


def build(rng: random.Random) -> Collection:
    col = Collection(rng)
    inr = (datetime(2024, 1, 3, tzinfo=UTC), datetime(2024, 6, 27, tzinfo=UTC))
    out_early = (datetime(2023, 10, 2, tzinfo=UTC), datetime(2023, 12, 20, tzinfo=UTC))
    out_late = (datetime(2024, 7, 8, tzinfo=UTC), datetime(2024, 9, 20, tzinfo=UTC))

    def M(frm, to, cc=(), bcc=(), subject="", body="", atts=(), enc="7bit", when=None, tag="", variants=None):
        return col.add(Msg(col.mid(), when or col.when(*inr), frm, to, cc, bcc, subject, body, atts, enc), tag, variants)

    tz = lambda h: timezone(timedelta(hours=h))  # noqa: E731
    # UTC date edges: local dates say the opposite of the UTC date.
    M("dana", ["greg"], subject="Q1 fuel surcharge schedule",
      body=body_of(rng, ["fuel", "rate"], "Greg", "Dana"), tag="edge-in-newyear",
      when=datetime(2023, 12, 31, 20, 15, 0, tzinfo=tz(-5)))
    M("marco", ["amy"], subject="Open Kessler invoices",
      body=body_of(rng, ["penalty"], "Amy", "Marco"), tag="edge-out-newyear",
      when=datetime(2024, 1, 1, 3, 0, 0, tzinfo=tz(8)))
    M("priya", ["luis"], subject="Reno cross-dock",
      body=body_of(rng, ["delay"], "Luis", "Priya"), tag="edge-in-june",
      when=datetime(2024, 7, 1, 1, 30, 0, tzinfo=tz(2)))
    M("luis", ["priya", "dana"], subject="RE: Reno cross-dock",
      body=body_of(rng, ["delay", "chargeback"], "Priya", "Luis"), tag="edge-out-june",
      when=datetime(2024, 6, 30, 21, 10, 0, tzinfo=tz(-7)))

    # Duplicate copies that differ only in formatting (tz of Date, To order, quoting, encoding).
    M("greg", ["dana", "marco"], cc=["priya"], subject="Kessler concerns on Sparks service",
      body=body_of(rng, ["delay", "penalty"], "Dana and Marco", "Greg Holt\nKessler Industrial"),
      tag="dup-format", variants={"dana.whitfield": {"date_offset": -7}, "marco.reyes": {"date_offset": 0, "to_reversed": True,
                                                                       "quote_style": 1, "enc": "base64"},
                                 "priya.natarajan": {"date_offset": 2, "trailing": True}})
    # The sender's copy carries Bcc; the blind-copied custodian's copy does not.
    M("marco", ["greg"], bcc=["dana"], subject="Chargebacks on March billing",
      body=body_of(rng, ["chargeback", "penalty"], "Greg", "Marco"), tag="bcc-pair")
    # Re-sent with a corrected attachment: same text, different attachment and time.
    rows_v1 = [["invoice", "lane", "amount", "penalty"]] + [
        [f"INV-24-{1200 + i}", rng.choice(CITIES), round(rng.uniform(800, 9000), 2), 0] for i in range(8)]
    rows_v2 = [row[:] for row in rows_v1]
    rows_v2[3][3] = 450
    body = body_of(rng, ["penalty"], "Greg", "Marco", ["The invoice register is attached."])
    first = M("marco", ["greg"], subject="Kessler invoice register", body=body,
              atts=[att_xlsx("Kessler invoice register.xlsx", rows_v1)], tag="resend-v1")
    M("marco", ["greg"], subject="Kessler invoice register", body=body,
      atts=[att_xlsx("Kessler invoice register.xlsx", rows_v2)], tag="resend-v2",
      when=first.sent + timedelta(minutes=47))
    # Hits only after decoding: a quoted-printable soft break inside the word, a base64 body.
    qp_body = ("Hi Marco,\n\nOscar flagged that our fuel surcharges on the Elko lane were computed on "
               "the wrong index.\n\nPriya")
    m = M("priya", ["marco"], subject="Elko lane", body=qp_body, enc="quoted-printable", tag="qp-hit")
    raw = quopri.encodestring(qp_body.encode()).decode()
    cut = raw.index("surcharges") + 3
    qp_raw = raw[:cut] + "=\n" + raw[cut:]
    col.copies["priya.natarajan"][-1] = (render(m, rng, {"bcc": True, "qp_raw": qp_raw.rstrip("\n")}), col.copies["priya.natarajan"][-1][1])
    col.copies["marco.reyes"][-1] = (render(m, rng, {"qp_raw": qp_raw.rstrip("\n")}), col.copies["marco.reyes"][-1][1])
    M("dana", ["marco", "priya"], subject="Board deck notes",
      body=body_of(rng, ["falcon"], "both", "Dana"), enc="base64", tag="b64-hit")
    # The only hit is inside the attachment.
    M("priya", ["dana"], subject="Schedule for your review",
      body="Hi Dana,\n\nSee attached before our call.\n\nPriya",
      atts=[att_docx("Diesel index memo.docx", ["Memo: diesel index", sentence(rng, TOPICS["fuel"]),
                                                "The fuel surcharge will be recalculated monthly.",
                                                "Prepared by Procurement."])],
      tag="attachment-only-hit")
    # Forward as attachment: a nested email carrying its own spreadsheet.
    inner = Msg(col.mid(), col.when(*inr), "greg", ["luis"], subject="Detention at Sparks",
                body=body_of(rng, ["delay"], "Luis", "Greg"),
                atts=[att_xlsx("Sparks detention log.xlsx",
                               [["date", "trailer", "hours"]] + [[f"2024-03-{d:02d}", f"TR{rng.randint(100, 999)}",
                                                                  rng.randint(2, 14)] for d in range(4, 12)])])
    fwd = Att("Detention at Sparks.eml", b"", "", "eml")
    fwd.email = inner
    M("luis", ["dana"], cc=["marco"], subject="FW: Detention at Sparks",
      body="Dana,\n\nForwarding Greg's note with the log. This is the third week in a row.\n\nLuis",
      atts=[fwd], tag="nested")

    # Privilege: counsel among participants, nobody outside the company or counsel.
    M("dana", ["helen"], subject="Kessler penalty exposure",
      body="Helen,\n\nBefore we answer Greg, can you tell me whether the penalty clause in the MSA is enforceable? "
           "The disputed invoices are in the attached sheet.\n\nDana",
      atts=[att_xlsx("Disputed invoices.xlsx", [["invoice", "penalty"]] + [[f"INV-24-{rng.randint(1000, 9999)}",
                                                                            rng.randint(200, 900)] for _ in range(6)])],
      tag="priv-inhouse")
    M("ruth", ["dana", "marco"], cc=["helen"], subject="Litigation hold and chargeback analysis",
      body="Dana, Marco,\n\nAs discussed, please preserve all chargeback records. Our preliminary view on the "
           "Kessler chargebacks is below; do not forward.\n\n" + sentence(rng, TOPICS["chargeback"]) +
           "\n\nRuth Garrison\nGarrison & Welk LLP", tag="priv-outside")
    # Same topic, but a third party is on the email: no privilege.
    M("sam", ["marco"], cc=["oscar"], subject="Audit scope",
      body="Marco,\n\nLegal is fine with the audit of the Reno warehouse going ahead as scoped.\n\nSam",
      tag="waived-third-party")
    # Forwarded to a personal address: no longer confidential.
    M("dana", ["dana_home"], subject="FW: Kessler penalty exposure",
      body="For the weekend.\n\n> Helen: the penalty clause on the invoices is likely enforceable only in part.",
      tag="waived-personal")
    # Counsel mentioned but not a participant.
    M("marco", ["priya"], subject="Chargeback follow-up",
      body=body_of(rng, ["chargeback"], "Priya", "Marco", ["Helen Park asked to be kept in the loop on this."]),
      tag="counsel-mentioned")
    # A work-product attachment in a producible family: slip sheet.
    M("priya", ["luis"], subject="Kessler claim numbers",
      body="Luis,\n\nNumbers for the Kessler chargeback claim attached; legal's analysis too, do not share.\n\nPriya",
      atts=[att_xlsx("Kessler claim numbers.xlsx", [["claim", "amount"]] + [[f"CL-{rng.randint(100, 999)}",
                                                                            rng.randint(1000, 20000)] for _ in range(5)]),
            att_docx("Claim analysis.docx", [WP_LEGEND, "Prepared at the direction of counsel.",
                                             "Our chargeback exposure on the Kessler claim is limited to the "
                                             "Sparks lane; settlement range under review."])],
      tag="wp-attachment")
    # SSNs to redact: in an email body and in a CSV roster attached to a responsive email.
    ssn1 = f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"
    M("luis", ["priya"], subject="Driver claim for the Kessler delay",
      body=f"Priya,\n\nThe driver on the delayed Kessler load was Victor Salas (SSN {ssn1}).\nHe is filing a "
           "claim for the extra hours.\n\nLuis", tag="ssn-body")
    roster = [["driver", "ssn", "terminal", "hours"]] + [
        [name, f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}", rng.choice(CITIES),
         rng.randint(20, 60)] for name in ["Victor Salas", "Ana Ruiz", "Ben Okafor", "Lena Brandt", "Tom Reed"]]
    M("priya", ["dana"], subject="Drivers on the delayed Kessler runs",
      body="Dana,\n\nRoster of the drivers on the Kessler runs that were delayed is attached.\n\nPriya",
      atts=[att_csv("driver_roster.csv", roster)], tag="ssn-csv")
    # A PDF attachment (imaged as it is) and a CSV produced natively.
    M("greg", ["priya"], cc=["marco"], subject="Amendment 3 countersigned",
      body=body_of(rng, ["rate"], "Priya", "Greg"),
      atts=[att_pdf("MSA Amendment 3.pdf", [["MASTER SERVICES AGREEMENT - AMENDMENT 3",
                                             "Between Kessler Industrial Inc. and Brightline Logistics LLC", "",
                                             "1. The rate increase schedule in Exhibit B is replaced.",
                                             "2. Fuel surcharge follows the DOE diesel index."],
                                            ["3. Late delivery penalties are capped at 4 percent of the invoice.",
                                             "", "Signed for Kessler: G. Holt", "Signed for Brightline: D. Whitfield"]]),
            att_csv("lane_volumes.csv", [["lane", "loads"]] + [[c, rng.randint(40, 300)] for c in CITIES])],
      tag="pdf-and-csv")
    # Non-ASCII subject and attachment name.
    M("zoe", ["priya"], cc=["dana"], subject="Zoë: révision tarifaire — rate increase",
      body=body_of(rng, ["rate"], "Priya", "Zoë"),
      atts=[att_xlsx("Prévision carburant 2024.xlsx", [["mois", "litres"]] + [[f"2024-{m:02d}", rng.randint(9000, 20000)]
                                                                              for m in range(1, 7)])],
      tag="nonascii")
    # A privileged family whose attachment also exists as a loose file.
    shared_audit = att_pdf("Warehouse audit checklist.pdf", [["WAREHOUSE AUDIT CHECKLIST - RENO",
                                                              "1. Cycle count reconciliation", "2. Dock door logs",
                                                              "3. Damaged goods cage"]])
    M("marco", ["sam"], subject="Audit checklist before we send it",
      body="Sam,\n\nCan you look at this before the auditors get it? Anything we should not say about the warehouse?\n\nMarco",
      atts=[shared_audit], tag="priv-with-loose-copy")
    col.loose.append({"custodian": "marco.reyes", "path": "files/Audit/Warehouse audit checklist.pdf",
                      "att": Att("Warehouse audit checklist.pdf", shared_audit.data, shared_audit.text, "pdf", 1),
                      "modified": datetime(2024, 3, 4, 16, 2, 11, tzinfo=UTC), "tag": "loose-copy-of-priv-att"})

    # Filler: responsive and non-responsive business mail, some out of range.
    people = ["dana", "marco", "priya", "luis", "amy", "greg", "oscar"]
    for i in range(46):
        topics = rng.choice([["noise"], ["noise", "noise"], ["fuel"], ["rate"], ["delay"], ["penalty", "noise"],
                             ["audit"], ["chargeback"], ["noise"], ["falcon"], ["noise", "noise"]])
        frm = rng.choice(people)
        others = [p for p in people if p != frm]
        to = rng.sample(others, rng.choice([1, 1, 2]))
        cc = rng.sample([p for p in others if p not in to], rng.choice([0, 0, 1]))
        if not any(PEOPLE[k][1].split("@")[0] in CUSTODIANS for k in [frm, *to, *cc]):
            to.append(rng.choice(["dana", "marco", "priya"]))
        rng_span = rng.choice([inr, inr, inr, inr, out_early, out_late])
        subj = rng.choice(["Update", "Quick question", "Follow-up", "This week", "Notes", "Re: schedule",
                           "FYI", "Checking in", "Lanes", "Next steps"]) + f" ({rng.choice(CITIES)})"
        atts = []
        if rng.random() < 0.18:
            atts = [att_docx(f"Notes {i:02d}.docx", [sentence(rng, TOPICS[t]) for t in topics] + ["End of notes."])]
        M(frm, to, cc, subject=subj, body=body_of(rng, topics, PEOPLE[to[0]][0].split()[0], PEOPLE[frm][0].split()[0]),
          atts=atts, enc=rng.choice(["7bit", "7bit", "7bit", "quoted-printable", "base64"]),
          when=col.when(*rng_span), tag="filler")

    # Loose files.
    def loose(cust, path, att, modified, tag="loose"):
        col.loose.append({"custodian": cust, "path": path, "att": att, "modified": utc(modified), "tag": tag})

    memo = att_docx("Falcon consolidation memo.docx", ["Project Falcon - consolidation memo",
                                                       sentence(rng, TOPICS["falcon"]),
                                                       "Savings estimate is in the finance model."])
    loose("dana.whitfield", "files/Falcon/Falcon consolidation memo.docx", memo, col.when(*inr))
    loose("priya.natarajan", "files/shared/Falcon consolidation memo.docx", memo, col.when(*inr), "loose-dup")
    loose("dana.whitfield", "files/Legal/Kessler dispute strategy.docx",
          att_docx("Kessler dispute strategy.docx", [WP_LEGEND, "Draft prepared for Helen Park.",
                                                      "Kessler chargebacks and delay claims: likely arguments.",
                                                      "Invoice penalty exposure estimate attached separately."]),
          col.when(*inr), "loose-wp")
    loose("marco.reyes", "files/Billing/Penalty reconciliation.xlsx",
          att_xlsx("Penalty reconciliation.xlsx", [["invoice", "penalty", "status"]] +
                   [[f"INV-24-{rng.randint(1000, 9999)}", rng.randint(100, 900), rng.choice(["open", "credited"])]
                    for _ in range(9)]), col.when(*inr))
    ssn2 = f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"
    loose("priya.natarajan", "files/Drivers/Salas claim notes.txt",
          att_txt("Salas claim notes.txt", "Claim notes - Victor Salas\n"
                  f"SSN on file: {ssn2}\nDelayed Kessler load out of Sparks; detention 11 hours.\n"
                  "Kessler delay documented by dispatch.\n"), col.when(*inr), "loose-ssn")
    loose("priya.natarajan", "files/Vendors/Reno warehouse audit plan.pdf",
          att_pdf("Reno warehouse audit plan.pdf", [["RENO WAREHOUSE AUDIT PLAN", sentence(rng, TOPICS["audit"]),
                                                     "Fieldwork: two weeks."], ["Sampling", sentence(rng, TOPICS["audit"]),
                                                                                 "Report due to Finance."]]),
          col.when(*inr))
    loose("marco.reyes", "files/Personal/holiday schedule.txt",
          att_txt("holiday schedule.txt", "Holiday rota\nDec 23 - Jan 2: Marco out\nCover: Amy\n"), col.when(*inr),
          "loose-nonresponsive")
    loose("dana.whitfield", "files/Old/2023 fuel plan.docx",
          att_docx("2023 fuel plan.docx", ["2023 fuel plan", "The fuel surcharge model for 2023 lanes."]),
          col.when(*out_early), "loose-out-of-range")
    loose("marco.reyes", "files/Billing/Invoice schedule.docx",
          att_docx("Invoice schedule.docx", ["Invoice schedule for Kessler", sentence(rng, TOPICS["penalty"]),
                                             "Chargeback disputes go to Amy."]), col.when(*inr))
    return col


# --- the protocol applied to the ground truth --------------------------------------------

class Doc:
    """One processed document (a family member)."""

    def __init__(self, kind, custodian, family_date, **kw):
        self.kind, self.custodian, self.family_date = kind, custodian, family_date
        self.__dict__.update(kw)


def search(text: str) -> list[str]:
    ts = docfmt.tokens(text)
    return [tid for tid, expr in SEARCH_TERMS if docfmt.compile_query(expr)(ts)]


def process(col: Collection) -> dict:
    # Families from every copy, deduplicated on the protocol hash in custodian order.
    families: dict[str, dict] = {}
    for cust in CUSTODIANS:
        for _raw, meta in col.copies.get(cust, []):
            m: Msg = meta["msg"]
            h = m.hash(with_bcc=meta["bcc"])
            fam = families.setdefault("E" + h, {"type": "email", "msg": m, "bcc": meta["bcc"], "hash": h,
                                                "custodians": [], "date": utc(m.sent)})
            if cust not in fam["custodians"]:
                fam["custodians"].append(cust)
        for lf in [x for x in col.loose if x["custodian"] == cust]:
            h = lf["att"].md5
            fam = families.setdefault("L" + h, {"type": "loose", "loose": lf, "hash": h, "custodians": [],
                                                "date": lf["modified"]})
            if cust not in fam["custodians"]:
                fam["custodians"].append(cust)
    docs_by_family = {}
    for key, fam in families.items():
        members = []
        if fam["type"] == "email":
            m = fam["msg"]
            members.append(email_doc(m, fam, "Email", fam["bcc"]))
            for a in m.atts:
                members.append(att_doc(a, fam, m))
                if a.email is not None:
                    for b in a.email.atts:
                        members.append(att_doc(b, fam, m))
        else:
            lf = fam["loose"]
            a = lf["att"]
            members.append(Doc("Loose", fam["custodians"][0], fam["date"], filename=a.filename, md5=a.md5,
                               text=a.text, fkind=a.kind, data=a.data, pages=a.pages, tag=lf["tag"],
                               subject="", frm="", to=[], cc=[], bcc=[], mid="", key="L|" + a.md5))
        for d in members:
            d.custodians = fam["custodians"]
            d.hits = search(d.text)
        docs_by_family[key] = members

    in_range = {k for k, f in families.items() if RANGE[0] <= f["date"] <= RANGE[1]}
    hits = {tid: set() for tid, _ in SEARCH_TERMS}
    for k in in_range:
        for d in docs_by_family[k]:
            for t in d.hits:
                hits[t].add(d.key)
    responsive = sorted((k for k in in_range if any(d.hits for d in docs_by_family[k])),
                        key=lambda k: (families[k]["date"], families[k]["hash"]))
    report = []
    for tid, expr in SEARCH_TERMS:
        fam_docs = {d.key for k in in_range if any(d.key in hits[tid] for d in docs_by_family[k])
                    for d in docs_by_family[k]}
        others = set().union(*(hits[t] for t, _ in SEARCH_TERMS if t != tid))
        report.append({"term_id": tid, "query": expr, "documents": len(hits[tid]), "families": len(fam_docs),
                       "unique_documents": len(hits[tid] - others)})

    counsel = {a for _, a, _ in COUNSEL_LIST if not a.startswith("@")}
    counsel_domains = {a[1:] for _, a, _ in COUNSEL_LIST if a.startswith("@")}

    def is_counsel(addr):
        return addr in counsel or addr.split("@")[1] in counsel_domains

    produced, priv_log = [], []
    for k in responsive:
        members = docs_by_family[k]
        top = members[0]
        withheld_family = False
        if top.kind == "Email":
            parts = [top.frm, *top.to, *top.cc, *top.bcc]
            withheld_family = any(is_counsel(a) for a in parts) and all(
                is_counsel(a) or a.endswith("@" + DOMAIN) for a in parts)
        elif WP_LEGEND in top.text:
            withheld_family = True
        for d in members:
            d.redacted = bool(SSN.search(d.text))
            d.wp = WP_LEGEND in d.text
            d.native = d.fkind in ("xlsx", "csv") and not d.redacted
            d.slip = None
            if withheld_family:
                d.basis = "Attorney Work Product" if d.wp else "Attorney-Client Privilege"
                priv_log.append(d)
                continue
            if d.wp:
                d.slip, d.basis = "privilege", "Attorney Work Product"
                priv_log.append(d)
            elif d.native:
                d.slip = "native"
            produced.append(d)
    return {"families": families, "docs": docs_by_family, "responsive": responsive, "produced": produced,
            "priv_log": priv_log, "report": report, "in_range": in_range}


def email_doc(m: Msg, fam: dict, kind: str, bcc: bool, parent: Msg | None = None) -> Doc:
    key = f"E|{m.mid}|{'bcc' if bcc else ''}" if parent is None else None
    return Doc(kind, fam["custodians"][0], fam["date"], frm=m.addr(m.frm).lower(),
               to=[m.addr(k).lower() for k in m.to], cc=[m.addr(k).lower() for k in m.cc],
               bcc=[m.addr(k).lower() for k in m.bcc] if bcc else [], subject=" ".join(m.subject.split()),
               sent=utc(m.sent), mid=m.mid, md5=m.hash(with_bcc=bcc), text=m.search_text(), filename="",
               fkind="email", tag=m.tag, key=key, data=None, pages=0, body=norm_body(m.body))


def att_doc(a: Att, fam: dict, top: Msg) -> Doc:
    key = f"A|{top.mid}|{a.filename}"
    if a.email is not None:
        d = email_doc(a.email, fam, "Attachment", False, parent=top)
        d.key, d.filename, d.md5 = key, a.filename, a.md5
        return d
    return Doc("Attachment", fam["custodians"][0], fam["date"], filename=a.filename, md5=a.md5, text=a.text,
               fkind=a.kind, data=a.data, pages=a.pages, tag=top.tag, subject="", frm="", to=[], cc=[], bcc=[],
               mid="", key=key)


def sentinel(d: Doc) -> list[str]:
    """Words a complete rendering of the document must show (SSNs excluded)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'\-]{3,}", SSN.sub(" ", d.text))]
    return words[-3:] if words else []


def write_inputs(col: Collection, root: Path) -> None:
    base = root / "collection"
    for cust in CUSTODIANS:
        out = []
        for raw, meta in col.copies.get(cust, []):
            m = meta["msg"]
            stamp = utc(m.sent).strftime("%a %b %d %H:%M:%S %Y")
            lines = raw.split("\n")
            esc = "\n".join((">" + ln) if re.match(r"^>*From ", ln) else ln for ln in lines)
            out.append(f"From {PEOPLE[m.frm][1]} {stamp}\n{esc}\n")
        (base / cust).mkdir(parents=True, exist_ok=True)
        (base / cust / "mailbox.mbox").write_bytes("".join(out).encode("utf-8"))
    rows = []
    for lf in sorted(col.loose, key=lambda x: (x["custodian"], x["path"])):
        p = base / lf["custodian"] / lf["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(lf["att"].data)
        rows.append([lf["custodian"], f"{lf['custodian']}/{lf['path']}", lf["modified"].strftime("%Y-%m-%dT%H:%M:%SZ")])
    with open(root / "loose_files_manifest.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["custodian", "path", "last_modified_utc"])
        w.writerows(rows)
    (root / "search_terms.txt").write_text("".join(f"{t}\t{e}\n" for t, e in SEARCH_TERMS))
    with open(root / "counsel.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "address_or_domain", "role"])
        w.writerows(COUNSEL_LIST)


def reference(col: Collection, res: dict) -> dict:
    def doc_json(d: Doc) -> dict:
        j = {"key": d.key, "doctype": d.kind, "custodian": d.custodian, "allcustodians": d.custodians,
             "filename": d.filename, "md5": d.md5, "messageid": d.mid if d.kind == "Email" or d.fkind == "email" else "",
             "from": d.frm, "to": d.to, "cc": d.cc, "bcc": d.bcc, "subject": d.subject,
             "date": d.family_date.strftime("%m/%d/%Y"), "time": d.family_date.strftime("%H:%M:%S"),
             "redacted": d.redacted, "native": d.native, "slip": d.slip, "tag": d.tag, "ext": d.fkind,
             "pdf_pages": d.pages, "sentinel": sentinel(d)}
        if d.fkind == "email":
            j["date"], j["time"] = d.sent.strftime("%m/%d/%Y"), d.sent.strftime("%H:%M:%S")
        if d.kind == "Loose":
            j["date"], j["time"] = d.family_date.strftime("%m/%d/%Y"), d.family_date.strftime("%H:%M:%S")
        j["family"] = None
        return j

    fam_of = {}
    for k in res["responsive"]:
        for d in res["docs"][k]:
            fam_of[d.key] = k
    produced = []
    for d in res["produced"]:
        j = doc_json(d)
        j["family"] = res["docs"][fam_of[d.key]][0].key
        produced.append(j)
    plog = []
    for d in res["priv_log"]:
        j = doc_json(d)
        j["basis"] = d.basis
        j["family"] = res["docs"][fam_of[d.key]][0].key
        j["parent_messageid"] = res["docs"][fam_of[d.key]][0].mid
        plog.append(j)
    ssns = sorted({s for fam in res["docs"].values() for d in fam for s in SSN.findall(d.text)})
    produced_text = "\n".join(d.text for d in res["produced"] if d.slip != "privilege")
    withheld_phrases = sorted({p for d in res["priv_log"] for p in privileged_phrases(d, produced_text)})
    tags = {}
    for k, fam in res["families"].items():
        top = res["docs"][k][0]
        tags.setdefault(top.tag, []).append({"key": top.key, "responsive": k in res["responsive"],
                                             "in_range": k in res["in_range"]})
    dup_sets = []
    for k, fam in res["families"].items():
        if len(fam["custodians"]) > 1 and k in res["responsive"]:
            dup_sets.append({"key": res["docs"][k][0].key, "custodians": fam["custodians"]})
    return {"canary": CANARY, "bates_prefix": BATES_PREFIX, "bates_start": BATES_START, "volume": VOLUME,
            "produced": produced, "privilege_log": plog, "search_report": res["report"], "ssns": ssns,
            "withheld_phrases": withheld_phrases, "tags": tags, "duplicates": dup_sets}


def privileged_phrases(d: Doc, produced_text: str) -> list[str]:
    """Sentences of withheld content that appear in no produced document: they must not leak."""
    return [ln.strip() for ln in d.text.split("\n")
            if len(ln.strip()) >= 40 and ln.strip() not in produced_text and not SSN.search(ln)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    col = build(rng)
    res = process(col)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    write_inputs(col, out / "inputs")
    ref = reference(col, res)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
