"""Preventive security-constrained redispatch by successive linear programming on the AC model.

Each iteration screens the current dispatch with the full AC model (pandapower), keeps every
base-case and post-contingency branch loading that is violated or near its limit as a
constraint, linearises those loadings in the unit outputs with pandapower's DC transfer factors
(PTDF from makePTDF, post-outage factors by the flow-cancelling injection method, the
participation-factor response of lost units and islands), and solves the quadratic-cost
subproblem inside a trust region (SLSQP, elastic constraints). The cheapest AC-verified secure
dispatch is kept.
"""

from __future__ import annotations

import sys

import numpy as np
import study_model as sm
from pandapower.pypower.makePTDF import makePTDF
from scipy.optimize import minimize

NEAR = 93.0  # % of rating from which a loading is kept as a constraint
MARGIN = 0.5  # % of rating kept free at the linearised solution (linearisation error)
TOP_PER_BRANCH = 4
PENALTY = 1e4  # EUR/h per % of rating left violated in the subproblem
STOP_GAIN = 25.0  # EUR/h: a secure dispatch whose subproblem promises less is final
MAX_ITER = 12
WATCH = 80.0  # % of rating from which a contingency is re-run between full screenings


def thermally_secure(results: list[sm.CaseResult]) -> bool:
    base = results[0]
    if not base.secure or len(results) < 2:
        return False
    return all(r.converged and not r.overloads for r in results[1:])


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


def redispatch(study: sm.Study, start: dict[str, float], first: list[sm.CaseResult] | None = None,
               log=print) -> tuple[dict[str, float], list[sm.CaseResult]]:
    """The cheapest secure dispatch found (MW, 0.1 MW steps) and its full screening. `first` may
    hold the full screening (detail=True) of `start`."""
    units = study.dispatchable
    ids = [u["unit_id"] for u in units]
    n = len(ids)
    lo = np.array([u["p_min_mw"] for u in units])
    hi = np.array([u["p_max_mw"] for u in units])
    c1 = np.array([u["cost_c1_eur_per_mwh"] for u in units])
    c2 = np.array([u["cost_c2_eur_per_mw2h"] for u in units])
    s = study.slack
    p = np.array([start[i] for i in ids])
    keys: list[tuple[str, str]] = []
    best: tuple[float, np.ndarray, list] | None = None
    radius = 200.0
    sens = None
    watched: list[str] | None = None
    for it in range(MAX_ITER):
        p = np.clip(np.round(p, 1), lo, hi)
        dispatch = dict(zip(ids, p, strict=True))
        # Between full screenings only the contingencies seen near a limit are re-run; a dispatch
        # is accepted only after a full screening.
        if it == 0 and first is not None:
            results = first
        else:
            results = sm.screen(study, dispatch, only=watched, detail=True)
        full = watched is None
        if not full and thermally_secure(results) and slack_ok(study, results[0].slack_p_mw):
            results = sm.screen(study, dispatch, detail=True)
            full = True
        if full and len(results) > 1:
            seen = {r.case_id for r in results[1:]
                    if not r.converged or any(v >= WATCH for v in r.loadings.values())}
            watched = sorted(seen | set(watched or []))
        base = results[0]
        if not base.converged:
            radius /= 2
            p = best[1].copy() if best else np.array([start[i] for i in ids])
            continue
        if sens is None:
            _, net = sm.solve_base(study, dispatch)
            sens = Sensitivities(study, net)
        secure = full and thermally_secure(results) and slack_ok(study, base.slack_p_mw)
        cost = sm.dispatch_cost(study, dispatch, base.slack_p_mw)
        over = sorted(((v, r.case_id, b) for r in results for b, v in r.loadings.items() if v > 100.0), reverse=True)
        log(f"iteration {it}: cost {cost:.1f} EUR/h, secure {secure}, slack {base.slack_p_mw:.1f} MW, "
            f"overloads {[(c, b, round(v, 1)) for v, c, b in over[:6]]}", file=sys.stderr)
        if secure:
            if best is not None and cost >= best[0] - 0.5:
                break
            best = (cost, p.copy(), results)
        elif best is not None:
            radius /= 2
        per_branch: dict[str, list[tuple[float, str]]] = {}
        for r in results:
            for b, v in r.loadings.items():
                if v >= NEAR:
                    per_branch.setdefault(b, []).append((-v, r.case_id))
        for b in sorted(per_branch):
            for _, case in sorted(per_branch[b])[:TOP_PER_BRANCH]:
                if (case, b) not in keys:
                    keys.append((case, b))
        by_id = {r.case_id: r for r in results}
        mats: dict[str, np.ndarray] = {}
        rows, now = [], []
        for case_id, b in keys:
            r = by_id[case_id]
            if not r.converged or b not in r.flows:
                continue
            if case_id not in mats:
                mats[case_id] = sens.matrix(r)
            rows.append(loading_gradient(sens, r, b, mats[case_id]))
            now.append(r.loadings[b])
        grads, now = np.array(rows), np.array(now)
        m = len(now)
        # The slack unit balances the base case: dPs/dPi ~ -1 (losses ignored in the subproblem,
        # seen again by the next AC screening).
        p0, ps0 = p.copy(), base.slack_p_mw

        def split(z):
            return z[:n], z[n:]

        def objective(z):
            x, e = split(z)
            ps = ps0 - np.sum(x - p0)
            return float(np.sum(c1 * x + c2 * x * x) + s["cost_c1_eur_per_mwh"] * ps
                         + s["cost_c2_eur_per_mw2h"] * ps * ps + PENALTY * np.sum(e))

        def gradient(z):
            x, _ = split(z)
            ps = ps0 - np.sum(x - p0)
            gx = c1 + 2 * c2 * x - (s["cost_c1_eur_per_mwh"] + 2 * s["cost_c2_eur_per_mw2h"] * ps)
            return np.concatenate([gx, np.full(m, PENALTY)])

        cons = [
            {"type": "ineq", "fun": lambda z: (100.0 - MARGIN) - (now + grads @ (z[:n] - p0)) + z[n:],
             "jac": lambda z: np.hstack([-grads, np.eye(m)])},
            {"type": "ineq", "fun": lambda z: np.array([ps0 - np.sum(z[:n] - p0) - s["p_min_mw"],
                                                         s["p_max_mw"] - ps0 + np.sum(z[:n] - p0)]),
             "jac": lambda z: np.hstack([np.vstack([-np.ones(n), np.ones(n)]), np.zeros((2, m))])},
        ]
        bounds = [(max(lo[j], p0[j] - radius), min(hi[j], p0[j] + radius)) for j in range(n)] + [(0, None)] * m
        z0 = np.concatenate([p0, np.maximum(0.0, now - (100.0 - MARGIN))])
        sol = minimize(objective, z0, jac=gradient, bounds=bounds, constraints=cons, method="SLSQP",
                       options={"maxiter": 2000, "ftol": 1e-10})
        p = np.clip(sol.x[:n], lo, hi)
        gain = objective(np.concatenate([p0, np.zeros(m)])) - objective(np.concatenate([p, np.zeros(m)]))
        if secure and gain < STOP_GAIN:
            break
        left = [(keys[k], round(float(sol.x[n + k]), 2)) for k in range(m) if sol.x[n + k] > 1e-3]
        log(f"  {m} constraints; QP: {sol.message}; left violated: {left[:5]}", file=sys.stderr)
    if best is None:
        raise SystemExit("no secure dispatch found")
    return dict(zip(ids, (round(float(v), 1) for v in best[1]), strict=True)), best[2]
