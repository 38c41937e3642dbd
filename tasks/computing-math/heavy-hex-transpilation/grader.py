"""Grader for heavy-hex-transpilation: each compiled circuit re-simulated against its original.

The grader loads every compiled circuit with Qiskit's OpenQASM readers, checks it against the
calibration (basis, native ECR direction, in-service couplers and qubits), simulates it on all
computational-basis inputs over the physical qubits it touches, and compares the result with the
original circuit placed by the declared initial layout and read out where the compiled circuit
measures each classical bit (an isometry: ancilla qubits start in |0> and must end in |0>).
Tolerances (and why):
- equivalence: process fidelity >= 1 - 1e-6; compilers synthesise angles in double precision,
  so a valid circuit is equivalent to ~1e-12, while any wrong layout or gate is off by O(1);
- success probability: >= 0.9 x the reference flow's (best of ten seeds), the bar stated in the instruction;
  one noise-aware level-2 or level-3 compile clears it with >= 98 % of seeds (0-199), so a valid
  single compilation is not failed for its seed, while a connectivity-only one clears it on 12-24 %;
- reported ESP: 1e-3 relative, four significant figures or more;
- ECR counts: exact.
"""

from __future__ import annotations

import json
import math
import re

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    load_csv,
    load_json,
    rows_by,
)

BASIS = {"rz", "sx", "x", "ecr"}
FREE = {"barrier"}
MAX_QASM_BYTES = 2_000_000
MAX_ACTIVE = 12
# With MAX_ACTIVE, keeps the three simulations within the grader's time limit on a loaded 2-core machine
# (~13 ms an instruction at 12 qubits); an unoptimised level-0 compile of these circuits has ~1 100.
MAX_OPS = 5_000
FIDELITY_TOL = 1e-6
MAX_GATE_BODY = 100  # Qiskit's exporters define ecr in 4 to 3 operations


GATE_DEF = re.compile(r"\bgate\s+([A-Za-z_]\w*)[^{;]*\{([^}]*)\}")
CALLEE = re.compile(r"[A-Za-z_]\w*")


def defined_gate_size(text: str) -> float:
    """The most operations one gate defined in the file expands to, counted from the text: the
    OpenQASM readers expand nested definitions eagerly, so a chain of gates each calling the
    previous one twice would hang them."""
    bodies = dict(GATE_DEF.findall(text))
    memo: dict[str, float] = {}

    def size(name: str, depth: int) -> float:
        if name not in bodies:
            return 1
        if depth > 32:  # deeper than any real definition, or recursive
            return math.inf
        if name not in memo:
            callees = (CALLEE.findall(stmt.rsplit("@", 1)[-1])[:1] for stmt in bodies[name].split(";"))
            memo[name] = sum(max(1, size(c[0], depth + 1)) for c in callees if c)
        return memo[name]
    return max((size(n, 0) for n in bodies), default=0)


def load_qasm(path):
    """(QuantumCircuit, Outcome) from an OpenQASM 2 or 3 file; never raises."""
    if not path.is_file():
        return None, Outcome(False, f"{path.name} is missing")
    if path.stat().st_size > MAX_QASM_BYTES:
        return None, Outcome(False, f"{path.name} is over {MAX_QASM_BYTES} bytes")
    try:
        text = path.read_text()
        big = defined_gate_size(text)
        if big > MAX_GATE_BODY:
            return None, Outcome(False, f"{path.name}: a gate it defines expands to over {MAX_GATE_BODY} operations")
        from qiskit import qasm2, qasm3

        if "OPENQASM 3" in text[:200]:
            circ = qasm3.loads(text)
        else:  # Qiskit's exporter uses qelib1 names (sx, ...) that only the legacy table defines
            circ = qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    except Exception as e:  # the readers raise many types on malformed programs
        return None, Outcome(False, f"{path.name} is not readable OpenQASM: {type(e).__name__}: {e}"[:300])
    if len(circ.data) > MAX_OPS:
        return None, Outcome(False, f"{path.name} has {len(circ.data)} instructions, over {MAX_OPS}")
    return circ, Outcome(True, f"{circ.num_qubits} qubits, {len(circ.data)} instructions")


