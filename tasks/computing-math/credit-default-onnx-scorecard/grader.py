"""Grader for credit-default-onnx-scorecard: the agent's ONNX model run in ONNX Runtime on a
hidden, later quarter of applications whose true default probabilities are known.

Tolerances (and why): the test quarter has 5,000 applications, so metrics against the sampled
labels carry noise (AUC about 0.008, Brier about 0.003 standard error), while metrics against
the true probabilities carry none. The margins below are what valid, differently built models
reach here (gradient boosting or logistic regression, isotonic or Platt calibration, any
out-of-time scheme; all stay within about half of each margin), not what a model trained on
immature outcomes or on the collections flag reaches:
- AUC at least the Bayes AUC (the true probabilities' AUC on the same labels) - 0.03;
- Brier score at most the Bayes Brier + 0.008;
- calibration in the large: mean prediction within 0.02 of the mean true probability;
- expected calibration error against the true probabilities (ten equal-count bins) <= 0.03;
- invariance: predictions change by at most 1e-5 (float32 arithmetic) when the ignored columns change.

The model is untrusted: it is scored in a child process capped in memory and time, and a file
whose tensors point to external data is refused (ONNX Runtime follows any path, the hidden
reference included).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, equal, get, load_json, near, same_set

CRUX_AUC = 0.69  # ranks risk on the application: a constant or the bureau score alone (0.66) stays below
ONNX_TYPES = {"float": "tensor(float)", "int64": "tensor(int64)", "string": "tensor(string)"}
MAX_BYTES = 200_000_000
CHILD_SECONDS = 300  # three scorings of 5,000 rows take seconds for any sensible model
CHILD_MEMORY_MB = 2500


def load_test(ctx: GradeContext):
    with ctx.ref("test.csv").open() as f:
        rows = list(csv.DictReader(f))
    return rows


def feed(np, schema, rows, override=None):
    override = override or {}
    arrays = {}
    for col in schema:
        name, kind = col["name"], col["type"]
        values = override.get(name) or [r[name] for r in rows]
        if kind == "string":
            arrays[name] = np.array(values, dtype=object).reshape(-1, 1)
        elif kind == "int64":
            arrays[name] = np.array([int(float(v)) for v in values], dtype=np.int64).reshape(-1, 1)
        else:
            arrays[name] = np.array([float(v) if v != "" else math.nan for v in values], dtype=np.float32).reshape(-1, 1)
    return arrays


def external_tensors(model) -> list[str]:
    """Names of the tensors whose data the file points to elsewhere (initializers, node attributes, subgraphs)."""
    from onnx import AttributeProto, TensorProto

    found: list[str] = []

    def tensor(t) -> None:
        if t.data_location == TensorProto.EXTERNAL or len(t.external_data):
            found.append(t.name or "(unnamed)")

    def graph(g) -> None:
        for t in g.initializer:
            tensor(t)
        for st in g.sparse_initializer:
            tensor(st.values)
            tensor(st.indices)
        for node in g.node:
            nodes(node.attribute)

    def nodes(attrs) -> None:
        for a in attrs:
            if a.type == AttributeProto.TENSOR:
                tensor(a.t)
            elif a.type == AttributeProto.TENSORS:
                for t in a.tensors:
                    tensor(t)
            elif a.type == AttributeProto.SPARSE_TENSOR:
                tensor(a.sparse_tensor.values)
            elif a.type == AttributeProto.SPARSE_TENSORS:
                for st in a.sparse_tensors:
                    tensor(st.values)
            elif a.type == AttributeProto.GRAPH:
                graph(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for sub in a.graphs:
                    graph(sub)

    graph(model.graph)
    for f in model.functions:
        nodes(f.attribute_proto)
        for node in f.node:
            nodes(node.attribute)
    return found


def run_model(path: str, feeds: dict) -> dict:
    """In the child process: the model's signature and its p_default for each feed, or why not."""
    try:
        import onnx
        import onnxruntime as ort

        ext = external_tensors(onnx.load(path, load_external_data=False))
        if ext:
            return {"error": f"model.onnx is not self-contained: tensor(s) {ext[:3]} point to external data files"}
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnx and onnxruntime raise their own and several other types on bad files
        return {"error": f"model.onnx does not load in ONNX Runtime: {type(e).__name__}: {e}"[:300]}
    res = {"inputs": {i.name: i.type for i in sess.get_inputs()}, "outputs": [o.name for o in sess.get_outputs()], "runs": {}}
    if "p_default" not in res["outputs"]:
        return res
    for name, arrays in feeds.items():
        try:
            out = sess.run(["p_default"], arrays)[0].reshape(-1)
            rows = len(next(iter(arrays.values())))
            res["runs"][name] = [float(v) for v in out] if len(out) == rows else f"p_default has {len(out)} values for {rows} rows"
        except Exception as e:  # a graph that fails on these inputs (unknown category, missing value)
            res["runs"][name] = f"scoring failed: {type(e).__name__}: {e}"[:300]
    return res


