"""The oracle: a gradient-boosted default model on matured outcomes, isotonic-calibrated,
exported with skl2onnx as one ONNX graph that takes the scoring schema and returns p_default."""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pandas as pd
from onnx import TensorProto, helper
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType, Int64TensorType, StringTensorType
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

inputs, out = Path(sys.argv[1]), Path(sys.argv[2])
schema = json.loads((inputs / "scoring_schema.json").read_text())["inputs"]
data = pd.read_csv(inputs / "applications_train.csv", keep_default_na=False, na_values=[""])
data["default_12m"] = data["default_12m"].astype(int)

# 12-month outcomes are complete only for loans funded at least a year before the extract.
MATURE_THROUGH = "2023-07-31"
HOLDOUT_FROM = "2023-04-01"
EXCLUDED = ["application_id", "collections_flag"]  # an identifier; a post-outcome event
numeric = [c["name"] for c in schema if c["type"] != "string" and c["name"] not in EXCLUDED]
categorical = [c["name"] for c in schema if c["type"] == "string"]
mature = data[data["application_date"] <= MATURE_THROUGH].copy()
for c in numeric:
    mature[c] = mature[c].astype(np.float32)


def model() -> Pipeline:
    prep = ColumnTransformer([
        ("num", SimpleImputer(strategy="constant", fill_value=-1.0), numeric),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
    ])
    gbm = GradientBoostingClassifier(n_estimators=150, learning_rate=0.05, max_depth=3, min_samples_leaf=40,
                                     subsample=0.8, random_state=0)
    return Pipeline([("prep", prep), ("clf", CalibratedClassifierCV(gbm, method="isotonic", cv=4))])


# Out-of-time check: fit on the earlier matured months, score the last matured quarter.
early = mature[mature["application_date"] < HOLDOUT_FROM]
late = mature[mature["application_date"] >= HOLDOUT_FROM]
check = model().fit(early[numeric + categorical], early["default_12m"])
p_late = check.predict_proba(late[numeric + categorical])[:, 1]
holdout = {"from": HOLDOUT_FROM, "to": MATURE_THROUGH, "n": len(late),
           "auc": round(float(roc_auc_score(late["default_12m"], p_late)), 4),
           "brier": round(float(brier_score_loss(late["default_12m"], p_late)), 4),
           "mean_predicted": round(float(p_late.mean()), 4), "observed_rate": round(float(late["default_12m"].mean()), 4)}

final = model().fit(mature[numeric + categorical], mature["default_12m"])
types = {"float": FloatTensorType([None, 1]), "int64": Int64TensorType([None, 1]), "string": StringTensorType([None, 1])}
onx = convert_sklearn(final, initial_types=[(c["name"], types[c["type"]]) for c in schema if c["name"] not in EXCLUDED],
                      options={id(final): {"zipmap": False}}, target_opset=17)
graph = onx.graph
prob = next(o.name for o in graph.output if o.name.startswith("prob"))
graph.node.append(helper.make_node("Constant", [], ["p_col"], value=helper.make_tensor("c1", TensorProto.INT64, [], [1])))
graph.node.append(helper.make_node("Gather", [prob, "p_col"], ["p_default"], axis=1))
del graph.output[:]
graph.output.append(helper.make_tensor_value_info("p_default", TensorProto.FLOAT, [None]))
# The scoring service sends the whole record: the excluded columns are inputs the graph ignores.
for c in schema:
    if c["name"] in EXCLUDED:
        graph.input.append(helper.make_tensor_value_info(
            c["name"], {"float": TensorProto.FLOAT, "int64": TensorProto.INT64}[c["type"]], [None, 1]))
onnx.checker.check_model(onx)
out.mkdir(parents=True, exist_ok=True)
onnx.save(onx, out / "model.onnx")

card = {
    "model": "GradientBoostingClassifier with isotonic calibration (CalibratedClassifierCV, 4 folds)",
    "target": "default_12m",
    "output": "p_default = P(default_12m = 1)",
    "outcome_mature_through": MATURE_THROUGH,
    "training_rows": len(mature),
    "excluded_columns": EXCLUDED,
    "calibration": "isotonic",
    "out_of_time_holdout": holdout,
}
(out / "model_card.json").write_text(json.dumps(card, indent=2) + "\n")
