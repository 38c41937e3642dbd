"""Metrics over trials: FPR and MS with bootstrap confidence intervals clustered by task,
pass@k and pass^k, paired comparisons with an exact McNemar test, costs and statuses.

Every function takes rows with the attributes of `TrialRow` (store/rows.py). Bootstrap
resampling uses a fixed seed so that the same results always print the same intervals.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lastexam.store.rows import TrialRow

if TYPE_CHECKING:
    import numpy as np

BOOTSTRAP_REPS = 1000
SEED = 20261129
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}


def _bootstrap(series: tuple[list[float], ...], counts: list[float], reps: int) -> tuple[Estimate, ...]:
    """Per series of per-task sums: the ratio to the attempts and its percentile CI, all
    series resampled with the same draws of tasks."""
    if len(counts) < 2:  # no spread between tasks; NumPy (0.1 s to import) is not needed
        return tuple(Estimate(sums[0] / counts[0], None, None) for sums in series)
    import numpy as np

    counts_a = np.array(counts)
    arrays = [np.array(sums) for sums in series]
    points = [float(sums.sum() / counts_a.sum()) for sums in arrays]
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(counts), size=(reps, len(counts)))
    means = np.stack([sums[idx].sum(axis=1) for sums in arrays]) / counts_a[idx].sum(axis=1)
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=1)
    return tuple(Estimate(p, float(lo), float(hi)) for p, lo, hi in zip(points, low, high, strict=True))


def _per_task(rows: Sequence[TrialRow]) -> tuple[list[float], list[float], list[float]]:
    """Per task: attempts, full passes and score sums. The task is the unit of resampling
    (attempts of a task stay together); ungraded trials score 0."""
    acc: dict[str, list[float]] = {}
    for r in rows:
        a = acc.get(r.task_id)
        if a is None:
            a = acc[r.task_id] = [0, 0, 0.0]
        a[0] += 1
        a[1] += r.full_pass
        a[2] += r.score or 0.0
    values = list(acc.values())
    return [float(a[0]) for a in values], [float(a[1]) for a in values], [float(a[2]) for a in values]


def fpr(rows: Sequence[TrialRow]) -> Estimate:
    return headline_estimates(rows)[0]


def mean_score(rows: Sequence[TrialRow]) -> Estimate:
    # The caller passes the trials that count (analysis/view.py); a trial with no score
    # among them scores 0.
    return headline_estimates(rows)[1]


def headline_estimates(rows: Sequence[TrialRow], reps: int = BOOTSTRAP_REPS) -> tuple[Estimate, Estimate]:
    """FPR and MS with their CIs, from one pass over the rows."""
    if not rows:
        return Estimate(None, None, None), Estimate(None, None, None)
    counts, passes, scores = _per_task(rows)
    fpr_est, ms_est = _bootstrap((passes, scores), counts, reps)
    return fpr_est, ms_est


def group_by(rows: Iterable[TrialRow], key: Callable[[TrialRow], str]) -> dict[str, list[TrialRow]]:
    groups: dict[str, list[TrialRow]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return dict(groups)


def headline(rows: Sequence[TrialRow]) -> dict[str, Any]:
    f, ms = headline_estimates(rows)
    return {
        "trials": len(rows),
        "tasks": len({r.task_id for r in rows}),
        "fpr": f.as_dict(),
        "ms": ms.as_dict(),
    }


def _mean(values: Sequence[float]) -> float:
    """The mean of a sum rounded once (math.fsum): the same on every machine, in any order."""
    return math.fsum(values) / len(values)


def _comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def task_counts(rows: Sequence[TrialRow]) -> list[tuple[int, int]]:
    """(attempts, full passes) per task: what pass@k and pass^k are computed from."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        c = counts[r.task_id]
        c[0] += 1
        c[1] += r.full_pass
    return [(n, c) for n, c in counts.values()]


def pass_at_k(rows: Sequence[TrialRow] | list[tuple[int, int]], k: int) -> float | None:
    """Unbiased pass@k (at least one of k attempts fully passes), averaged over tasks with at
    least k attempts. Takes rows or their task_counts."""
    counts = rows if rows and isinstance(rows[0], tuple) else task_counts(rows)  # type: ignore[arg-type]
    values = [1.0 - _comb(n - c, k) / _comb(n, k) for n, c in counts if n >= k]
    return _mean(values) if values else None