def score_isolated(ctx: GradeContext, feeds: dict) -> dict:
    """run_model in a child process with a memory and time cap, so that a hostile graph (memory bomb,
    endless Loop, a crash inside ONNX Runtime) fails its gate instead of taking the grader down."""
    import pickle
    import subprocess
    import sys
    import tempfile

    path = ctx.out("model.onnx")
    if not path.is_file():
        return {"error": "model.onnx is missing or not a file"}
    if path.stat().st_size > MAX_BYTES:
        return {"error": "model.onnx is larger than 200 MB"}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "feeds.pkl").write_bytes(pickle.dumps(feeds))
        try:
            done = subprocess.run([sys.executable, "-S", "-B", __file__, str(path), tmp], cwd=tmp, timeout=CHILD_SECONDS,
                                  capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return {"error": f"scoring the model took more than {CHILD_SECONDS} s"}
        result = Path(tmp) / "result.json"
        if done.returncode != 0 or not result.is_file():
            return {"error": f"ONNX Runtime ended abnormally (exit {done.returncode}; memory cap {CHILD_MEMORY_MB} MB): "
                             f"{done.stderr[-200:]}"}
        return json.loads(result.read_text())


def check_signature(res: dict, schema) -> Outcome:
    if "error" in res:
        return Outcome(False, res["error"])
    want = {c["name"]: ONNX_TYPES[c["type"]] for c in schema}
    if res["inputs"] != want or "p_default" not in res["outputs"]:
        return Outcome(False, "the model's inputs or outputs differ from the scoring schema",
                       expected={"inputs": want, "output": "p_default"}, seen={"inputs": res["inputs"], "outputs": res["outputs"]})
    return Outcome(True, f"{len(want)} inputs as in the schema, output p_default")


def predict(np, res: dict, name: str, n: int):
    """The p_default vector of one feed, or None with the reason."""
    run = res.get("runs", {}).get(name, "no model")
    if isinstance(run, str):
        return None, run
    p = np.asarray(run, dtype=np.float64)
    if p.shape[0] != n:
        return None, f"p_default has {p.shape[0]} values for {n} rows"
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        return None, "p_default holds values outside [0, 1] or not finite"
    return p, ""


def auc(np, score, y):
    order = np.argsort(score, kind="mergesort")
    s, yy = score[order], y[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2 + 1
        i = j + 1
    npos = float(yy.sum())
    return float((ranks[yy == 1].sum() - npos * (npos + 1) / 2) / (npos * (len(yy) - npos)))


def ece_true(np, p, p_true, bins=10):
    order = np.argsort(p, kind="mergesort")
    total = 0.0
    for chunk in np.array_split(order, bins):
        total += len(chunk) * abs(float(p[chunk].mean()) - float(p_true[chunk].mean()))
    return total / len(p)


def grade(ctx: GradeContext) -> Rubric:
    import numpy as np

    r = Rubric()
    truth = ctx.reference_json("truth.json")
    schema = json.loads((ctx.inputs / "scoring_schema.json").read_text())["inputs"]
    rows = load_test(ctx)
    n = len(rows)
    y = np.array([float(x["default_12m"]) for x in rows])
    p_true = np.array([float(x["p_true"]) for x in rows])

    ids = [x["application_id"] for x in rows]
    # Identifiers both reordered and moved to another range: a model using them in any way changes.
    other_ids = [str(int(v) + 7_000_003) for v in ids[::-1]]
    res = score_isolated(ctx, {"hidden": feed(np, schema, rows), "collections": feed(np, schema, rows, {"collections_flag": ["1"] * n}),
                               "ids": feed(np, schema, rows, {"application_id": other_ids})})
    ok = check_signature(res, schema)
    r.gate("model.onnx loads in ONNX Runtime with exactly the scoring schema's inputs and a p_default output", ok)
    p, why = predict(np, res, "hidden", n) if ok.passed else (None, "no model")
    r.gate("the model scores every application of the hidden quarter with p_default in [0, 1]",
           Outcome(p is not None, why or f"{n} scores", expected=f"{n} probabilities"))
    a = auc(np, p, y) if p is not None else None
    r.gate("the model ranks risk (AUC >= 0.69 on the hidden quarter)",
           Outcome(a is not None and a >= CRUX_AUC, f"AUC {a:.4f}" if a is not None else "no scores",
                   expected=f">= {CRUX_AUC}", seen=a and round(a, 4)))
    if p is None:
        p = np.full(n, np.nan)
    r.check("discrimination: AUC >= Bayes AUC - 0.03", 3,
            Outcome(a is not None and a >= truth["auc_bayes"] - 0.03, f"AUC {a} vs Bayes {truth['auc_bayes']}",
                    expected=f">= {truth['auc_bayes'] - 0.03:.4f}", seen=a and round(a, 4)))
    brier = float(np.mean((p - y) ** 2))
    r.check("Brier score <= Bayes Brier + 0.008", 2,
            Outcome(brier <= truth["brier_bayes"] + 0.008, f"Brier {brier:.4f} vs Bayes {truth['brier_bayes']}",
                    expected=f"<= {truth['brier_bayes'] + 0.008:.4f}", seen=round(brier, 5) if math.isfinite(brier) else None))
    r.check("calibration in the large: mean p_default within 0.02 of the mean true probability", 2,
            near(float(p.mean()), truth["mean_p_true"], abs=0.02))
    ece = ece_true(np, p, p_true)
    r.check("expected calibration error against the true probabilities (10 equal-count bins) <= 0.03", 2,
            Outcome(ece <= 0.03, f"ECE {ece:.4f}", expected="<= 0.03", seen=round(ece, 5) if math.isfinite(ece) else None))

    def invariance(name):
        if not ok.passed:
            return Outcome(False, "no model")
        q, why2 = predict(np, res, name, n)
        if q is None:
            return Outcome(False, why2)
        d = float(np.max(np.abs(q - p)))
        return Outcome(d <= 1e-5, f"largest change {d:.3g}", expected="<= 1e-5", seen=d)

    r.check("post-outcome collections_flag has no effect (set to 1 for every application)", 2, invariance("collections"))
    r.check("application_id has no effect (identifiers reordered and shifted)", 1, invariance("ids"))

    card, card_ok = load_json(ctx.out("model_card.json"))
    r.check("model_card.json: outcome_mature_through is the last application date with a complete 12-month outcome", 1,
            equal(get(card, "outcome_mature_through"), truth["outcome_mature_through"]) if card_ok else card_ok)
    excl = get(card, "excluded_columns")
    names = {c["name"] for c in schema}
    excl_schema = sorted(x for x in excl if isinstance(x, str) and x in names) if isinstance(excl, list) else excl
    r.check("model_card.json: excluded_columns names exactly the identifier and the post-outcome column of the schema", 1,
            same_set(excl_schema, ["application_id", "collections_flag"]) if card_ok else card_ok)
    return r


if __name__ == "__main__":  # the child process of score_isolated: python3 grader.py MODEL WORKDIR
    import pickle
    import resource
    import sys

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_MB * 2**20, CHILD_MEMORY_MB * 2**20))
    work = Path(sys.argv[2])
    out = run_model(sys.argv[1], pickle.loads((work / "feeds.pkl").read_bytes()))
    (work / "result.json").write_text(json.dumps(out))
