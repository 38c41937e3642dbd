"""The HTML report generated from real runs, parsed; exports; compare of oracle and nop."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_cli, run_json

pytestmark = pytest.mark.usefixtures("base_env_ready")


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.tables = 0
        self.svgs = 0
        self.external: list[str] = []
        self.details: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self._in_h2 = tag == "h2"
        self.tables += tag == "table"
        self.svgs += tag == "svg"
        if tag == "details":
            self.details.append(a.get("id") or "")
        for key in ("src", "href"):
            value = a.get(key) or ""
            if value.startswith(("http:", "https:", "//")) or (tag in ("script", "link") and value):
                self.external.append(value)

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self.headings.append(data.strip())
            self._in_h2 = False


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("runs")
    oracle, nop = base / "oracle", base / "nop"
    run_json("run", COLUMN_TOTAL, "--agent", "oracle", "--attempts", "3", "--out", oracle)
    run_json("run", COLUMN_TOTAL, "--agent", "nop", "--attempts", "3", "--out", nop)
    return oracle, nop


def test_html_report_is_self_contained_and_complete(runs, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    run_cli("report", *runs, "--html", out)
    text = out.read_text()
    page = Page()
    page.feed(text)
    for section in ("Leaderboard", "By tier and cluster", "Cost versus score", "Failures",
                    "Use of the professional software", "Tasks", "Trials"):
        assert section in page.headings
    assert page.external == []
    assert page.svgs >= 2  # heatmap and failure bars
    assert len(page.details) == 6 and all(d.startswith("t-") for d in page.details)
    assert "inputs untampered" in text and "no_deliverable" in text
    board = _leaderboard(text)
    assert board["oracle"]["FPR [95% CI]"].split()[0] == "100.0%"
    assert board["nop"]["FPR [95% CI]"].split()[0] == "0.0%"
    assert board["oracle"]["MS [95% CI]"].split()[0] == "100.0%"
    assert board["nop"]["MS [95% CI]"].split()[0] == "0.0%"


class Rows(HTMLParser):
    """The cells of the first table in a piece of HTML, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and not self._done:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        self._done |= tag == "table"

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _leaderboard(text: str) -> dict[str, dict[str, str]]:
    """The leaderboard's rows by agent, each cell under its column's heading."""
    rows = Rows()
    rows.feed(text.split("<h2>Leaderboard</h2>", 1)[1])
    header, *body = rows.rows
    return {row[0]: dict(zip(header, row, strict=True)) for row in body}


def test_exports(runs, tmp_path: Path) -> None:
    run_cli("report", *runs, "--csv", tmp_path / "b.csv", "--json", tmp_path / "m.json")
    board = list(csv.DictReader((tmp_path / "b.csv").open()))
    assert {r["agent"]: float(r["fpr"]) for r in board} == {"oracle": 1.0, "nop": 0.0}
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["overall"]["trials"] == 6
    assert metrics["failures"]["by_category"]["no_deliverable"] == 3
    no_args = run_cli("report", *runs, check=False)
    assert no_args.returncode == 2 and "--html" in no_args.stderr


def test_show_metrics_json(runs) -> None:
    shown = run_json("show", *runs)
    board = {e["cell"]: e for e in shown["metrics"]["leaderboard"]}
    assert board["oracle"]["pass_at_k"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert board["nop"]["fpr"]["value"] == 0.0
    assert shown["metrics"]["software_usage"]["oracle"]["used_share"] == 1.0


def test_compare_oracle_and_nop(runs) -> None:
    cmp = run_json("compare", *runs)["a_minus_b"]
    assert cmp["shared_tasks"] == 1
    assert cmp["fpr_diff"]["value"] == 1.0
    assert cmp["mcnemar"] == {"pairs": 3, "a_only": 3, "b_only": 0, "p_value": 0.25}
    human = run_cli("compare", *runs).stdout
    assert "McNemar" in human


def _section_rows(text: str, heading: str) -> list[list[str]]:
    """The table rows (cell texts) of the report section under an <h2> heading."""
    section = text.split(f"<h2>{heading}</h2>", 1)[1].split("<h2>", 1)[0]
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", section)]
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in row] for row in rows if row]


def test_tier_and_cluster_figures_are_per_agent(tmp_path: Path) -> None:
    """oracle and nop in one run: 100 % and 0 % per tier and cluster, never a pooled 50 %."""
    experiment = tmp_path / "both.yaml"
    experiment.write_text(f"tasks: [{COLUMN_TOTAL}]\nagents:\n  - name: oracle\n  - name: nop\n")
    run = tmp_path / "run"
    ran = run_json("run", "--config", experiment, "--out", run)
    shown = run_json("show", run)
    for view in (ran["metrics"], shown["metrics"]):
        board = {e["agent"]: e for e in view["leaderboard"]}
        for agent, fpr in (("oracle", 1.0), ("nop", 0.0)):
            assert board[agent]["by_tier"]["near-term"]["fpr"]["value"] == fpr
            assert board[agent]["by_cluster"]["other"]["fpr"]["value"] == fpr
    html = tmp_path / "report.html"
    run_cli("report", run, "--html", html)
    opening = html.read_text().split("<h2>", 1)[0]
    assert "FPR" not in opening and "50.0%" not in opening  # no figure pooled over oracle and nop
    rows = _section_rows(html.read_text(), "By tier and cluster")
    assert rows == [
        ["oracle", "near-term", "1", "100.0%", "100.0%"],
        ["nop", "near-term", "1", "0.0%", "0.0%"],
        ["oracle", "Other", "1", "100.0%", "100.0%"],
        ["nop", "Other", "1", "0.0%", "0.0%"],
    ]
    assert sorted(_viewer_runs_rows(run)) == [
        ["run", "nop", "1", "1", "0.0%", "0.0%"],
        ["run", "oracle", "1", "1", "100.0%", "100.0%"],
    ]


def _viewer_runs_rows(run: Path) -> list[list[str]]:
    """The rows of `lastexam view`'s list of runs, fetched from a real viewer."""
    import subprocess

    import httpx

    from conftest import LASTEXAM, ROOT

    proc = subprocess.Popen([*LASTEXAM, "view", str(run), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        text = httpx.get(url, timeout=30).text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", text)]
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in row] for row in rows if row]
