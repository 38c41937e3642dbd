"""The operating-planning study model of case118-n1-redispatch, in pandapower.

Shared by the oracle (solve.sh) and the seeded generator (reference screening and redispatch).
The grader does not use it: it re-runs a redispatch in its own model of the same definition:

- network: pandapower.networks.case118() with the study loads, unit statuses and limits applied;
  impedances, shunts, taps and voltage set-points untouched (transformer sn_mva stays the
  impedance base: ratings are applied when loadings are computed, never written into sn_mva);
- base case: AC Newton-Raphson with reactive limits enforced; the slack unit (the ext_grid)
  balances, every other unit runs at its dispatch;
- contingency: the outaged elements removed; buses cut off from the slack bus are de-energised
  (their load lost, their units tripped); the imbalance is shared by the units left in service
  in proportion to their participation factors, starting from their base-case outputs
  (pandapower distributed slack, the slack unit turned into a slack generator at its base-case
  output);
- loading: current over rated current at rated voltage (rate / (sqrt(3) kV)), the larger end of
  a line, the larger side of a transformer; normal ratings in the base case, emergency ratings
  after a contingency.
"""

from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

warnings.filterwarnings("ignore")

import fast_pf  # noqa: E402
import numpy as np  # noqa: E402
import pandapower as pp  # noqa: E402
import pandapower.networks as pn  # noqa: E402

# pandapower's Newton-Raphson, the same floats in less time; of the result tables the study
# reads res_bus.vm_pu, res_line, res_trafo and res_ext_grid only
fast_pf.install(all_results=False)

BASE_V = (0.94, 1.06)  # from the case's bus limits; checked against the net in load_study
POST_V = (0.90, 1.10)
PF_OPTIONS = dict(algorithm="nr", enforce_q_lims=True, numba=False)


@dataclass
class Study:
    net: object  # base-case net (ext_grid slack), dispatch not yet applied
    units: list[dict]
    branches: list[dict]
    contingencies: list[dict]
    unit_by_id: dict[str, dict] = field(default_factory=dict)
    branch_by_id: dict[str, dict] = field(default_factory=dict)
    _arrays: dict | None = None

    @property
    def slack(self) -> dict:
        return next(u for u in self.units if u["element"] == "ext_grid")

    @property
    def dispatchable(self) -> list[dict]:
        """In-service units with a dispatch to choose (not the slack, not condensers)."""
        return [u for u in self.units if u["status"] == "in_service" and u["p_max_mw"] > 0
                and u["element"] == "gen"]


