"""Byte-stable writers for the collection's native files (DOCX, XLSX, PDF) and the protocol's
search syntax. Shared by generate.py (which writes the inputs and the reference) and nothing
else: the zip members carry a fixed timestamp so that the files reproduce byte for byte."""

from __future__ import annotations

import io
import re
import zipfile
from xml.sax.saxutils import escape

ZIP_TIME = (2024, 1, 2, 9, 0, 0)


def _zip(members: list[tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data.encode("utf-8"))
    return buf.getvalue()


_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFDOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"


def docx(paragraphs: list[str]) -> bytes:
    body = "".join(
        f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>' for p in paragraphs
    )
    return _zip([
        ("[Content_Types].xml", _XML + (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.document.main+xml"/></Types>')),
        ("_rels/.rels", _XML + f'<Relationships xmlns="{_RELS}"><Relationship Id="rId1" '
                              f'Type="{_OFFDOC}" Target="word/document.xml"/></Relationships>'),
        ("word/document.xml", _XML + (
            '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            f"<w:body>{body}</w:body></w:document>")),
    ])


def _col(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def xlsx(rows: list[list[object]], sheet: str = "Sheet1") -> bytes:
    cells = []
    for r, row in enumerate(rows, start=1):
        out = []
        for c, v in enumerate(row):
            ref = f"{_col(c)}{r}"
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(f'<c r="{ref}"><v>{v}</v></c>')
            else:
                out.append(f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{escape(str(v))}</t></is></c>')
        cells.append(f'<row r="{r}">{"".join(out)}</row>')
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel_ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    return _zip([
        ("[Content_Types].xml", _XML + (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.worksheet+xml"/></Types>')),
        ("_rels/.rels", _XML + f'<Relationships xmlns="{_RELS}"><Relationship Id="rId1" '
                              f'Type="{_OFFDOC}" Target="xl/workbook.xml"/></Relationships>'),
        ("xl/workbook.xml", _XML + (
            f'<workbook xmlns="{ns}" xmlns:r="{rel_ns}"><sheets>'
            f'<sheet name="{escape(sheet)}" sheetId="1" r:id="rId1"/></sheets></workbook>')),
        ("xl/_rels/workbook.xml.rels", _XML + (
            f'<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')),
        ("xl/worksheets/sheet1.xml", _XML + f'<worksheet xmlns="{ns}"><sheetData>{"".join(cells)}</sheetData></worksheet>'),
    ])


def _pdf_str(s: str) -> str:
    return "(" + s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf(pages: list[list[str]]) -> bytes:
    """A text PDF, one list of lines per page, Helvetica 11 pt (ASCII text only)."""
    objs: list[bytes] = []
    n_pages = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n_pages))
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        text = " T* ".join(f"{_pdf_str(line)} Tj" for line in lines)
        stream = f"BT /F1 11 Tf 14 TL 72 720 Td {text} ET".encode("latin-1")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    f"/Contents {5 + 2 * i} 0 R >>".encode())
        objs.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for k, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# --- the protocol's search syntax -------------------------------------------------------

TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def _lex(expr: str) -> list[str]:
    return re.findall(r'"[^"]*"|\(|\)|[^\s()"]+', expr)


def _term_match(term: str, tok: str) -> bool:
    term = term.lower()
    return tok.startswith(term[:-1]) if term.endswith("*") else tok == term


def compile_query(expr: str):
    """expr -> predicate(tokens) for: words, word*, "phrases", A w/N B, AND, OR, ( )."""
    toks = _lex(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def atom():
        t = take()
        if t == "(":
            e = or_expr()
            assert take() == ")"
            return e
        if t.startswith('"'):
            words = tokens(t.strip('"'))
            return lambda ts: any(ts[i:i + len(words)] == words for i in range(len(ts) - len(words) + 1))
        nxt = peek()
        if nxt is not None and re.fullmatch(r"w/\d+", nxt.lower()):
            n = int(take()[2:])
            other = take()
            def prox(ts, a=t, b=other, n=n):
                ia = [i for i, x in enumerate(ts) if _term_match(a, x)]
                ib = [i for i, x in enumerate(ts) if _term_match(b, x)]
                return any(abs(i - j) <= n for i in ia for j in ib)
            return prox
        return lambda ts, a=t: any(_term_match(a, x) for x in ts)

    def and_expr():
        parts = [atom()]
        while peek() == "AND":
            take()
            parts.append(atom())
        return lambda ts: all(p(ts) for p in parts)

    def or_expr():
        parts = [and_expr()]
        while peek() == "OR":
            take()
            parts.append(and_expr())
        return lambda ts: any(p(ts) for p in parts)

    pred = or_expr()
    assert pos == len(toks), f"unparsed query tail in {expr!r}"
    return pred
