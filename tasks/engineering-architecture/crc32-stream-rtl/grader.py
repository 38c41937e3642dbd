"""Grader for crc32-stream-rtl.

The agent's rtl/*.v is simulated with Icarus Verilog in the grader's own test benches, driven
by hidden stimulus at hidden parameter values; the traces are judged in Python against a
model of the specification and golden CRCs from zlib. Verilator lints it and Yosys
synthesises it; Yosys's netlist is simulated too and must print the RTL's trace, so the design
simulated is the design signed off.
"""

from __future__ import annotations

import re
import resource
import signal
import subprocess
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, no_problems, read_text

REQUIRED = ["rtl/sync_fifo.v", "rtl/crc32_stream.v"]
# Each tool run is limited in CPU seconds, not wall seconds, so that a loaded machine does not fail
# a valid design (a table-driven engine's netlist is slow to synthesise and simulate); the wall
# limit only catches a tool that sleeps. Thirteen runs at most stay inside grader_timeout_s.
TOOL_CPU_S = 40
TOOL_WALL_S = 80
CRUX_FULL_WORD_SHARE = 0.9
LINE_RATE_SHARE = 0.9  # words per clock while the source streams freely and m_ready is high
RESULT_LATENCY = 16  # clocks from a packet's last word leaving the FIFO to its result, as instructed
NETLIST_CYCLES = 3000  # the free-streaming phase and a stretch of back-pressure; gate level is slow
# Code that one tool sees and another does not (the simulated design must be the signed-off one),
# and file access: the agent's RTL runs in the grading sandbox, beside the reference.
TOOL_ONLY = re.compile(r"`(?:ifn?def|elsif)\s+(?:VERILATOR|verilator\w*|SYNTHESIS|YOSYS|__ICARUS__\w*|IVERILOG)\b"
                       r"|translate_(?:off|on)|synthesis\s+off|\$(?:fopen|fgets|fgetc|fscanf|fread|readmem[hb]|system)\b")

# The netlist simulated is Yosys's as written, but for its flip-flops: each module's processes that
# are one flip-flop on posedge clk are merged into one process, in their order (Icarus then wakes one
# process a clock rather than one a flip-flop; the gate-level run was most of a grading's CPU).
# The trace is the same when nothing can race: every process is such a flip-flop, and clk (which the
# bench changes alone; inputs change at the other edge) is read by nothing else, so at a rising clk
# every flip-flop reads inputs that are settled and writes nonblocking, after all have read; with no
# combinational loop the values the logic settles to do not depend on the order the registers
# change in; flip-flops that write one register, or overlapping parts of one, keep their own
# processes, in their order. Any other netlist is simulated as written.
# A loop is sought by Yosys's scc in the design flattened whole, which sees only gate cells: it must
# be left one module of gate cells (keep_hierarchy is unset first; a box, or a module kept anyway,
# is not looked into). Flattening joins a submodule's port to what it is connected to, where Icarus
# may have a one-way assignment: a loop of wires alone passes through a submodule that assigns a port
# as is, and an inout joins both ways; neither is seen by scc, so either is simulated as written.
FF_CLOCK = "  always @(posedge clk)"
CLOCK_ONLY = {"  input clk;", "  wire clk;", FF_CLOCK, "    .clk(clk),", "    .clk(clk)"}
NET_ID = r"(?:\\\S+ |[A-Za-z_][\w$]*)"  # an escaped identifier ends at a space
NET_OPERAND = rf"(?:{NET_ID}(?: ?\[\d+\])?|\d+'h[0-9a-fxz]+)"
# a line of a flip-flop: `if (c)` alone, or an assignment, maybe under `if (c)` and `else`
FF_LINE = re.compile(rf"    (?:  )*(?:else )?(?:if \(!?{NET_OPERAND}\)(?: |$))?(?:({NET_ID}) ?(\[\d+\])? <= {NET_OPERAND};)?")
NET_TOKEN = re.compile(r"\\(\S+)|[A-Za-z_][\w$]*")
ASSIGN = re.compile(r"  assign (.+) = (.+);")
OPERATOR = re.compile(r"[~!&|^?+\-*/%<>=()]")  # in an assignment whose escaped identifiers are taken out

