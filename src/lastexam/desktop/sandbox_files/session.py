"""lastexam desktop session: the first process of a desktop trial's sandbox, run by Debian's
python3 in isolated mode (-I: the usage hook on PYTHONPATH is ignored) and without the
exec-log shim, so that nothing of the desktop shows in the agent's exec log.

    session.py CONFIG_JSON -- AGENT_COMMAND...   start the desktop, run the agent, stop
    session.py --launch N                        start declared app N as the agent would

Starts Xvfb on :0 (waiting on -displayfd), openbox (waiting for it to claim the screen),
the window monitor, the screen recorder and the tint2 panel, then runs the agent's command
with DISPLAY=:0 and the exec-log shim restored, and exits with its status once the recording
is finalised. Whatever is left dies with the sandbox's pid namespace.
"""

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import time

FILES = os.path.dirname(os.path.abspath(__file__))
RUNTIME = "/tmp/.lastexam-desktop"  # in the sandbox's private /tmp
AGENT_ENV = RUNTIME + "/agent-env.json"
APPS = RUNTIME + "/apps.json"
DISPLAY = ":0"
PRELOAD_VAR = "LASTEXAM_DESKTOP_PRELOAD"  # the shim's path, handed to the agent as LD_PRELOAD
DESKTOP_FAILED = 3  # exit status when the desktop could not start (the agent never ran)
STOP_WAIT_S = 5.0
ROOT_COLOUR = "#5e81ac"
MIN_RECORDING_S = 1.0  # a recording stopped sooner may hold no frame at all
RECORDER_START_S = 5.0


class DesktopError(Exception):
    pass


LOG = sys.stderr  # the desktop folder's session.log once the session runs


def log(msg):
    LOG.write(f"{time.time():.3f} {msg}\n")
    LOG.flush()


def desktop_env():
    """What desktop processes see: the system's tools, no shim, no usage hook."""
    keep = ("HOME", "USER", "LANG", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    return {**env, "PATH": "/usr/bin:/bin", "DISPLAY": DISPLAY}


def agent_env():
    env = {k: v for k, v in os.environ.items() if k != PRELOAD_VAR}
    if os.environ.get(PRELOAD_VAR):
        env["LD_PRELOAD"] = os.environ[PRELOAD_VAR]
    env["DISPLAY"] = DISPLAY
    return env


def start_x(size, timeout):
    # Made here, not by Xvfb (which makes it only as root): its socket then also exists as a
    # file, beside the abstract one.
    os.makedirs("/tmp/.X11-unix", exist_ok=True)
    os.chmod("/tmp/.X11-unix", 0o1777)
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", DISPLAY, "-screen", "0", f"{size}x24", "-nolisten", "tcp", "-noreset",
         "-displayfd", str(w)],
        env=desktop_env(), stdin=subprocess.DEVNULL, stdout=LOG, stderr=LOG, pass_fds=(w,),
    )
    os.close(w)
    got = b""
    end = time.monotonic() + timeout
    try:
        while not got.endswith(b"\n"):
            left = end - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                raise DesktopError("Xvfb did not become ready")
            chunk = os.read(r, 64)
            if not chunk:
                raise DesktopError(f"Xvfb exited ({proc.poll()}) before it was ready")
            got += chunk
    finally:
        os.close(r)
    return proc


def wait_for(display, ready, timeout, what):
    """Wait, on X events (not sleeps), until ready() holds."""
    end = time.monotonic() + timeout
    while not ready():
        left = end - time.monotonic()
        if left <= 0:
            raise DesktopError(f"{what} did not become ready")
        if display.pending_events() == 0:
            select.select([display.fileno()], [], [], min(left, 0.25))
        while display.pending_events():
            display.next_event()