def pass_hat_k(rows: Sequence[TrialRow] | list[tuple[int, int]], k: int) -> float | None:
    """pass^k: all of k attempts fully pass (reliability), averaged over tasks."""
    counts = rows if rows and isinstance(rows[0], tuple) else task_counts(rows)  # type: ignore[arg-type]
    values = [_comb(c, k) / _comb(n, k) for n, c in counts if n >= k]
    return _mean(values) if values else None


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts b and c."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(_comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_comparison(a: Sequence[TrialRow], b: Sequence[TrialRow], reps: int = BOOTSTRAP_REPS) -> dict[str, Any]:
    """A minus B on the tasks both ran: FPR and MS differences with paired bootstrap CIs over
    tasks, and McNemar on full passes paired by (task, attempt)."""
    import numpy as np

    a_tasks, b_tasks = group_by(a, lambda r: r.task_id), group_by(b, lambda r: r.task_id)
    shared = sorted(set(a_tasks) & set(b_tasks))
    if not shared:
        return {"shared_tasks": 0}

    def task_means(groups: dict[str, list[TrialRow]], value: Callable[[TrialRow], float]) -> np.ndarray:
        return np.array([np.mean([value(r) for r in groups[t]]) for t in shared])

    out: dict[str, Any] = {"shared_tasks": len(shared)}
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(shared), size=(reps, len(shared)))
    alpha = (1 - CONFIDENCE) / 2
    for name, value in (("fpr", lambda r: 1.0 if r.full_pass else 0.0), ("ms", lambda r: r.score or 0.0)):
        diff = task_means(a_tasks, value) - task_means(b_tasks, value)
        boot = diff[idx].mean(axis=1)
        low, high = np.quantile(boot, [alpha, 1 - alpha]) if len(shared) > 1 else (None, None)
        out[f"{name}_diff"] = Estimate(
            float(diff.mean()), None if low is None else float(low), None if high is None else float(high)
        ).as_dict()
    a_pass = {(r.task_id, r.attempt): r.full_pass for r in a if r.task_id in b_tasks}
    b_pass = {(r.task_id, r.attempt): r.full_pass for r in b if r.task_id in a_tasks}
    pairs = [(a_pass[k], b_pass[k]) for k in sorted(set(a_pass) & set(b_pass))]
    only_a = sum(1 for x, y in pairs if x and not y)
    only_b = sum(1 for x, y in pairs if y and not x)
    out["mcnemar"] = {"pairs": len(pairs), "a_only": only_a, "b_only": only_b,
                      "p_value": mcnemar_exact(only_a, only_b)}
    return out


def costs(rows: Sequence[TrialRow]) -> dict[str, Any]:
    """Cost, tokens and wall time per trial and in total; unknown cost is reported, not 0."""
    known = [r.cost_usd for r in rows if r.cost_usd is not None]
    model_rows = [r for r in rows if r.model_calls]
    tokens = {
        kind: int(sum(getattr(r, kind) for r in rows))
        for kind in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    }
    durations = [r.duration_s for r in rows]
    return {
        "trials": len(rows),
        "cost_usd_total": round(sum(known), 6) if known else None,
        "cost_usd_per_trial": round(sum(known) / len(known), 6) if known else None,
        "trials_with_unknown_cost": sum(1 for r in model_rows if r.cost_usd is None),
        "tokens": tokens,
        "model_calls": int(sum(r.model_calls for r in rows)),
        "wall_s_total": round(sum(durations), 3),
        "wall_s_per_trial": round(statistics.median(durations), 3) if durations else None,
    }


def software_usage(rows: Sequence[TrialRow]) -> dict[str, Any]:
    """Per agent x model: the share of trials that used the task's declared software, the mean
    share of ad hoc script execs, and FPR for trials that did versus did not use it."""
    out: dict[str, Any] = {}
    for cell, group in sorted(group_by(rows, lambda r: r.cell).items()):
        known = [r for r in group if r.used_software is not None]
        used = [r for r in known if r.used_software]
        unused = [r for r in known if not r.used_software]
        shares = [r.script_share for r in group if r.script_share is not None]
        out[cell] = {
            "trials": len(group),
            "known": len(known),
            "used_share": round(len(used) / len(known), 4) if known else None,
            "fpr_used": round(sum(r.full_pass for r in used) / len(used), 4) if used else None,
            "fpr_not_used": round(sum(r.full_pass for r in unused) / len(unused), 4) if unused else None,
            "script_share": round(_mean(shares), 4) if shares else None,
        }
    return out