# File names go into Yosys's script and the tools' command lines: a name with a space, a `;` or a
# leading `-` would run Yosys commands or set options (a macro only Yosys sees) of the agent's choosing.
SOURCE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.v")


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (TOOL_CPU_S, TOOL_CPU_S))


def run(cmd: list[str], cwd: Path) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                           timeout=TOOL_WALL_S, preexec_fn=_cpu_limit)
    except subprocess.TimeoutExpired:
        return -1, f"{cmd[0]} timed out after {TOOL_WALL_S} s (wall)"
    except OSError as e:
        return -1, f"{cmd[0]} could not start: {e}"
    if p.returncode == -signal.SIGXCPU:
        return p.returncode, f"{cmd[0]} used up its {TOOL_CPU_S} s of CPU"
    return p.returncode, p.stdout + p.stderr


def tail(text: str, n: int = 6) -> list[str]:
    return [line[:200] for line in text.strip().splitlines()[-n:]]


def collect_rtl(ctx: GradeContext, rtl: Path) -> tuple[list[Path], Outcome, str]:
    problems = []
    for name in REQUIRED:
        _, ok = read_text(ctx.out(name))
        if not ok:
            problems.append(f"{name}: {ok.message}")
    sources = sorted(ctx.out("rtl").glob("*.v")) if ctx.out("rtl").is_dir() else []
    texts: list[Path] = []
    joined = []
    for src in sources:
        if not SOURCE_NAME.fullmatch(src.name):
            problems.append(f"rtl/{src.name!r}: a file name the tools would read as commands or options")
            continue
        text, ok = read_text(src)
        if text is None:
            problems.append(f"rtl/{src.name}: {ok.message}")
            continue
        dest = rtl / src.name
        dest.write_text(text)
        texts.append(dest)
        joined.append(text)
    return texts, no_problems(problems, f"{len(texts)} Verilog files in rtl/", expected=REQUIRED), "\n".join(joined)


def compile_sim(rtl: list[Path], tb: str, top: str, params: dict[str, int], work: Path) -> tuple[Path | None, Outcome]:
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{top}.v").write_text(tb)
    cmd = ["iverilog", "-g2005", "-o", str(work / "sim.vvp"), "-s", top]
    cmd += [f"-P{top}.{k}={v}" for k, v in sorted(params.items())]
    cmd += [str(work / f"{top}.v"), *map(str, rtl)]
    rc, log = run(cmd, work)
    if rc != 0:
        return None, Outcome(False, f"iverilog failed with the {top} test bench", seen=tail(log))
    return work / "sim.vvp", Outcome(True, f"compiled with {top}")


def simulate(vvp: Path, tag: str, work: Path) -> list[list[str]]:
    rc, log = run(["vvp", "-n", str(vvp)], work)
    return [line.split()[1:] for line in log.splitlines() if line.startswith(tag + " ")]


def bit(s: str) -> int | None:
    return int(s) if s in ("0", "1") else None


def num(s: str, base: int = 10) -> int | None:
    try:
        return int(s, base)
    except ValueError:
        return None


