"""Preventive security-constrained redispatch: a convex linearised N-1 SCOPF, solved exactly,
re-linearised at its own AC operating point until it is a fixed point, then verified on the AC
model.

Each iteration screens the dispatch with the full AC model (pandapower) and linearises every
base-case and post-contingency branch loading that is near or above its limit in the unit
outputs, with pandapower's DC transfer factors (PTDF from makePTDF, post-outage factors by the
flow-cancelling (LODF) method, the participation-factor response of lost units and islands),
scaled by the AC operating point of the branch. The subproblem, the production cost (convex
quadratic costs as a fine piecewise-linear function) under those linear constraints and the
unit and slack limits, is a linear program solved to optimality by HiGHS (one optimal cost,
no line searches). The iteration stops when the optimum no longer moves the dispatch and the
AC screening of that dispatch is N-1 secure.
"""

from __future__ import annotations

import sys

import numpy as np
import study_model as sm
from pandapower.pypower.makePTDF import makePTDF
from scipy.optimize import linprog

NEAR = 95.0  # % of rating from which a loading is kept as a constraint
LIMIT = 99.8  # % of rating the linearised loadings may reach (0.2 points for rounding to 0.01 MW)
SEGMENTS = 60  # piecewise-linear segments per unit cost curve (error < 0.5 EUR/h per unit)
STEP = 0.01  # MW: the dispatch is rounded to this before every AC screening
MOVE = 0.2  # MW: the largest change of any unit at which the iteration is a fixed point
DAMPING = 0.5  # share of the subproblem's step taken while its optimum still moves (the DC
# factors misjudge the AC loadings by a few percent, so full steps overshoot and oscillate);
# once the optimum stays put from one linearisation to the next, the full step is taken
MAX_ITER = 16
WATCH = 80.0  # % of rating from which a contingency is re-run between full screenings...
PUSH = 1.01  # ...if it carries at least 1 % more current on that branch than the base case


def thermally_secure(results: list[sm.CaseResult]) -> bool:
    base = results[0]
    if not base.secure or len(results) < 2:
        return False
    return all(r.converged and not r.overloads for r in results[1:])


def pushes(study: sm.Study, base: sm.CaseResult, case: sm.CaseResult) -> bool:
    """Whether the contingency loads a branch to WATCH % of its emergency rating with more
    current than the base case. A branch the contingency does not load further (the radial
    line of a unit, in every contingency) is held by the base-case limit, on its lower normal
    rating: re-running every such case between full screenings only costs time."""
    for b, v in case.loadings.items():
        rating = study.branch_by_id[b]
        if v >= WATCH and v * rating["rate_b_mva"] > PUSH * base.loadings.get(b, 0.0) * rating["rate_a_mva"]:
            return True
    return False


def slack_ok(study: sm.Study, p: float) -> bool:
    s = study.slack
    return s["p_min_mw"] - 1e-6 <= p <= s["p_max_mw"] + 1e-6