def ops_of(circ):
    return [(inst.operation, tuple(circ.find_bit(q).index for q in inst.qubits),
             tuple(circ.find_bit(c).index for c in inst.clbits)) for inst in circ.data]


def strip_measurements(ops):
    """(unitary ops, {clbit: qubit}, problems): measurements must come last on their qubit."""
    body, meas, done, problems = [], {}, set(), []
    for op, qs, cs in ops:
        if op.name in FREE:
            continue
        if op.name == "measure":
            if cs[0] in meas:
                problems.append(f"classical bit {cs[0]} written twice")
            meas[cs[0]] = qs[0]
            done.add(qs[0])
        elif set(qs) & done:
            problems.append(f"{op.name} on qubit {qs} after its measurement")
        else:
            body.append((op, qs))
    return body, meas, problems


def simulate(body, axis, m, columns):
    """Apply the ops to `columns` (array [2]*m + [K]) over qubit axes `axis` (qubit -> axis)."""
    import numpy as np
    from qiskit.quantum_info import Operator

    cache, psi = {}, columns
    for op, qs in body:
        if len(qs) not in (1, 2):  # before any matrix is built: a many-qubit gate's would not fit in memory
            raise ValueError(f"{op.name} acts on {len(qs)} qubits")
        key = (op.name, tuple(float(p) for p in op.params), len(qs))
        if key not in cache:
            cache[key] = np.asarray(Operator(op).data)
        u = cache[key]
        if len(qs) == 1:
            a = axis[qs[0]]
            psi = np.moveaxis(np.tensordot(u, psi, axes=([1], [a])), 0, a)
        else:
            a, b = axis[qs[0]], axis[qs[1]]
            u4 = u.reshape(2, 2, 2, 2)  # [out_q1, out_q0, in_q1, in_q0], Qiskit's little-endian order
            psi = np.tensordot(u4, psi, axes=([2, 3], [b, a]))
            psi = np.moveaxis(psi, [0, 1], [b, a])
    return psi


def basis_columns(places, m, n):
    """[2]*m + [2**n]: column x holds |x> with virtual bit j on axis places[j], other axes 0."""
    import numpy as np

    cols = np.zeros([2] * m + [2 ** n], dtype=complex)
    for x in range(2 ** n):
        idx = [0] * m
        for j, a in enumerate(places):
            idx[a] = (x >> j) & 1
        cols[tuple(idx) + (x,)] = 1.0
    return cols


def equivalence(original, compiled, initial):
    """Process fidelity between the compiled circuit and the original, both as isometries."""
    import numpy as np

    n = original.num_qubits
    obody, omeas, oprob = strip_measurements(ops_of(original))
    body, meas, problems = strip_measurements(ops_of(compiled))
    if problems:
        return None, f"measurements: {problems[:3]}"
    if sorted(meas) != list(range(n)):
        return None, f"classical bits measured: {sorted(meas)}, expected 0..{n - 1}"
    if sorted(set(meas.values())) != sorted(meas.values()):
        return None, "two classical bits read the same qubit"
    if initial is None or len(initial) != n or len(set(initial)) != n:
        return None, "no valid initial layout for this circuit in layout.json"
    active = sorted(set(initial) | set(meas.values()) | {q for _, qs in body for q in qs})
    if len(active) > MAX_ACTIVE:
        return None, f"{len(active)} physical qubits touched, over {MAX_ACTIVE}"
    axis = {q: i for i, q in enumerate(active)}
    m = len(active)
    got = simulate(body, axis, m, basis_columns([axis[q] for q in initial], m, n))
    vaxis = {j: j for j in range(n)}
    ideal = simulate(obody, vaxis, n, basis_columns(list(range(n)), n, n))
    want = np.zeros([2] * m + [2 ** n], dtype=complex)
    out_axes = [axis[meas[j]] for j in range(n)]
    order = sorted(range(n), key=lambda j: out_axes[j])
    index = tuple(slice(None) if a in out_axes else 0 for a in range(m)) + (slice(None),)
    want[index] = np.transpose(ideal, order + [n])
    assert not oprob and sorted(omeas) == list(range(n))
    fid = abs(np.vdot(want, got)) / 2 ** n
    return fid, f"process fidelity {fid:.9f} over {m} active physical qubits"