def fifo_problems(trace: list[list[str]], stim: list[int], cfg: dict) -> list[str]:
    """Cycle-exact model: outputs depend only on the stored words; push and pop at the edge."""
    depth, af = cfg["DEPTH"], cfg["AF_THRESH"]
    if len(trace) != cfg["cycles"]:
        return [f"DEPTH={depth}: {len(trace)} of {cfg['cycles']} cycles simulated"]
    queue: list[int] | None = None
    problems = []
    for cyc, (row, word) in enumerate(zip(trace, stim, strict=False)):
        rst, in_valid, out_ready, data = word >> 14 & 1, word >> 13 & 1, word >> 12 & 1, word & 0xFFF
        if queue is not None and len(row) == 7:
            want = (int(len(queue) < depth), int(bool(queue)), queue[0] if queue else None, len(queue), int(len(queue) >= af))
            seen = (bit(row[2]), bit(row[3]), num(row[4], 16), num(row[5]), bit(row[6]))
            if want[2] is None:
                seen = (seen[0], seen[1], None, seen[3], seen[4])
            if seen != want:
                problems.append(f"DEPTH={depth} cycle {cyc}: in_ready,out_valid,out_data,count,almost_full "
                                f"expected {want}, seen {seen}")
        elif queue is not None:
            problems.append(f"DEPTH={depth} cycle {cyc}: unreadable trace line {row}")
        if rst:
            queue = []
        elif queue is not None:
            pop = out_ready and bool(queue)
            push = in_valid and len(queue) < depth
            if pop:
                queue.pop(0)
            if push:
                queue.append(data)
        if len(problems) >= 6:
            break
    return problems