def write_launchers(apps, wm_menu):
    """The panel's launchers and the desktop menu (right click), one entry per declared app."""
    os.makedirs(RUNTIME + "/apps", exist_ok=True)
    with open(APPS, "w") as f:
        json.dump(apps, f)
    items = []
    paths = []
    for i, app in enumerate(apps):
        command = f"/usr/bin/python3 -I {FILES}/session.py --launch {i}"
        path = f"{RUNTIME}/apps/{i:02d}.desktop"
        name = app["name"]
        with open(path, "w") as f:
            f.write("[Desktop Entry]\nType=Application\n"
                    f"Name={name}\nExec={command}\nIcon={app['wm_class'].lower()}\n")
        paths.append(path)
        label = name.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
        items.append(f'<item label="{label}"><action name="Execute"><command>{command}'
                     "</command></action></item>")
    with open(wm_menu, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<openbox_menu>'
                '<menu id="root-menu" label="Applications">' + "".join(items)
                + "</menu></openbox_menu>\n")
    with open(f"{FILES}/tint2rc") as f:
        rc = f.read()
    rc += "".join(f"launcher_item_app = {p}\n" for p in paths)
    with open(RUNTIME + "/tint2rc", "w") as f:
        f.write(rc)


def start_wm(display):
    from Xlib import X

    root = display.screen().root
    check = display.intern_atom("_NET_SUPPORTING_WM_CHECK")
    root.change_attributes(event_mask=X.PropertyChangeMask | X.SubstructureNotifyMask)
    display.flush()
    with open(f"{FILES}/openbox-rc.xml") as f:
        rc = f.read().replace("@MENU@", RUNTIME + "/menu.xml")
    with open(RUNTIME + "/openbox-rc.xml", "w") as f:
        f.write(rc)
    proc = subprocess.Popen(
        ["openbox", "--config-file", RUNTIME + "/openbox-rc.xml"],
        env=desktop_env(), stdin=subprocess.DEVNULL, stdout=LOG, stderr=LOG,
    )
    wait_for(display, lambda: root.get_full_property(check, X.AnyPropertyType) is not None,
             10, "openbox")
    return proc


def panel_mapped(display):
    from Xlib import X

    clients = display.intern_atom("_NET_CLIENT_LIST")
    root = display.screen().root

    def ready():
        prop = root.get_full_property(clients, X.AnyPropertyType)
        for wid in prop.value if prop else ():
            try:
                cls = display.create_resource_object("window", wid).get_wm_class()
            except Exception:
                continue
            if cls and "tint2" in cls:
                return True
        return False

    return ready


def start_recorder(cfg, size):
    folder = cfg["folder"]
    out = os.path.join(folder, "recording.webm")
    argv = [
        "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
        # The screen's format is known: no probing of the first frames before recording.
        "-probesize", "32", "-analyzeduration", "0",
        "-f", "x11grab", "-framerate", str(cfg["fps"]), "-video_size", size, "-draw_mouse", "1",
        "-i", DISPLAY,
        "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k",
        "-crf", "24", "-g", str(cfg["keyframe_every"]), "-pix_fmt", "yuv420p",
        # Written as it is made, a cluster every 2 s: a recording cut short still plays, all
        # but its last seconds; the file's first bytes tell that the recording has begun.
        "-flush_packets", "1", "-cluster_time_limit", "2000",
        "-fs", str(cfg["recording_bytes"]), "-f", "webm", out,
    ]
    return subprocess.Popen(argv, env=desktop_env(), stdin=subprocess.DEVNULL, stdout=LOG,
                            stderr=LOG)


def recording_begun(proc, cfg):
    """Wait until ffmpeg has written the file's first bytes (its header, flushed with the
    first frame): the recording then covers the agent from its first moment. Returns the
    recorder, or None if it did not start."""
    out = os.path.join(cfg["folder"], "recording.webm")
    end = time.monotonic() + RECORDER_START_S
    while proc.poll() is None and time.monotonic() < end:
        try:
            if os.stat(out).st_size > 0:
                break
        except OSError:
            pass
        time.sleep(0.02)
    else:
        log("the recorder did not start: going on without a recording")
        stop(proc, signal.SIGKILL, 1)
        return None
    with open(os.path.join(cfg["folder"], "recording.json"), "w") as f:
        json.dump({"started_at": time.time(), "fps": float(cfg["fps"])}, f)
    return proc