def _read(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@cache
def case118():
    """pandapower's case118, read once (generate.py loads the study four times): copy it
    before changing it."""
    return pn.case118()


def load_study(inputs: Path) -> Study:
    net = _copy(case118())
    loads = _read(inputs / "study_loads.csv")
    for row in loads:
        i = int(row["load_index"])
        assert int(net.load.at[i, "bus"]) + 1 == int(row["bus"])
        net.load.at[i, "p_mw"] = float(row["p_mw"])
        net.load.at[i, "q_mvar"] = float(row["q_mvar"])
    units = []
    for row in _read(inputs / "generators.csv"):
        u = dict(row)
        for k in ("p_min_mw", "p_max_mw", "scheduled_p_mw", "cost_c0_eur_per_h", "cost_c1_eur_per_mwh",
                  "cost_c2_eur_per_mw2h", "participation_factor"):
            u[k] = float(row[k])
        u["element_index"] = int(row["element_index"])
        table = net.gen if u["element"] == "gen" else net.ext_grid
        assert int(table.at[u["element_index"], "bus"]) + 1 == int(row["bus"])
        if u["element"] == "gen":
            net.gen.at[u["element_index"], "in_service"] = u["status"] == "in_service"
            net.gen.at[u["element_index"], "p_mw"] = u["scheduled_p_mw"]
            net.gen.at[u["element_index"], "min_p_mw"] = u["p_min_mw"]
            net.gen.at[u["element_index"], "max_p_mw"] = u["p_max_mw"]
        units.append(u)
    branches = []
    for row in _read(inputs / "branch_ratings.csv"):
        b = dict(row)
        b["element_index"] = int(row["element_index"])
        b["rate_a_mva"] = float(row["rate_a_mva"])
        b["rate_b_mva"] = float(row["rate_b_mva"])
        if b["element"] == "line":
            kv = float(net.bus.at[int(net.line.at[b["element_index"], "from_bus"]), "vn_kv"])
            b["kv"] = (kv, kv)
        else:
            b["kv"] = (float(net.trafo.at[b["element_index"], "vn_hv_kv"]),
                       float(net.trafo.at[b["element_index"], "vn_lv_kv"]))
        branches.append(b)
    contingencies = []
    for row in _read(inputs / "contingencies.csv"):
        contingencies.append({"id": row["contingency_id"], "elements": row["outaged_elements"].split(";")})
    assert np.allclose(net.bus.min_vm_pu, BASE_V[0]) and np.allclose(net.bus.max_vm_pu, BASE_V[1])
    study = Study(net, units, branches, contingencies)
    study.unit_by_id = {u["unit_id"]: u for u in units}
    study.branch_by_id = {b["branch_id"]: b for b in branches}
    return study


def _rated_ka(rate_mva: float, kv: float) -> float:
    return rate_mva / (math.sqrt(3) * kv)


def _rating_arrays(study: Study) -> dict:
    """Per element type: branch ids, element indices, the row in net.bus of the from/HV bus, and
    rated currents (kA) at each end, for the normal and the emergency rating."""
    if study._arrays is None:
        arrays = {}
        for kind, end_bus in (("line", "from_bus"), ("trafo", "hv_bus")):
            rows = [b for b in study.branches if b["element"] == kind]
            idx = np.array([b["element_index"] for b in rows], dtype=int)
            arrays[kind] = {
                "ids": [b["branch_id"] for b in rows],
                "idx": idx,
                "bus_row": study.net.bus.index.get_indexer(study.net[kind][end_bus].to_numpy()[idx]),
                **{f"{key}_{end}": np.array([_rated_ka(b[key], b["kv"][end]) for b in rows])
                   for key in ("rate_a_mva", "rate_b_mva") for end in (0, 1)},
            }
        study._arrays = arrays
    return study._arrays


def branch_currents(study: Study, net) -> dict[str, np.ndarray]:
    """Current (kA) of every rated branch as solved, and whether it is in service."""
    arr = _rating_arrays(study)
    line, tr = arr["line"], arr["trafo"]
    return {"line": net.res_line["i_ka"].to_numpy()[line["idx"]],
            "line_on": net.line["in_service"].to_numpy()[line["idx"]],
            "trafo_hv": net.res_trafo["i_hv_ka"].to_numpy()[tr["idx"]],
            "trafo_lv": net.res_trafo["i_lv_ka"].to_numpy()[tr["idx"]],
            "trafo_on": net.trafo["in_service"].to_numpy()[tr["idx"]]}


def branch_loadings(study: Study, currents: dict[str, np.ndarray], rate_key: str) -> dict[str, float]:
    """Loading in percent of the given rating for every in-service, energised branch."""
    arr = _rating_arrays(study)
    out = {}
    line = arr["line"]
    vals = currents["line"] / line[f"{rate_key}_0"] * 100.0
    out.update({k: float(v) for k, v, live in zip(line["ids"], vals, currents["line_on"], strict=True)
                if live and v == v})
    tr = arr["trafo"]
    ihv = currents["trafo_hv"] / tr[f"{rate_key}_0"]
    ilv = currents["trafo_lv"] / tr[f"{rate_key}_1"]
    vals = np.maximum(ihv, ilv) * 100.0
    # NaN for branches left in a de-energised area
    out.update({k: float(v) for k, v, live in zip(tr["ids"], vals, currents["trafo_on"], strict=True)
                if live and v == v})
    return out


def apply_dispatch(study: Study, net, dispatch: dict[str, float]) -> None:
    for u in study.dispatchable:
        net.gen.at[u["element_index"], "p_mw"] = float(dispatch[u["unit_id"]])


@dataclass
class CaseResult:
    case_id: str
    converged: bool
    deenergised_buses: int = 0
    lost_load_mw: float = 0.0
    loadings: dict[str, float] = field(default_factory=dict)
    vm: dict[int, float] = field(default_factory=dict)  # IEEE bus number -> pu, energised buses
    limits: tuple[float, float] = BASE_V
    slack_p_mw: float | None = None
    deenergised: list[int] = field(default_factory=list)  # pandapower bus indices
    flows: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # MW, MVA, pu at the from/HV end
    rate_key: str = "rate_a_mva"  # the rating of the loadings
    currents: dict[str, np.ndarray] = field(default_factory=dict)  # branch_currents

    @property
    def max_loading(self) -> tuple[str | None, float | None]:
        if not self.loadings:
            return None, None
        bid = max(sorted(self.loadings), key=lambda k: self.loadings[k])
        return bid, self.loadings[bid]

    @property
    def overloads(self) -> list[str]:
        return sorted(k for k, v in self.loadings.items() if v > 100.0)

    @property
    def voltage_violations(self) -> list[int]:
        lo, hi = self.limits
        return sorted(b for b, v in self.vm.items() if v < lo or v > hi)

    @property
    def secure(self) -> bool:
        return self.converged and not self.overloads and not self.voltage_violations


def _collect(study: Study, net, case_id: str, rate_key: str, limits, detail: bool = False) -> CaseResult:
    buses = net.res_bus.index.to_numpy()
    vm = net.res_bus["vm_pu"].to_numpy()
    on = vm == vm
    energised = dict(zip((buses[on] + 1).tolist(), vm[on].tolist(), strict=True))
    dead = buses[~on].tolist()
    lost = float(net.load.loc[net.load.bus.isin(dead) & net.load.in_service, "p_mw"].sum()) if dead else 0.0
    currents = branch_currents(study, net)
    res = CaseResult(case_id, True, len(dead), lost, branch_loadings(study, currents, rate_key), energised, limits,
                     deenergised=dead, rate_key=rate_key, currents=currents)
    if detail:
        arr = _rating_arrays(study)
        for kind, res_table, pcol, qcol in (("line", net.res_line, "p_from_mw", "q_from_mvar"),
                                            ("trafo", net.res_trafo, "p_hv_mw", "q_hv_mvar")):
            idx = arr[kind]["idx"]
            p = res_table[pcol].to_numpy()[idx]
            q = res_table[qcol].to_numpy()[idx]
            v = vm[arr[kind]["bus_row"]]  # res_bus has the rows of net.bus
            for k, pp_, qq, vv in zip(arr[kind]["ids"], p, q, v, strict=True):
                if pp_ == pp_:
                    res.flows[k] = (float(pp_), float(math.hypot(pp_, qq)), float(vv))
    return res


def flat_start(net) -> dict:
    """pandapower's own "auto" start, given explicitly: voltage angles from a DC power flow and
    magnitudes at the mean set-point of the in-service ext_grids and generators, summed as
    pandapower sums them (identical floats). pandapower finds that mean with six
    DataFrame.query calls per run, about a quarter of a contingency's time."""
    vm, n = 0.0, 0
    for table in (net.ext_grid, net.gen):
        on = table["in_service"].to_numpy(dtype=bool)
        vm, n = vm + table["vm_pu"].to_numpy()[on].sum(), n + int(on.sum())
    assert not net.vsc.in_service.any()  # pandapower counts slack converters too; case118 has none
    return {"init_vm_pu": vm / n, "init_va_degree": "dc"}


def solve_base(study: Study, dispatch: dict[str, float], detail: bool = False) -> tuple[CaseResult, object]:
    net = _copy(study.net)
    apply_dispatch(study, net, dispatch)
    start = flat_start(net)
    try:
        pp.runpp(net, **PF_OPTIONS, **start)
    except Exception:  # pandapower raises its own non-convergence errors
        return CaseResult("BASE", False), net
    res = _collect(study, net, "BASE", "rate_a_mva", BASE_V, detail)
    res.slack_p_mw = float(net.res_ext_grid.at[study.slack["element_index"], "p_mw"])
    return res, net


def _copy(net):
    import copy

    return copy.deepcopy(net)


def contingency_net(study: Study, base_net, slack_p_mw: float):
    """The solved base case turned into the post-contingency model: the ext_grid becomes a slack
    generator at its base-case output, and every in-service unit gets its participation factor
    as distributed-slack weight."""
    net = _copy(base_net)
    s = study.slack
    eg = net.ext_grid.loc[s["element_index"]]
    net.ext_grid.at[s["element_index"], "in_service"] = False
    net.gen["slack_weight"] = 0.0
    for u in study.units:
        if u["element"] == "gen":
            net.gen.at[u["element_index"], "slack_weight"] = u["participation_factor"]
    gi = pp.create_gen(net, bus=int(eg.bus), p_mw=slack_p_mw, vm_pu=float(eg.vm_pu), slack=True,
                       slack_weight=s["participation_factor"], max_q_mvar=float(eg.max_q_mvar),
                       min_q_mvar=float(eg.min_q_mvar), max_p_mw=s["p_max_mw"], min_p_mw=s["p_min_mw"],
                       name=s["unit_id"])
    return net, gi


def solve_contingency(study: Study, cnet, cont: dict, detail: bool = False) -> CaseResult:
    saved = []
    for el in cont["elements"]:
        if el in study.branch_by_id:
            b = study.branch_by_id[el]
            table = cnet.line if b["element"] == "line" else cnet.trafo
            idx = b["element_index"]
        else:
            u = study.unit_by_id[el]
            if u["element"] == "ext_grid":
                table, idx = cnet.gen, int(cnet.gen.index[cnet.gen.name == u["unit_id"]][0])
            else:
                table, idx = cnet.gen, u["element_index"]
        saved.append((table, idx, "in_service", table.at[idx, "in_service"]))
        table.at[idx, "in_service"] = False
    ref = cnet.gen.index[cnet.gen.slack.astype(bool)][0]
    if not cnet.gen.at[ref, "in_service"]:
        # The slack unit itself is lost: another unit must hold the angle reference. With a
        # distributed slack the choice does not change the solution.
        live = cnet.gen[cnet.gen.in_service & (cnet.gen.slack_weight > 0)]
        new_ref = live.sort_values("slack_weight", ascending=False, kind="stable").index[0]
        saved.append((cnet.gen, new_ref, "slack", False))
        cnet.gen.at[new_ref, "slack"] = True
    start = flat_start(cnet)
    try:
        pp.runpp(cnet, distributed_slack=True, **PF_OPTIONS, **start)
        res = _collect(study, cnet, cont["id"], "rate_b_mva", POST_V, detail)
    except Exception:  # non-convergence
        res = CaseResult(cont["id"], False, limits=POST_V)
    finally:
        for table, idx, column, state in reversed(saved):
            table.at[idx, column] = state
    return res


def screen(study: Study, dispatch: dict[str, float], only: list[str] | None = None,
           detail: bool = False) -> list[CaseResult]:
    """The base case followed by every contingency (or those in `only`), in file order."""
    base, net = solve_base(study, dispatch, detail)
    if not base.converged:
        return [base]
    cnet, _ = contingency_net(study, net, base.slack_p_mw)
    out = [base]
    for cont in study.contingencies:
        if only is None or cont["id"] in only:
            out.append(solve_contingency(study, cnet, cont, detail))
    return out


def rerate(study: Study, results: list[CaseResult]) -> list[CaseResult]:
    """The same solved cases with their loadings against the ratings of `study`: ratings do not
    enter the power flow."""
    return [replace(r, loadings=branch_loadings(study, r.currents, r.rate_key)) if r.converged else r
            for r in results]


def unit_cost(u: dict, p: float) -> float:
    return u["cost_c0_eur_per_h"] + u["cost_c1_eur_per_mwh"] * p + u["cost_c2_eur_per_mw2h"] * p * p


def dispatch_cost(study: Study, dispatch: dict[str, float], slack_p_mw: float) -> float:
    """Hourly production cost of the in-service units that produce (condensers and units on
    outage cost nothing); the slack unit at its base-case output."""
    total = sum(unit_cost(u, dispatch[u["unit_id"]]) for u in study.dispatchable)
    return total + unit_cost(study.slack, slack_p_mw)


def schedule(study: Study) -> dict[str, float]:
    return {u["unit_id"]: u["scheduled_p_mw"] for u in study.dispatchable}


def result_row(res: CaseResult) -> dict:
    bid, mx = res.max_loading
    vms = list(res.vm.values())
    return {
        "contingency_id": res.case_id,
        "converged": int(res.converged),
        "deenergised_buses": res.deenergised_buses if res.converged else "",
        "lost_load_mw": f"{res.lost_load_mw:.2f}" if res.converged else "",
        "max_loading_pct": f"{mx:.2f}" if mx is not None else "",
        "max_loading_branch": bid or "",
        "overloaded_branches": len(res.overloads) if res.converged else "",
        "min_vm_pu": f"{min(vms):.4f}" if vms else "",
        "max_vm_pu": f"{max(vms):.4f}" if vms else "",
        "voltage_violations": len(res.voltage_violations) if res.converged else "",
        "secure": int(res.secure),
    }


RESULT_COLUMNS = ["contingency_id", "converged", "deenergised_buses", "lost_load_mw", "max_loading_pct",
                  "max_loading_branch", "overloaded_branches", "min_vm_pu", "max_vm_pu", "voltage_violations",
                  "secure"]