def crc_results(trace: list[list[str]]) -> tuple[list[tuple[str, int | None]], list[str]]:
    """(results in order, problems of output stability under back-pressure)."""
    results, unstable = [], []
    prev = None
    for row in trace:
        if len(row) != 9:
            unstable.append(f"unreadable trace line {row}")
            continue
        cyc, s_valid, s_ready, m_valid, m_ready, crc, length, level, af = row
        if m_valid == "1" and m_ready == "1":
            results.append((crc.lower(), num(length, 16)))
        held = prev is not None and prev[3] == "1" and prev[4] == "0"
        if held and (m_valid != "1" or (crc, length) != (prev[5], prev[6])):
            unstable.append(f"cycle {cyc}: m_valid/m_crc/m_len changed before m_ready")
        prev = row
    return results, unstable


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    meta = ctx.reference_json("expected.json")
    tb_crc, tb_fifo = ctx.ref("tb_crc.v").read_text(), ctx.ref("tb_fifo.v").read_text()
    rtl_dir = ctx.scratch / "rtl"
    rtl_dir.mkdir(parents=True, exist_ok=True)
    rtl, found, source = collect_rtl(ctx, rtl_dir)
    r.gate("rtl/sync_fifo.v and rtl/crc32_stream.v are readable Verilog files", found)

    # Synthesis: a design Yosys cannot synthesise is not a deliverable (test-bench style code).
    stat = ctx.scratch / "stat.txt"
    rc, ylog = run(["yosys", "-q", "-p", f"read_verilog {' '.join(map(str, rtl))}; "
                    f"synth -top crc32_stream; tee -q -o {stat} stat"], ctx.scratch) if rtl else (1, "no RTL")
    synth_text = stat.read_text() if rc == 0 and stat.is_file() else ""
    r.gate("Yosys synthesises crc32_stream", Outcome(
        bool(synth_text), "synthesised" if synth_text else "yosys failed", seen=tail(ylog)))

    packets = meta["packets"]
    expected = [(p["crc"], p["len"]) for p in packets]
    runs = []
    for i, cfg in enumerate(meta["crc_configs"]):
        work = ctx.scratch / f"crc{i}"
        work.mkdir(parents=True, exist_ok=True)
        for name in ("crc_words.memh", "crc_pace.memh"):
            (work / name).write_text(ctx.ref(name).read_text())
        params = {**cfg, "NW": meta["crc_words"], "NC": meta["crc_cycles"], "RESET_CYCLES": meta["reset_cycles"]}
        vvp, compiled = compile_sim(rtl, tb_crc, "tb_crc", params, work) if rtl else (None, Outcome(False, "no RTL"))
        trace = simulate(vvp, "C", work) if vvp else []
        runs.append((cfg, compiled, trace, crc_results(trace)))
    r.gate("compiles in the grader's crc32_stream test bench", all_of([(f"DEPTH={c['DEPTH']}", o) for c, o, _, _ in runs]))
    cfg, _, rtl_trace, _ = runs[-1]
    r.gate(f"Yosys's netlist simulates as the RTL (DEPTH={cfg['DEPTH']}; no tool-only code, no file access)", all_of([
        ("tool-only code, file access", no_problems(sorted(set(TOOL_ONLY.findall(source))), "none")),
        ("netlist", no_problems(netlist_mismatches(rtl, cfg, rtl_trace, meta, ctx, tb_crc), "same trace in every cycle")),
    ]))
    last_word = [int(w, 16) >> 36 & 1 for w in ctx.ref("crc_words.memh").read_text().split()]
    r.gate(f"keeps up with line rate: >= {LINE_RATE_SHARE:.0%} of clocks take a word, results within "
           f"{RESULT_LATENCY} clocks", no_problems(line_rate_problems(runs, last_word, meta["free_stream_cycles"]),
                                                   "at line rate in every configuration"))

    def by_kind(kinds: set[str], field: int | None) -> Outcome:
        misses = []
        for cfg, _, _, (results, _) in runs:
            for n, ((crc, length), p) in enumerate(zip(expected, packets, strict=True)):
                if p["kind"] not in kinds:
                    continue
                seen = results[n] if n < len(results) else None
                want = (crc, length) if field is None else (crc, length)[field]
                got = seen if field is None or seen is None else seen[field]
                if got != want:
                    misses.append(f"DEPTH={cfg['DEPTH']} packet {n} ({p['len']} bytes): expected {want}, seen {got}")
        total = sum(p["kind"] in kinds for p in packets) * len(runs)
        return no_problems(misses, f"{total} results correct and in order", expected=f"{total} results")

    first = runs[0][3][0]
    full = [n for n, p in enumerate(packets) if p["kind"] == "full"]
    right = sum(n < len(first) and first[n][0] == expected[n][0] for n in full)
    r.gate(f"CRC-32 of at least {CRUX_FULL_WORD_SHARE:.0%} of whole-word packets right (default parameters)",
           Outcome(right >= CRUX_FULL_WORD_SHARE * len(full), f"{right} of {len(full)} right",
                   expected=f">= {CRUX_FULL_WORD_SHARE * len(full):.0f}", seen=right))
    r.check("CRC-32 of every whole-word packet, in order, under back-pressure", 2, by_kind({"full"}, 0))
    r.check("CRC-32 of every packet ending in a partial word (s_keep 0001/0011/0111)", 2, by_kind({"partial"}, 0))
    r.check("empty packets and keep=0000 tail words: CRC and length", 1, by_kind({"empty"}, None))
    r.check("m_len of every packet", 1, by_kind({"full", "partial", "empty"}, 1))
    r.check("m_valid, m_crc, m_len held until m_ready", 1, no_problems(
        [p for _, _, _, res in runs for p in res[1]], "stable under back-pressure"))

    lo, hi = meta["free_stream_cycles"]
    stalls = []
    for cfg, _, trace, _ in runs:
        for row in trace:
            if len(row) == 9 and lo <= (num(row[0]) or 0) < hi and row[1] == "1" and row[2] != "1":
                stalls.append(f"DEPTH={cfg['DEPTH']} cycle {row[0]}: s_ready low with m_ready held high")
    r.check("sustains one word per clock without back-pressure", 2, no_problems(
        stalls, f"no stall in cycles {lo}-{hi}" if runs[0][2] else "", expected="s_ready high throughout"))

    r.check("s_ready, level and almost_full agree with the FIFO contract", 1, no_problems(
        top_flag_problems(runs, meta["reset_cycles"]), "consistent in every cycle"))

    fifo_miss = []
    for cfg in meta["fifo_configs"]:
        work = ctx.scratch / f"fifo_{cfg['name']}"
        work.mkdir(parents=True, exist_ok=True)
        stim_text = ctx.ref(f"fifo_stim_{cfg['name']}.memh").read_text()
        (work / "fifo_stim.memh").write_text(stim_text)
        params = {"DEPTH": cfg["DEPTH"], "AF_THRESH": cfg["AF_THRESH"], "N": cfg["cycles"]}
        vvp, compiled = compile_sim(rtl, tb_fifo, "tb_fifo", params, work) if rtl else (None, Outcome(False, "no RTL"))
        if vvp is None:
            fifo_miss.append(f"DEPTH={cfg['DEPTH']}: {compiled.message}: {compiled.seen}")
            continue
        fifo_miss += fifo_problems(simulate(vvp, "T", work), [int(w, 16) for w in stim_text.split()], cfg)
    r.check("sync_fifo cycle-exact against the specification at hidden DEPTH/AF_THRESH", 2,
            no_problems(fifo_miss, "matches the model in every cycle"))

    waivers = re.findall(r"lint_off", source)
    rc, lint = run(["verilator", "--lint-only", "-Wall", "--top-module", "crc32_stream", *map(str, rtl)],
                   ctx.scratch) if rtl else (1, "no RTL")
    r.check("verilator --lint-only -Wall clean, without waivers", 1, all_of([
        ("lint", Outcome(rc == 0 and "%Warning" not in lint, "clean" if rc == 0 else "warnings", seen=tail(lint))),
        ("no waivers", Outcome(not waivers, "none" if not waivers else "waiver comments found", seen=waivers[:3])),
    ]))
    latches = re.findall(r"\$_?DLATCH\w*|\$_?SR_\w*|\$dlatch\w*", synth_text)
    latch_msg = "not synthesised" if not synth_text else f"{len(latches)} latch cells" if latches else "no latch cells"
    r.check("no latch in the synthesised netlist", 1, Outcome(
        bool(synth_text) and not latches, latch_msg, expected="no $_DLATCH_/$_SR_ cells", seen=sorted(set(latches))))
    return r