def success_probability(ops, backend):
    qubit = {q["qubit"]: q for q in backend["qubits"]}
    ecr = {(e["control"], e["target"]): e["error"] for e in backend["ecr"]}
    p = 1.0
    for op, qs, _ in ops:
        if op.name in ("sx", "x"):
            p *= 1.0 - qubit[qs[0]][f"{op.name}_error"]
        elif op.name == "ecr":
            p *= 1.0 - ecr.get(qs, 1.0)
        elif op.name == "measure":
            p *= 1.0 - qubit[qs[0]]["readout_error"]
    return p


def genuine(op, cache):
    """Whether an op named like a native gate is that gate: a file may define its own `ecr` (Qiskit's
    OpenQASM 3 exporter does) or, without stdgates.inc, its own `rz`, with any body."""
    import numpy as np
    from qiskit.circuit.library import ECRGate, RZGate, SXGate, XGate
    from qiskit.quantum_info import Operator

    try:
        params = tuple(float(p) for p in op.params)
    except (TypeError, ValueError):  # unbound parameters
        return False
    key = (op.name, params, op.num_qubits)
    if key not in cache:
        arity = {"rz": (1, 1), "sx": (0, 1), "x": (0, 1), "ecr": (0, 2)}[op.name]
        if (len(params), op.num_qubits) != arity or not all(map(math.isfinite, params)):
            cache[key] = False
        else:
            std = {"rz": lambda: RZGate(params[0]), "sx": SXGate, "x": XGate, "ecr": ECRGate}[op.name]()
            try:
                got = np.asarray(Operator(op).data)
            except Exception:  # a body Qiskit cannot turn into a matrix
                cache[key] = False
            else:  # equal up to a global phase, to double precision
                want = np.asarray(Operator(std).data)
                cache[key] = bool(abs(np.vdot(want, got)) / want.shape[0] >= 1 - 1e-9)
    return cache[key]


