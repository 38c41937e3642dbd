"""Seeded generator of inputs/ and reference/ for heavy-hex-transpilation: python3 generate.py --out DIR.

Writes a 27-qubit heavy-hex device calibration (directed ECR edges, errors, one retired qubit,
one retired coupler, one qubit with a failing readout resonator), three application circuits in
OpenQASM 3, and the reference: the estimated success probability that the lab's reference
flow (noise-aware Qiskit level-3 transpilation, best of ten seeds) reaches on each circuit.
"""

import argparse
import json
import math
import random
from pathlib import Path

from qiskit import QuantumCircuit, qasm3, transpile
from qiskit.circuit import Parameter
from qiskit.circuit.library import ECRGate, Measure, QFTGate, RZGate, SXGate, XGate
from qiskit.transpiler import InstructionProperties, Target

SEED = 11
CANARY = "6138c396-5608-4fd3-aafb-1a48acd781ba"
N_QUBITS = 27
FALCON = [(0, 1), (1, 2), (1, 4), (2, 3), (3, 5), (4, 7), (5, 8), (6, 7), (7, 10), (8, 9), (8, 11), (10, 12),
          (11, 14), (12, 13), (12, 15), (13, 14), (14, 16), (15, 18), (16, 19), (17, 18), (18, 21), (19, 20),
          (19, 22), (21, 23), (22, 25), (23, 24), (24, 25), (25, 26)]
WORN = set(range(0, 9))       # an older corner of the chip: worse couplers and readout
RETIRED_QUBIT = 23            # flagged out of service; its stale calibration looks excellent
RETIRED_EDGE = (18, 21)       # coupler flagged out of service; stale error looks excellent
BAD_READOUT = 16              # readout resonator failing: gates fine, measurement not
REF_SEEDS = range(10)
# The bar is 0.9 x the reference: one noise-aware level-2 or level-3 compile with any seed clears it on
# >= 98 % of circuits (seeds 0-199), a connectivity-only compile on 12-24 %.


def backend(rng: random.Random) -> dict:
    qubits = []
    for i in range(N_QUBITS):
        worn = i in WORN
        qubits.append({
            "qubit": i,
            "operational": i != RETIRED_QUBIT,
            "t1_us": round(rng.uniform(60, 140) * (0.7 if worn else 1.0), 1),
            "t2_us": round(rng.uniform(40, 120) * (0.7 if worn else 1.0), 1),
            "sx_error": round(10 ** rng.gauss(math.log10(2.4e-4), 0.1) * (1.8 if worn else 1.0), 7),
            "x_error": 0.0,
            "readout_error": round(10 ** rng.gauss(math.log10(0.013), 0.12) * (2.2 if worn else 1.0), 5),
        })
        qubits[-1]["x_error"] = qubits[-1]["sx_error"]
    qubits[BAD_READOUT]["readout_error"] = 0.312
    qubits[RETIRED_QUBIT].update(sx_error=1.6e-4, x_error=1.6e-4, readout_error=0.006)
    edges = []
    for a, b in FALCON:
        c, t = (a, b) if rng.random() < 0.5 else (b, a)
        worn = a in WORN and b in WORN
        err = 10 ** rng.gauss(math.log10(0.0068), 0.12) * (2.4 if worn else 1.0)
        if RETIRED_QUBIT in (a, b) or (a, b) == RETIRED_EDGE:
            err = 0.0041
        edges.append({"control": c, "target": t, "error": round(err, 6), "duration_ns": rng.choice([533, 569, 604]),
                      "operational": (a, b) != RETIRED_EDGE})
    return {
        "backend": "hh27-lab-falcon",
        "calibrated_utc": "2026-11-30T06:12:00Z",
        "num_qubits": N_QUBITS,
        "basis_gates": ["rz", "sx", "x", "ecr"],
        "notes": "ECR is native only in the listed control->target direction. rz is virtual (error 0). "
                 "Elements with operational=false are out of service; their figures are from the last calibration before retirement.",
        "qubits": qubits,
        "ecr": edges,
    }