def netlist_mismatches(rtl: list[Path], cfg: dict, rtl_trace: list[list[str]], meta: dict,
                       ctx: GradeContext, tb_crc: str) -> list[str]:
    """Yosys's netlist at cfg, in the same bench for the first cycles: it must print the RTL's trace
    (m_crc and m_len only while m_valid)."""
    if not rtl:
        return ["no RTL"]
    work = ctx.scratch / "netlist"
    work.mkdir(parents=True, exist_ok=True)
    for name in ("crc_words.memh", "crc_pace.memh"):
        (work / name).write_text(ctx.ref(name).read_text())
    chparam = " ".join(f"-set {k} {v}" for k, v in sorted(cfg.items()))
    netlist, loops = work / "netlist.v", work / "loops.txt"
    rc, log = run(["yosys", "-q", "-p", f"read_verilog {' '.join(map(str, rtl))}; chparam {chparam} crc32_stream; "
                   f"synth -top crc32_stream; write_verilog -noattr {netlist}; tee -q -o {loops} log written; "
                   "setattr -mod -unset keep_hierarchy; setattr -unset keep_hierarchy; flatten; "
                   "select -assert-none =* =crc32_stream %d; select -assert-none t:* t:$_* %d; "
                   f"tee -q -a {loops} scc"], work)
    if rc != 0 and not loops.is_file():  # the netlist is whole once the checks after it are begun
        return ["yosys could not write the netlist: " + " / ".join(tail(log, 3))]
    cycles = min(NETLIST_CYCLES, meta["crc_cycles"])
    params = {**cfg, "NW": meta["crc_words"], "NC": cycles, "RESET_CYCLES": meta["reset_cycles"]}
    # The netlist is synthesised at cfg: its instance takes no parameters.
    tb = tb_crc.replace("crc32_stream #(.DEPTH(DEPTH), .AF_THRESH(AF_THRESH)) dut", "crc32_stream dut")
    # a module with processes left is skipped by scc, and then has no line of its own
    checks = loops.read_text() if rc == 0 else ""
    fast = merged_netlist(netlist.read_text(), "crc32_stream") if all(
        found in checks for found in ("Found 0 SCCs in module crc32_stream.", "Found 0 SCCs.")) else None
    if fast is not None:
        (work / "fast.v").write_text(fast)
    vvp, compiled = compile_sim([work / "fast.v" if fast is not None else netlist], tb, "tb_crc", params, work)
    if vvp is None and fast is not None:  # what iverilog says about the plain netlist is reported
        vvp, compiled = compile_sim([netlist], tb, "tb_crc", params, work)
    net_trace = simulate(vvp, "C", work) if vvp else []
    if not net_trace:
        return [f"the netlist did not simulate: {compiled.message} {compiled.seen or ''}"]
    problems = [] if len(net_trace) == cycles else [f"{len(net_trace)} of {cycles} netlist cycles simulated"]
    for a, b in zip(rtl_trace, net_trace, strict=False):
        if len(a) != 9 or len(b) != 9 or num(a[0]) is None or num(a[0]) < meta["reset_cycles"]:
            continue
        shown = [1, 2, 3, 4, 7, 8] + ([5, 6] if a[3] == "1" else [])
        if any(a[i].lower() != b[i].lower() for i in shown):
            problems.append(f"cycle {a[0]}: RTL {' '.join(a[1:])}, netlist {' '.join(b[1:])}")
        if len(problems) >= 6:
            break
    return problems


