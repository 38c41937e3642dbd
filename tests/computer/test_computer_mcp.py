"""The computer MCP server (Contract B) on a real Xvfb, through the mcp SDK's stdio client."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

from PIL import Image

from .conftest import Computer, Display

TOOLS = {"key", "key_down", "key_up", "hold_key", "type", "mouse_move", "click", "drag",
         "mouse_down", "mouse_up", "scroll", "wait", "screenshot", "cursor_position",
         "get_screen_size"}


def png(result: dict) -> Image.Image:
    assert not result["error"], result["text"]
    [(mime, data)] = result["images"]
    assert mime == "image/png"
    raw = base64.b64decode(data)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(raw))


def test_the_tools_of_contract_b(computer: Computer) -> None:
    assert set(computer.tools) == TOOLS
    assert computer("get_screen_size")["text"].startswith("1280x800 pixels")


def test_coordinates_are_scaled_to_the_screen(computer: Computer, display: Display) -> None:
    assert not computer("click", x=500, y=500)["error"]
    assert display.pointer() == (640, 400)
    assert computer("cursor_position")["text"] == "x=500 y=500"
    computer("mouse_move", x=0, y=0)
    assert display.pointer() == (0, 0)
    computer("mouse_move", x=1000, y=1000)
    assert display.pointer() == (1279, 799)
    computer("mouse_move", x=250, y=750)
    assert display.pointer() == (320, 600)
    assert computer("cursor_position")["text"] == "x=250 y=750"
    computer("mouse_move", x=900, y=333)
    assert display.pointer() == (1152, 266)


def test_another_screen_size(toolchain: Path, screens: Path) -> None:
    display = Display("1024x768")
    try:
        computer = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)))
        assert computer("get_screen_size")["text"].startswith("1024x768 pixels")
        computer("mouse_move", x=500, y=500)
        assert display.pointer() == (512, 384)
        assert png(computer("screenshot")).size == (1024, 768)
        computer.lines.stop()
    finally:
        display.stop()


def test_keys_and_text_reach_the_focused_window(computer: Computer, display: Display,
                                                toolchain: Path) -> None:
    window = display.window(toolchain)
    try:
        assert computer("type", text="Hi, you 42!")["text"] == "typed 11 characters"
        typed = "".join(e["key"] for e in window.drain() if e["ev"] == "key"
                        and not e["key"].startswith("Shift"))
        assert typed == "Hi, you 42!"
        computer("type", text="one\ntwo\n")
        assert [e["key"] for e in window.drain() if e["ev"] == "key"] == [
            "o", "n", "e", "Return", "t", "w", "o", "Return"]
        assert computer("key", keys="ctrl+s Return")["text"] == "pressed ctrl+s Return"
        events = [e for e in window.drain() if e["ev"] == "key"]
        s = next(e for e in events if e["key"] == "s")
        assert s["state"] & 4  # ControlMask
        assert events[-1]["key"] == "Return"
        computer("key", keys="enter /")  # a model's names for keys
        assert [e["key"] for e in window.drain() if e["ev"] == "key"] == ["Return", "/"]
        computer("key_down", key="shift")
        assert [(e["ev"], e["key"]) for e in window.drain()] == [("key", "Shift_L")]
        computer("key_up", key="shift")
        assert [(e["ev"], e["key"]) for e in window.drain()] == [("keyup", "Shift_L")]
        assert computer("hold_key", key="a", seconds=0.2)["text"] == "held a for 0.2 s"
        events = [(e["ev"], e["key"]) for e in window.drain()]
        assert events[0] == ("key", "a") and events[-1] == ("keyup", "a")
    finally:
        window.stop()


def test_buttons_reach_the_window_where_they_are_aimed(computer: Computer, display: Display,
                                                       toolchain: Path) -> None:
    window = display.window(toolchain)
    try:
        computer("click", x=100, y=200, button="right")
        assert [(e["ev"], e["button"], e["x"], e["y"]) for e in window.drain()] == [
            ("button", 3, 128, 160), ("buttonup", 3, 128, 160)]
        computer("click", x=500, y=500, count=2)
        assert [e["button"] for e in window.drain() if e["ev"] == "button"] == [1, 1]
        computer("scroll", x=500, y=500, direction="down", amount=4)
        assert [e["button"] for e in window.drain() if e["ev"] == "button"] == [5, 5, 5, 5]
        computer("scroll", x=500, y=500, direction="left", amount=1)
        assert [e["button"] for e in window.drain() if e["ev"] == "button"] == [6]
        computer("drag", x1=100, y1=100, x2=900, y2=500)
        events = [(e["ev"], e["button"], e["x"], e["y"]) for e in window.drain()]
        assert events == [("button", 1, 128, 80), ("buttonup", 1, 1152, 400)]
        computer("mouse_move", x=300, y=300)
        computer("mouse_down", button="middle")
        computer("mouse_up", button="middle")
        assert [(e["ev"], e["button"], e["x"]) for e in window.drain()] == [
            ("button", 2, 384), ("buttonup", 2, 384)]
    finally:
        window.stop()


def test_screenshots_are_the_screen_and_saved_in_turn(computer: Computer, display: Display,
                                                      toolchain: Path, screens: Path) -> None:
    window = display.window(toolchain)
    try:
        first = computer("screenshot")
        image = png(first)
        assert image.size == (1280, 800)
        assert image.convert("RGB").getpixel((640, 400)) == (255, 0, 0)  # the red window
        assert first["text"] == "saved screens/0001.png"
        assert (screens / "0001.png").read_bytes() == base64.b64decode(first["images"][0][1])
        assert computer("screenshot")["text"] == "saved screens/0002.png"
        unsaved = computer("screenshot", save=False)
        assert png(unsaved).size == (1280, 800) and "not saved" in unsaved["text"]
        assert sorted(p.name for p in screens.iterdir()) == ["0001.png", "0002.png"]
    finally:
        window.stop()


def test_a_planted_file_is_neither_followed_nor_overwritten(computer: Computer, screens: Path,
                                                            tmp_path: Path) -> None:
    assert computer("screenshot")["text"] == "saved screens/0001.png"
    victim = tmp_path / "victim.txt"
    victim.write_text("the agent's trap")
    (screens / "0002.png").symlink_to(victim)
    (screens / "0003.png").symlink_to(tmp_path / "absent.txt")
    (screens / "0004.png").write_bytes(b"planted")
    assert computer("screenshot")["text"] == "saved screens/0005.png"
    assert victim.read_text() == "the agent's trap"
    assert not (tmp_path / "absent.txt").exists()
    assert (screens / "0004.png").read_bytes() == b"planted"
    assert (screens / "0005.png").read_bytes().startswith(b"\x89PNG")


def test_the_screens_folder_is_made_when_absent(toolchain: Path, display: Display,
                                                tmp_path: Path) -> None:
    screens = tmp_path / "desktop" / "screens"
    computer = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)))
    assert computer("screenshot")["text"] == "saved screens/0001.png"
    assert (screens / "0001.png").is_file()
    computer.lines.stop()


def test_numbers_continue_after_the_highest_and_stop_at_the_cap(toolchain: Path, display: Display,
                                                                 screens: Path) -> None:
    (screens / "0041.png").write_bytes(b"an earlier server's")
    computer = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)))
    assert computer("screenshot")["text"] == "saved screens/0042.png"
    computer.lines.stop()
    (screens / "2000.png").write_bytes(b"the last one allowed")
    computer = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)))
    full = computer("screenshot")
    assert png(full).size == (1280, 800)
    assert full["text"].startswith("not saved: the limit of 2000")
    assert not any(p.name > "2000.png" for p in screens.iterdir())
    computer.lines.stop()


def test_bad_arguments_are_error_results_and_the_server_lives(computer: Computer,
                                                              display: Display) -> None:
    bad = [
        ("click", {"x": 1001, "y": 5}, "less than or equal to 1000"),
        ("click", {"x": -1, "y": 5}, "greater than or equal to 0"),
        ("mouse_move", {"x": "left", "y": 5}, "valid integer"),
        ("click", {"x": 5, "y": 5, "button": "fourth"}, "'left', 'right' or 'middle'"),
        ("click", {"x": 5, "y": 5, "count": 4}, "less than or equal to 3"),
        ("scroll", {"x": 5, "y": 5, "direction": "sideways"}, "'up', 'down', 'left' or 'right'"),
        ("key", {"keys": "ctrl+nosuchkey"}, "unknown key 'nosuchkey'"),
        ("key", {"keys": "ctrl++"}, "malformed key combination"),
        ("key", {"keys": "  "}, "keys is empty"),
        ("key_down", {"key": "a b"}, "several keys"),
        ("type", {"text": "x" * 5001}, "at most 5000"),
        ("wait", {"seconds": 61}, "less than or equal to 60"),
        ("hold_key", {"key": "a", "seconds": 11}, "less than or equal to 10"),
        ("no_such_tool", {}, "no_such_tool"),
    ]
    for tool, args, message in bad:
        result = computer(tool, **args)
        assert result["error"], (tool, args)
        assert message in result["text"], (tool, args, result["text"])
    assert display.pointer() == (640, 400)  # Xvfb's start: nothing moved it
    assert computer("get_screen_size")["text"].startswith("1280x800")
    assert computer("wait", seconds=0)["text"] == "waited 0 s"


def test_no_display_is_an_error_result(toolchain: Path, screens: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": ":999", "LASTEXAM_SCREENS_DIR": str(screens)}
    computer = Computer(toolchain, env)
    result = computer("screenshot")
    assert result["error"] and "cannot reach the X display :999" in result["text"]
    assert os.listdir(screens) == []
    computer.lines.stop()