class Sensitivities:
    """dF/dP (MW of branch flow per MW of unit output, the slack unit balancing the base case)
    for the base case and each contingency, from the DC transfer factors of the intact network."""

    def __init__(self, study: sm.Study, base_net) -> None:
        ppc = base_net._ppc
        lookup = base_net._pd2ppc_lookups
        self.bus_of = lambda pd_bus: int(lookup["bus"][pd_bus])
        slack_bus = self.bus_of(int(base_net.ext_grid.at[study.slack["element_index"], "bus"]))
        self.ptdf = np.asarray(makePTDF(ppc["baseMVA"], ppc["bus"], ppc["branch"], slack=slack_bus))
        f = ppc["branch"][:, 0].real.astype(int)
        t = ppc["branch"][:, 1].real.astype(int)
        self.phi = self.ptdf[:, f] - self.ptdf[:, t]  # flow on l per MW sent across branch k
        start = {"line": lookup["branch"]["line"][0], "trafo": lookup["branch"]["trafo"][0]}
        self.row = {b["branch_id"]: start[b["element"]] + b["element_index"] for b in study.branches}
        self.study = study
        self.units = study.dispatchable
        net = study.net
        self.unit_bus = {u["unit_id"]: self.bus_of(int(net.gen.at[u["element_index"], "bus"])) for u in self.units}
        self.unit_bus[study.slack["unit_id"]] = slack_bus
        self.pd_bus = {u["unit_id"]: int(net.gen.at[u["element_index"], "bus"]) for u in self.units}
        self.pd_bus[study.slack["unit_id"]] = int(net.ext_grid.at[study.slack["element_index"], "bus"])
        self.alpha = {u["unit_id"]: u["participation_factor"] for u in [*study.units]
                      if u["status"] == "in_service" and u["participation_factor"] > 0}

    def matrix(self, case: sm.CaseResult) -> np.ndarray:
        st = self.study
        ids = [u["unit_id"] for u in self.units]
        if case.case_id == "BASE":
            return self.ptdf[:, [self.unit_bus[i] for i in ids]]
        cont = next(c for c in st.contingencies if c["id"] == case.case_id)
        out_branches = [self.row[e] for e in cont["elements"] if e in st.branch_by_id]
        lost = {e for e in cont["elements"] if e in st.unit_by_id}
        dead = set(case.deenergised)
        lost |= {u for u, b in self.pd_bus.items() if b in dead}
        m = self.ptdf
        if out_branches and not dead:
            o = out_branches
            m = self.ptdf + self.phi[:, o] @ np.linalg.solve(np.eye(len(o)) - self.phi[np.ix_(o, o)], self.ptdf[o, :])
        sens = m[:, [self.unit_bus[i] for i in ids]].copy()
        if lost:
            live = {u: a for u, a in self.alpha.items() if u not in lost}
            total = sum(live.values())
            response = sum(a / total * m[:, self.unit_bus[u]] for u, a in live.items())
            for j, uid in enumerate(ids):
                if uid in lost:
                    sens[:, j] = response
            if st.slack["unit_id"] in lost:
                sens -= response[:, None]
        return sens


def loading_gradient(sens: Sensitivities, case: sm.CaseResult, branch: str, mat: np.ndarray) -> np.ndarray:
    """d(loading %)/dP from dF/dP and the AC operating point of the branch."""
    b = sens.study.branch_by_id[branch]
    p, s_mva, vm = case.flows[branch]
    rate = b["rate_a_mva"] if case.case_id == "BASE" else b["rate_b_mva"]
    return 100.0 * mat[sens.row[branch], :] * (p / max(s_mva, 1e-6)) / (vm * rate)