def merged_netlist(text: str, top: str) -> str | None:
    """Yosys's netlist with each module's flip-flops merged into one process (see FF_CLOCK),
    or None if it has anything else that could race."""
    lines = text.split("\n")
    for line in lines:
        if "clk" in line and line not in CLOCK_ONLY and not line.startswith("module ") \
                and any((m.group(1) or m.group(0)) == "clk" for m in NET_TOKEN.finditer(line)):
            return None
    if any(line.startswith("  inout ") for line in lines) or port_assigned_as_is(lines, top):
        return None
    # per module, its flip-flops: (first line, end, {(register, bit or "")} written)
    flops: list[list[tuple[int, int, set[tuple[str, str]]]]] = []
    for i, line in enumerate(lines):
        if line.startswith("module "):
            flops.append([])
        elif line.startswith("  always"):
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].startswith("    ")), len(lines))
            found = [m for body in lines[i + 1:end] if (m := FF_LINE.fullmatch(body))]
            # one statement: it starts with no `else`, goes on only nested or by `else`, ends closed
            if line != FF_CLOCK or not flops or not found or len(found) != end - i - 1 \
                    or found[0].group(0).lstrip().startswith("else") \
                    or not all(body.startswith(("     ", "    else")) for body in lines[i + 2:end]) \
                    or not found[-1].group(1):
                return None
            flops[-1].append((i, end, {(m.group(1), m.group(2) or "") for m in found if m.group(1)}))
    merged: dict[int, list[str]] = {}  # first line of a module's merged process -> its lines
    skip: set[int] = set()
    for module in flops:
        writers: dict[tuple[str, str], int] = {}
        for _, _, bits in module:
            for bit in bits:
                writers[bit] = writers.get(bit, 0) + 1
        # a register written whole somewhere and by the bit elsewhere
        overlap = {r for r, b in writers if not b} & {r for r, b in writers if b}
        alone = [(i, end) for i, end, bits in module if all(writers[b] == 1 and b[0] not in overlap for b in bits)]
        if alone:
            merged[alone[0][0]] = [FF_CLOCK + " begin",
                                   *("  " + body for i, end in alone for body in lines[i + 1:end]), "  end"]
            skip.update(j for i, end in alone for j in range(i, end))
    out: list[str] = []
    for i, line in enumerate(lines):
        out += merged.get(i, [])
        if i not in skip:
            out.append(line)
    return "\n".join(out)