GUI_STATES = ("used", "opened", "bypassed", "unknown")
GUI_LABELS = {"used": "used", "opened": "opened only", "bypassed": "bypassed", "unknown": "no usable log"}


def gui_usage(rows: Sequence[TrialRow]) -> dict[str, Any]:
    """Per agent x model, over its GUI trials only: how many used the task's declared GUI
    application, only opened it, or bypassed it (or left no usable window log), with FPR and
    MS in each case."""
    out: dict[str, Any] = {}
    gui_rows = [r for r in rows if r.gui_use is not None]
    for cell, group in sorted(group_by(gui_rows, lambda r: r.cell).items()):
        entry: dict[str, Any] = {"trials": len(group)}
        for state in GUI_STATES:
            mine = [r for r in group if r.gui_use == state]
            n = len(mine)
            entry[state] = {
                "trials": n,
                "fpr": round(sum(r.full_pass for r in mine) / n, 4) if n else None,
                "ms": round(sum(r.score or 0.0 for r in mine) / n, 4) if n else None,
            }
        out[cell] = entry
    return out


def harness_model_spread(rows: Sequence[TrialRow]) -> dict[str, Any]:
    """For runs crossing agents and models on the same tasks: the spread of FPR across models
    with the harness fixed, and across harnesses with the model fixed (max - min, and the
    values), on the tasks every compared cell ran."""
    cells = group_by(rows, lambda r: f"{r.agent}\x00{r.model}")
    tasks_per_cell = {k: {r.task_id for r in v} for k, v in cells.items()}

    def spread(fixed_index: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        groups: dict[str, list[str]] = defaultdict(list)
        for key in cells:
            groups[key.split("\x00")[fixed_index]].append(key)
        for fixed, keys in sorted(groups.items()):
            varied = {k.split("\x00")[1 - fixed_index] for k in keys}
            if len(keys) < 2 or not fixed or "" in varied:
                continue  # calibration agents have no model: nothing to compare across
            shared = set.intersection(*(tasks_per_cell[k] for k in keys))
            if not shared:
                continue
            values = {}
            for k in sorted(keys):
                subset = [r for r in cells[k] if r.task_id in shared]
                values[k.split("\x00")[1 - fixed_index] or "-"] = round(
                    sum(r.full_pass for r in subset) / len(subset), 4
                )
            out[fixed or "-"] = {
                "tasks": len(shared),
                "fpr": values,
                "spread": round(max(values.values()) - min(values.values()), 4),
            }
        return out

    return {"across_models_by_harness": spread(0), "across_harnesses_by_model": spread(1)}


def visibility_gap(public: Sequence[TrialRow], private: Sequence[TrialRow],
                   reps: int = BOOTSTRAP_REPS) -> dict[str, Any]:
    """Public versus private tasks of one agent x model (the contamination signal): each
    side's FPR and MS, and public minus private with a percentile CI from resampling the
    tasks of each side apart (they are different tasks, so nothing is paired)."""
    pub, priv = headline(public), headline(private)
    gap: dict[str, Any] = {"public": pub, "private": priv}
    if not public or not private:
        return gap | {"fpr_gap": Estimate(None, None, None).as_dict(),
                      "ms_gap": Estimate(None, None, None).as_dict()}
    import numpy as np

    rng = np.random.default_rng(SEED)
    draws = []
    for rows in (public, private):
        counts, passes, scores = (np.array(a) for a in _per_task(rows))
        idx = rng.integers(0, len(counts), size=(reps, len(counts)))
        n = counts[idx].sum(axis=1)
        draws.append((passes[idx].sum(axis=1) / n, scores[idx].sum(axis=1) / n))
    alpha = (1 - CONFIDENCE) / 2
    for i, name in enumerate(("fpr", "ms")):
        value = pub[name]["value"] - priv[name]["value"]
        low, high = (None, None)
        # as for one side alone (_bootstrap): one task gives no spread between tasks
        if len({r.task_id for r in public}) > 1 and len({r.task_id for r in private}) > 1:
            low, high = (float(x) for x in np.quantile(draws[0][i] - draws[1][i], [alpha, 1 - alpha]))
        gap[f"{name}_gap"] = Estimate(value, low, high).as_dict()
    return gap
