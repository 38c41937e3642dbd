"""How an agent-written file is shown: only a raster image whose bytes match its name, or UTF-8
text sent as text/plain, is shown in the browser; everything else (SVG, HTML, XML, PDF, binary)
is a download. The headers forbid sniffing and run the response in a sandbox with no sources."""

from __future__ import annotations

import os
from urllib.parse import quote

FILE_CSP = "default-src 'none'; sandbox"
PAGE_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
TRIAL_PAGE_CSP = PAGE_CSP + "; frame-src 'self'"  # the recording's player, framed beside the steps
PLAYER_CSP = ("default-src 'none'; style-src 'unsafe-inline'; media-src 'self'; base-uri 'none'; "
              "form-action 'none'; frame-ancestors 'self'")
RASTER = {  # suffix: (content type, signatures its first bytes must start with)
    ".png": ("image/png", (b"\x89PNG\r\n\x1a\n",)),
    ".jpg": ("image/jpeg", (b"\xff\xd8\xff",)),
    ".jpeg": ("image/jpeg", (b"\xff\xd8\xff",)),
    ".gif": ("image/gif", (b"GIF87a", b"GIF89a")),
}
INLINE_MAX_BYTES = 8 * 1024 * 1024  # larger files are streamed as downloads, never held in memory
MARKUP = {".svg", ".svgz", ".html", ".htm", ".xhtml", ".xht", ".xml", ".xsl", ".xslt", ".shtml",
          ".mht", ".mhtml", ".js", ".mjs", ".css", ".pdf"}


def file_headers(name: bytes, data: bytes | None) -> dict[str, str]:
    """Headers for serving the file called `name` whose content is `data` (None: too large to
    show, a download)."""
    suffix = os.path.splitext(name)[1].decode("ascii", "replace").lower()
    ctype, inline = "application/octet-stream", False
    if data is None:
        pass
    elif suffix in RASTER and data.startswith(RASTER[suffix][1]):
        ctype, inline = RASTER[suffix][0], True
    elif suffix not in MARKUP and _is_text(data):
        ctype, inline = "text/plain; charset=utf-8", True
    disposition = "inline" if inline else "attachment"
    return {
        "Content-Type": ctype,
        "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(name, safe='')}",
        "Content-Security-Policy": FILE_CSP,
        "Cross-Origin-Resource-Policy": "same-origin",
        "Cache-Control": "no-store",
    }


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