def cost_segments(study: sm.Study) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit and segment: width (MW) and slope (EUR/MWh) of the chords of c1 P + c2 P^2 on a
    uniform grid from p_min to p_max; segment index of each column."""
    widths, slopes, unit = [], [], []
    for j, u in enumerate(study.dispatchable):
        edges = np.linspace(u["p_min_mw"], u["p_max_mw"], SEGMENTS + 1)
        cost = u["cost_c1_eur_per_mwh"] * edges + u["cost_c2_eur_per_mw2h"] * edges ** 2
        widths += list(np.diff(edges))
        slopes += list(np.diff(cost) / np.maximum(np.diff(edges), 1e-12))
        unit += [j] * SEGMENTS
    return np.array(widths), np.array(slopes), np.array(unit)


def solve_lp(study: sm.Study, grads: np.ndarray, now: np.ndarray, p0: np.ndarray, ps0: float) -> np.ndarray:
    """min sum of unit costs (slack unit linearised at its own quadratic curve through the
    balance Ps = Ps0 - sum(P - P0)) s.t. now + grads (P - P0) <= LIMIT, unit and slack limits."""
    units = study.dispatchable
    n = len(units)
    lo = np.array([u["p_min_mw"] for u in units])
    widths, slopes, unit = cost_segments(study)
    s = study.slack
    # Slack output as segments too: Ps = p_min_s + sum(z); balance gives sum(y) + sum(z) = const.
    s_edges = np.linspace(s["p_min_mw"], s["p_max_mw"], 4 * SEGMENTS + 1)
    s_cost = s["cost_c1_eur_per_mwh"] * s_edges + s["cost_c2_eur_per_mw2h"] * s_edges ** 2
    s_w, s_slope = np.diff(s_edges), np.diff(s_cost) / np.diff(s_edges)
    nseg, nz = len(widths), len(s_w)
    place = np.zeros((n, nseg))
    place[unit, np.arange(nseg)] = 1.0  # P = lo + place @ y
    c = np.concatenate([slopes, s_slope])
    a_ub = np.hstack([grads @ place, np.zeros((len(now), nz))]) if len(now) else None
    b_ub = LIMIT - now - grads @ (lo - p0) if len(now) else None
    total = float(np.sum(p0) + ps0)  # generation to be kept (losses held at their AC value)
    a_eq = np.concatenate([np.ones(nseg), np.ones(nz)])[None, :]
    b_eq = [total - float(np.sum(lo)) - s["p_min_mw"]]
    bounds = [(0.0, w) for w in widths] + [(0.0, w) for w in s_w]
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise SystemExit(f"linearised SCOPF: {res.message}")
    return lo + place @ res.x[:nseg]


def redispatch(study: sm.Study, start: dict[str, float], first: list[sm.CaseResult] | None = None,
               log=print) -> tuple[dict[str, float], list[sm.CaseResult]]:
    """The fixed point of the linearised SCOPF (MW, 0.01 MW steps) and its full AC screening.
    `first` may hold the full screening (detail=True) of `start`."""
    units = study.dispatchable
    ids = [u["unit_id"] for u in units]
    lo = np.array([u["p_min_mw"] for u in units])
    hi = np.array([u["p_max_mw"] for u in units])
    p = np.array([start[i] for i in ids])
    keys: list[tuple[str, str]] = []
    sens = None
    target = None
    watched: list[str] | None = None
    for it in range(MAX_ITER):
        p = np.clip(np.round(p / STEP) * STEP, lo, hi)
        dispatch = dict(zip(ids, (round(float(v), 2) for v in p), strict=True))
        # Between full screenings only the contingencies seen near a limit (or not converging)
        # are re-run; a dispatch is returned only after a full screening.
        results = first if it == 0 and first is not None else sm.screen(study, dispatch, only=watched, detail=True)
        full = watched is None
        if full:
            watched = sorted(r.case_id for r in results[1:] if not r.converged or pushes(study, results[0], r))
        base = results[0]
        if not base.converged:
            raise SystemExit(f"iteration {it}: the base case does not converge")
        if sens is None:
            _, net = sm.solve_base(study, dispatch)
            sens = Sensitivities(study, net)
        secure = thermally_secure(results) and slack_ok(study, base.slack_p_mw)
        for r in results:
            for b, v in sorted(r.loadings.items()):
                if v >= NEAR and (r.case_id, b) not in keys:
                    keys.append((r.case_id, b))
        by_id = {r.case_id: r for r in results}
        mats: dict[str, np.ndarray] = {}
        rows, now = [], []
        for case_id, b in keys:
            r = by_id.get(case_id)
            if r is None or not r.converged or b not in r.flows:
                continue
            if case_id not in mats:
                mats[case_id] = sens.matrix(r)
            rows.append(loading_gradient(sens, r, b, mats[case_id]))
            now.append(r.loadings[b])
        new = solve_lp(study, np.array(rows).reshape(len(rows), len(ids)), np.array(now), p, base.slack_p_mw)
        new = np.clip(np.round(new / STEP) * STEP, lo, hi)
        move = float(np.max(np.abs(new - p)))
        log(f"iteration {it}: cost {sm.dispatch_cost(study, dispatch, base.slack_p_mw):.1f} EUR/h, "
            f"secure {secure}, {len(now)} constraints, largest move {move:.2f} MW", file=sys.stderr)
        if secure and move <= MOVE:
            if full:
                return dispatch, results
            # The watched contingencies were just solved at this dispatch: the others complete
            # the full screening.
            done = {r.case_id: r for r in results[1:]}
            rest = sm.screen(study, dispatch, only=[c["id"] for c in study.contingencies if c["id"] not in done],
                             detail=True)
            if rest[0].converged:
                solved = done | {r.case_id: r for r in rest[1:]}
                rest = [rest[0], *(solved[c["id"]] for c in study.contingencies)]
            results = rest
            if thermally_secure(results) and slack_ok(study, results[0].slack_p_mw):
                return dispatch, results
            watched = None  # something outside the watch list: screen fully and go on
            continue
        settled = target is not None and float(np.max(np.abs(new - target))) <= MOVE
        p, target = (new if it == 0 or settled else p + DAMPING * (new - p)), new
    raise SystemExit("the linearised SCOPF did not reach a secure fixed point")