def port_assigned_as_is(lines: list[str], top: str) -> bool:
    """Whether a module other than the top has an assignment without an operator (a wire, or a
    buffer) that reads one of its ports or writes one of its inputs."""
    ports: set[str] = set()
    inputs: set[str] = set()
    sub = False
    for line in lines:
        if line.startswith("module "):
            sub, ports, inputs = not line.startswith(f"module {top}("), set(), set()
        elif sub and line.startswith(("  input ", "  output ")):
            names = {m.group(1) or m.group(0) for m in NET_TOKEN.finditer(line.split(None, 1)[1])}
            ports |= names
            if line.startswith("  input "):
                inputs |= names
        elif sub and (m := ASSIGN.fullmatch(line)) and not OPERATOR.search(re.sub(r"\\\S+ ", "", m.group(2))):
            read = {t.group(1) or t.group(0) for t in NET_TOKEN.finditer(m.group(2))}
            written = {t.group(1) or t.group(0) for t in NET_TOKEN.finditer(m.group(1))}
            if read & ports or written & inputs:
                return True
    return False


def line_rate_problems(runs: list, last_word: list[int], free: list[int]) -> list[str]:
    """In the free-streaming cycles: the share of clocks with a transfer, and each result's latency
    from the FIFO's pop of the packet's last word (a pop is a push minus the change of level)."""
    lo, hi = free
    problems = []
    for cfg, _, trace, _ in runs:
        rows = [row for row in trace if len(row) == 9 and num(row[0]) is not None and num(row[7]) is not None]
        popped, ends, results, taken = 0, [], [], 0
        for row, after in zip(rows, rows[1:], strict=False):
            cyc, push = num(row[0]), int(row[1] == "1" and row[2] == "1")
            taken += push and lo <= cyc < hi
            if cyc >= lo and push - (num(after[7]) - num(row[7])) == 1:
                if popped < len(last_word) and last_word[popped]:
                    ends.append(cyc)
                popped += 1
            if row[3] == "1" and row[4] == "1":
                results.append(cyc)
        if taken < LINE_RATE_SHARE * (hi - lo):
            problems.append(f"DEPTH={cfg['DEPTH']}: {taken} words in {hi - lo} free-streaming clocks")
        late = [(k, t) for k, t in enumerate(ends) if t < hi - RESULT_LATENCY
                and (k >= len(results) or results[k] - t > RESULT_LATENCY)]
        if late:
            k, t = late[0]
            seen = f"at cycle {results[k]}" if k < len(results) else "never"
            problems.append(f"DEPTH={cfg['DEPTH']}: {len(late)} results late; packet {k} left the FIFO at cycle {t}, "
                            f"result {seen}")
    return problems


def top_flag_problems(runs: list, reset_cycles: int) -> list[str]:
    problems = []
    for cfg, _, trace, _ in runs:
        depth, af, prev = cfg["DEPTH"], cfg["AF_THRESH"], None
        for row in trace:
            if len(row) != 9 or num(row[0]) is None or num(row[0]) < reset_cycles:
                continue
            level = num(row[7])
            want_ready, want_af = (level is not None and level < depth), (level is not None and level >= af)
            if level is None or level > depth or (row[2] == "1") != want_ready or (row[8] == "1") != want_af:
                problems.append(f"DEPTH={depth} cycle {row[0]}: level {row[7]}, s_ready {row[2]}, almost_full {row[8]}")
            elif prev is not None and num(prev[7]) is not None:
                pushed = prev[1] == "1" and prev[2] == "1"
                if level - num(prev[7]) not in ((0, 1) if pushed else (-1, 0)):
                    problems.append(f"DEPTH={depth} cycle {row[0]}: level {prev[7]} -> {row[7]}, push {int(pushed)}")
            prev = row
            if len(problems) >= 6:
                return problems
    return problems