def hardware_problems(ops, backend):
    n = backend["num_qubits"]
    live = {q["qubit"] for q in backend["qubits"] if q["operational"]}
    native = {(e["control"], e["target"]) for e in backend["ecr"] if e["operational"]}
    basis, edges, cache = [], [], {}
    for op, qs, _ in ops:
        if op.name in FREE:
            continue
        if any(q >= n or q not in live for q in qs):
            edges.append(f"{op.name} on {qs}: not an in-service qubit")
        if op.name not in BASIS | {"measure"}:
            basis.append(op.name)
        elif op.name in BASIS and not genuine(op, cache):
            basis.append(f"{op.name} (defined as another operation)")
        elif op.name == "ecr" and qs not in native:
            edges.append(f"ecr {qs}: not a native in-service direction")
    return sorted(set(basis)), list(dict.fromkeys(edges))


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("reference.json")
    backend = json.loads((ctx.inputs / "backend.json").read_text())
    names = sorted(ref["circuits"])
    layout, layout_ok = load_json(ctx.out("layout.json"))
    report, _ = load_csv(ctx.out("report.csv"), required_columns=["circuit", "ecr_count", "esp"])
    report = rows_by(report, "circuit")

    loaded = {}
    for name in names:
        loaded[name] = load_qasm(ctx.out(f"compiled/{name}.qasm"))
    r.gate("every compiled circuit reads as OpenQASM 2 or 3", all_of([(n, loaded[n][1]) for n in names]))
    r.gate("layout.json parses as a JSON object", layout_ok)

    from qiskit import qasm3
    from qiskit.exceptions import QiskitError

    results = {}
    for name in names:
        circ = loaded[name][0]
        original = qasm3.loads((ctx.inputs / "circuits" / f"{name}.qasm").read_text())
        ops = ops_of(circ) if circ is not None else []
        entry = layout.get(name) if isinstance(layout, dict) else None
        initial = entry.get("initial") if isinstance(entry, dict) else None
        initial = [int(v) for v in initial] if isinstance(initial, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in initial) else None
        try:
            fid, note = equivalence(original, circ, initial) if circ is not None else (None, "no circuit")
        except (ValueError, TypeError, KeyError, AttributeError, QiskitError) as e:  # ops the simulator cannot apply
            fid, note = None, f"cannot simulate: {type(e).__name__}: {e}"[:200]
        basis, edges = hardware_problems(ops, backend)
        _, meas, _ = strip_measurements(ops)
        results[name] = {
            "equivalent": fid is not None and fid >= 1 - FIDELITY_TOL, "fidelity": fid, "note": note,
            "basis": basis, "edges": edges, "ops": ops, "meas": meas, "entry": entry,
            "esp": success_probability(ops, backend) if circ is not None and not edges and not basis else 0.0,
        }

    runnable = [n for n in names if results[n]["equivalent"] and not results[n]["basis"] and not results[n]["edges"]]
    r.gate("at least two circuits equivalent to the originals and executable on the in-service device",
           Outcome(len(runnable) >= 2, f"{len(runnable)} of {len(names)}: {runnable}", expected=">= 2", seen=runnable))

    def per_circuit(label, fn):
        return all_of([(n, fn(n, results[n])) for n in names])

    r.check("every circuit equivalent to its original under the declared initial layout (fidelity >= 1-1e-6)", 3,
            per_circuit("equivalent", lambda n, x: Outcome(x["equivalent"], x["note"], expected=f">= {1 - FIDELITY_TOL}",
                                                           seen=None if x["fidelity"] is None else round(float(x["fidelity"]), 9))))
    r.check("only rz, sx, x, ecr (plus measure, barrier)", 2,
            per_circuit("basis", lambda n, x: Outcome(not x["basis"], "basis only" if not x["basis"] else f"other gates {x['basis']}")))
    r.check("every ECR on an in-service coupler in its native direction; nothing on retired qubits", 3,
            per_circuit("edges", lambda n, x: Outcome(not x["edges"], "all native" if not x["edges"] else "; ".join(x["edges"][:3]))))

    def final_ok(n, x):
        final = x["entry"].get("final") if isinstance(x["entry"], dict) else None
        want = [x["meas"].get(j) for j in range(ref["circuits"][n]["num_qubits"])]
        return Outcome(final == want, "matches the measurements" if final == want else "differs from where the qubits are measured",
                       expected=want, seen=final)
    r.check("layout.json final layout: where each virtual qubit ends (as measured)", 1, per_circuit("final", final_ok))

    for n in names:
        want = ref["circuits"][n]["reference_esp"] * ref["threshold_fraction"]
        x = results[n]
        ok = n in runnable and x["esp"] >= want
        r.check(f"{n}: estimated success probability >= 0.9 x reference", 3,
                Outcome(ok, f"ESP {x['esp']:.4f} vs bar {want:.4f}" if n in runnable else "not a runnable equivalent circuit",
                        expected=round(want, 6), seen=round(x["esp"], 6)))

    def report_ok(n, x):
        row = report.get(n) or {}
        ecr = sum(1 for op, _, _ in x["ops"] if op.name == "ecr")
        esp = as_number(row.get("esp"))
        seen_ecr = as_number(row.get("ecr_count"))
        ok = seen_ecr == ecr and esp is not None and x["esp"] > 0 and math.isclose(esp, x["esp"], rel_tol=1e-3)
        return Outcome(ok, "matches the compiled circuit" if ok else "differs from the recount",
                       expected={"ecr_count": ecr, "esp": round(x["esp"], 6)}, seen={"ecr_count": seen_ecr, "esp": esp})
    r.check("report.csv: ECR count and ESP of each compiled circuit (ESP within 1e-3 relative)", 1,
            per_circuit("report", report_ok))
    return r