def target_of(b: dict) -> Target:
    ok = {q["qubit"] for q in b["qubits"] if q["operational"]}
    t = Target(num_qubits=b["num_qubits"])
    t.add_instruction(RZGate(Parameter("theta")), {(i,): InstructionProperties(error=0.0, duration=0.0) for i in sorted(ok)})
    for gate, key in ((SXGate(), "sx_error"), (XGate(), "x_error")):
        t.add_instruction(gate, {(q["qubit"],): InstructionProperties(error=q[key], duration=3.55e-8)
                                 for q in b["qubits"] if q["qubit"] in ok})
    t.add_instruction(ECRGate(), {(e["control"], e["target"]): InstructionProperties(error=e["error"], duration=e["duration_ns"] * 1e-9)
                                  for e in b["ecr"] if e["operational"] and {e["control"], e["target"]} <= ok})
    t.add_instruction(Measure(), {(q["qubit"],): InstructionProperties(error=q["readout_error"], duration=1e-6)
                                  for q in b["qubits"] if q["qubit"] in ok})
    return t


def esp(circ: QuantumCircuit, b: dict) -> float:
    one = {q["qubit"]: q for q in b["qubits"]}
    two = {(e["control"], e["target"]): e["error"] for e in b["ecr"]}
    p = 1.0
    for inst in circ.data:
        qs = tuple(circ.find_bit(x).index for x in inst.qubits)
        name = inst.operation.name
        if name in ("sx", "x"):
            p *= 1 - one[qs[0]][f"{name}_error"]
        elif name == "ecr":
            p *= 1 - two[qs]
        elif name == "measure":
            p *= 1 - one[qs[0]]["readout_error"]
    return p


def circuits(rng: random.Random) -> dict[str, QuantumCircuit]:
    qft = QuantumCircuit(6, 6, name="qft6")
    for i in range(6):
        qft.rx(round(rng.uniform(0.2, 2.9), 4), i)
    qft.append(QFTGate(6), range(6))
    qft.measure(range(6), range(6))
    qft = qft.decompose(["qft"])

    qaoa = QuantumCircuit(6, 6, name="qaoa6")
    graph = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3), (1, 4), (2, 5)]
    qaoa.h(range(6))
    for gamma, beta in ((round(rng.uniform(0.3, 1.2), 4), round(rng.uniform(0.2, 0.9), 4)),
                        (round(rng.uniform(0.3, 1.2), 4), round(rng.uniform(0.2, 0.9), 4))):
        for a, c in graph:
            qaoa.rzz(gamma, a, c)
        qaoa.rx(beta, range(6))
    qaoa.measure(range(6), range(6))

    ans = QuantumCircuit(5, 5, name="ansatz5")
    for _ in range(2):
        for i in range(5):
            ans.ry(round(rng.uniform(-3, 3), 4), i)
            ans.rz(round(rng.uniform(-3, 3), 4), i)
        for i in range(5):
            for j in range(i + 1, 5):
                ans.cx(i, j)
    for i in range(5):
        ans.ry(round(rng.uniform(-3, 3), 4), i)
    ans.measure(range(5), range(5))
    return {"qft6": qft, "qaoa6": qaoa, "ansatz5": ans}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    b = backend(rng)
    circs = circuits(rng)
    (out / "inputs" / "circuits").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "inputs" / "backend.json").write_text(json.dumps(b, indent=1) + "\n")
    target = target_of(b)
    ref = {"canary": CANARY, "threshold_fraction": 0.9, "circuits": {}}
    for name, c in circs.items():
        (out / "inputs" / "circuits" / f"{name}.qasm").write_text(qasm3.dumps(c) + "\n")
        best = max(esp(transpile(c, target=target, optimization_level=3, seed_transpiler=s), b) for s in REF_SEEDS)
        ref["circuits"][name] = {"num_qubits": c.num_qubits, "reference_esp": round(best, 6)}
    (out / "reference" / "reference.json").write_text(json.dumps(ref, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