def stop(proc, sig, wait_s):
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(sig)
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except OSError:
        pass


def run(cfg, command):
    global LOG
    t0 = time.monotonic()
    LOG = open(os.path.join(cfg["folder"], "session.log"), "a", buffering=1)  # noqa: SIM115
    os.makedirs(RUNTIME, mode=0o700, exist_ok=True)
    with open(AGENT_ENV, "w") as f:
        json.dump(agent_env(), f)
    os.makedirs(os.path.join(cfg["folder"], "screens"), exist_ok=True)
    write_launchers(cfg["apps"], RUNTIME + "/menu.xml")
    size = cfg["screen"]
    recorder = monitor = None
    recording_since = 0.0
    try:
        start_x(size, 15)
        if cfg["fps"] > 0:  # started first: it takes longest to begin
            recorder = start_recorder(cfg, size)
        from Xlib import display as xdisplay

        display = xdisplay.Display(DISPLAY)
        start_wm(display)
        log(f"X server and window manager ready in {time.monotonic() - t0:.3f} s")
        subprocess.run(["xsetroot", "-solid", ROOT_COLOUR], env=desktop_env(),
                       stdin=subprocess.DEVNULL, stdout=LOG, stderr=LOG, check=False)
        monitor = subprocess.Popen(
            ["/usr/bin/python3", "-I", f"{FILES}/monitor.py",
             os.path.join(cfg["folder"], "windows.jsonl"), str(cfg["windows_log_bytes"]),
             str(cfg["windows_log_lines"])],
            env=desktop_env(), stdin=subprocess.DEVNULL, stdout=LOG, stderr=LOG,
        )
        subprocess.Popen(["tint2", "-c", RUNTIME + "/tint2rc"], env=desktop_env(),
                         stdin=subprocess.DEVNULL, stdout=LOG, stderr=LOG)
        try:
            wait_for(display, panel_mapped(display), 10, "the tint2 panel")
        except DesktopError as e:
            log(f"{e}: going on without it")
        log(f"panel ready in {time.monotonic() - t0:.3f} s")
        display.close()
        if recorder is not None:
            recorder = recording_begun(recorder, cfg)
            recording_since = time.monotonic()
        log(f"desktop ready in {time.monotonic() - t0:.3f} s")
    except Exception as e:  # Xlib's errors too: whatever it is, the agent must not start
        log(f"the desktop could not start: {type(e).__name__}: {e}")
        return DESKTOP_FAILED
    agent = subprocess.Popen(command, env=agent_env())
    stop_at = t0 + cfg["record_for_s"]
    while True:
        try:
            agent.wait(max(0.0, stop_at - time.monotonic()) if recorder else None)
            break
        except subprocess.TimeoutExpired:
            log("the time cap is near: the recording is finalised now")
            stop(recorder, signal.SIGINT, STOP_WAIT_S)
            recorder = None
    if recorder is not None:
        time.sleep(max(0.0, recording_since + MIN_RECORDING_S - time.monotonic()))
    stop(recorder, signal.SIGINT, STOP_WAIT_S)
    stop(monitor, signal.SIGTERM, 2)
    code = agent.returncode
    return code if code >= 0 else 128 - code


def launch(index):
    """An app started from the panel or the menu runs with the agent's environment, shim
    included: the exec log records it as the agent's own program."""
    with open(APPS) as f:
        app = json.load(f)[index]
    with open(AGENT_ENV) as f:
        env = json.load(f)
    argv = shlex.split(app["exec"])
    os.execvpe(argv[0], argv, env)


def main(argv):
    if len(argv) == 3 and argv[1] == "--launch":
        launch(int(argv[2]))
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: session.py CONFIG_JSON -- COMMAND...\n")
        return 2
    return run(json.loads(argv[1]), argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
