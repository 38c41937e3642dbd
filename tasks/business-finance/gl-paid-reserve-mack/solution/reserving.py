"""Reference reserving arithmetic in NumPy: volume-weighted chain ladder, Mack (1993) standard
errors with Mack's extrapolation of the last sigma, Bornhuetter-Ferguson and Cape Cod."""

from __future__ import annotations

import numpy as np


def factors(tri: np.ndarray) -> np.ndarray:
    """Volume-weighted age-to-age factors of a cumulative triangle (NaN below the diagonal)."""
    n = tri.shape[0]
    f = np.empty(n - 1)
    for j in range(n - 1):
        rows = n - 1 - j
        f[j] = tri[:rows, j + 1].sum() / tri[:rows, j].sum()
    return f


def sigmas(tri: np.ndarray, f: np.ndarray) -> np.ndarray:
    n = tri.shape[0]
    s2 = np.empty(n - 1)
    for j in range(n - 2):
        rows = n - 1 - j
        c0, c1 = tri[:rows, j], tri[:rows, j + 1]
        s2[j] = (c0 * (c1 / c0 - f[j]) ** 2).sum() / (rows - 1)
    s2[n - 2] = min(s2[n - 3] ** 2 / s2[n - 4], s2[n - 3], s2[n - 4])
    return s2


def mack(tri: np.ndarray):
    """Per-origin CL ultimates, reserves, Mack s.e., and the total s.e."""
    n = tri.shape[0]
    f = factors(tri)
    s2 = sigmas(tri, f)
    latest = np.array([tri[i, n - 1 - i] for i in range(n)])
    full = tri.copy()
    for i in range(n):
        for j in range(n - i, n):
            full[i, j] = full[i, j - 1] * f[j - 1]
    ult = full[:, -1]
    colsum = np.array([tri[: n - 1 - j, j].sum() for j in range(n - 1)])
    mse = np.zeros(n)
    for i in range(1, n):
        acc = 0.0
        for j in range(n - 1 - i, n - 1):
            acc += s2[j] / f[j] ** 2 * (1.0 / full[i, j] + 1.0 / colsum[j])
        mse[i] = ult[i] ** 2 * acc
    total = mse.sum()
    for i in range(1, n):
        for k in range(i + 1, n):
            acc = sum(2 * s2[j] / f[j] ** 2 / colsum[j] for j in range(n - 1 - i, n - 1))
            total += ult[i] * ult[k] * acc
    return f, s2, latest, ult, np.sqrt(mse), float(np.sqrt(total))


def bf(latest: np.ndarray, cdf: np.ndarray, premium: np.ndarray, elr: np.ndarray) -> np.ndarray:
    return latest + elr * premium * (1.0 - 1.0 / cdf)


def cape_cod(latest: np.ndarray, cdf: np.ndarray, premium: np.ndarray):
    elr = latest.sum() / (premium / cdf).sum()
    return elr, latest + elr * premium * (1.0 - 1.0 / cdf)
