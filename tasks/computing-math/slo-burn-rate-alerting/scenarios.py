"""Synthetic traffic of the checkout service for generate.py: per-minute rates of every series,
turned into counters, promtool input series and the SLI counters the reference is computed from.

Traps (see slo-policy.md and prometheus.yml in inputs/): the kubernetes-pods job scrapes pod a
a second time (same app label), /healthz probe traffic is not user traffic, 429 responses are
not errors, a pod restart resets its counters, and payments-api shares the metric names.
"""

from __future__ import annotations

from collections.abc import Callable

WINDOWS = [("5m", 5), ("30m", 30), ("1h", 60), ("2h", 120), ("6h", 360), ("1d", 1440),
           ("3d", 4320)]
# severity, long window, short window, burn rate (SRE Workbook ch. 5, 30-day budget)
ALERT_ROWS = [("page", 60, 5, 14.4), ("page", 360, 30, 6.0), ("ticket", 1440, 120, 3.0),
              ("ticket", 4320, 360, 1.0)]
BUDGET = {"availability": 0.001, "latency": 0.01}

PODS = [("a", "10.42.0.11:8080", "checkout-api-7c9d8b6f4-2xk4q"),
        ("b", "10.42.1.17:8080", "checkout-api-7c9d8b6f4-8mzvt"),
        ("c", "10.42.2.9:8080", "checkout-api-7c9d8b6f4-q5d7n")]
ROUTES = {"/api/cart": 600.0, "/api/checkout": 400.0, "/healthz": 240.0}
PROBE_ROUTE = "/healthz"
BUCKETS = ["0.1", "0.3", "1.2", "+Inf"]
PAYMENTS = ("10.42.1.21:8080", "payments-api-5b6f9d7c8-k2rpx", "/v1/charge", 300.0)

Key = tuple  # (metric, (("label", "value"), ...))
Rates = dict  # Key -> per-minute increment


class Scenario:
    def __init__(self, name: str, step: int, length: int, histograms: bool,
                 overlay: Callable[[int, Rates], None], restart: tuple[str, int] | None = None,
                 noisy_pod_a: bool = False):
        self.name, self.step, self.length, self.histograms = name, step, length, histograms
        self.overlay, self.restart, self.noisy_pod_a = overlay, restart, noisy_pod_a
        self.steps = length // step
        self.increments = self._increments()
        self.sli_counters = self._sli()

    def rates_at(self, t: int) -> Rates:
        rates: Rates = {}
        for pod, instance, podname in PODS:
            base = {"app": "checkout", "instance": instance, "pod": podname}
            for route, total in ROUTES.items():
                codes = {"500": 0.25, "503": 0.0} if route != PROBE_ROUTE else {"503": 0.0}
                if route == "/api/cart":
                    codes["429"] = 4.0
                for code, r in codes.items():
                    rates[req_key(base, pod, route, code)] = r
                rates[req_key(base, pod, route, "200")] = total  # balanced after the overlay
                if self.histograms:
                    slow = {"/api/cart": 1.5, "/api/checkout": 1.0}.get(route, 0.0)
                    if self.noisy_pod_a and pod == "a":
                        slow *= 4
                    fast = {"/api/cart": 450.0, "/api/checkout": 250.0}.get(route, total)
                    over = 0.25 if slow else 0.0
                    for le, v in zip(BUCKETS, [fast, total - slow, total - over, total],
                                     strict=True):
                        rates[hist_key(base, pod, route, le)] = v
        pay = {"app": "payments", "instance": PAYMENTS[0], "pod": PAYMENTS[1],
               "route": PAYMENTS[2], "job": "payments-api"}
        rates[("http_requests_total", items(pay, code="500"))] = 0.5
        rates[("http_requests_total", items(pay, code="200"))] = PAYMENTS[3]
        self.overlay(t, rates)
        balance(rates)
        return rates

    def _increments(self) -> dict[Key, list[float]]:
        inc: dict[Key, list[float]] = {}
        for k in range(1, self.steps + 1):
            rates = self.rates_at((k - 1) * self.step)
            for key, r in rates.items():
                inc.setdefault(key, [0.0])
                inc[key].append(r * self.step)
        out: dict[Key, list[float]] = {}
        for key, values in inc.items():
            if not any(values):  # a client library creates a series on its first event
                continue
            out[key] = values
            if pod_of(key) == "a" and dict(key[1]).get("job") == "checkout-api":
                dup = dict(key[1])
                dup["job"] = "kubernetes-pods"
                out[(key[0], tuple(sorted(dup.items())))] = values
        return out

    def _sli(self) -> dict[str, tuple[list[float], list[float]]]:
        zero = [0.0] * (self.steps + 1)
        avail_bad, avail_valid, lat_bad, lat_valid = (list(zero) for _ in range(4))
        for (metric, labels), inc in self.increments.items():
            lab = dict(labels)
            if lab.get("job") != "checkout-api" or lab.get("route") == PROBE_ROUTE:
                continue
            for k, v in enumerate(inc):
                if metric == "http_requests_total":
                    avail_valid[k] += v
                    if lab["code"].startswith("5"):
                        avail_bad[k] += v
                elif lab.get("le") == "+Inf":
                    lat_valid[k] += v
                    lat_bad[k] += v
                elif lab.get("le") == "0.3":
                    lat_bad[k] -= v
        return {"availability": (avail_bad, avail_valid), "latency": (lat_bad, lat_valid)}

    def counter(self, key: Key) -> list[float]:
        values, v = [], 0.0
        for k, inc in enumerate(self.increments[key]):
            reset = self.restart and pod_of(key) == self.restart[0] and k * self.step == self.restart[1]
            v = inc if reset else v + inc
            values.append(v)
        return values


def items(base: dict, **more: str) -> tuple:
    return tuple(sorted({**base, **more}.items()))


def req_key(base: dict, pod: str, route: str, code: str) -> Key:
    return ("http_requests_total", items(base, job="checkout-api", route=route, code=code))


def hist_key(base: dict, pod: str, route: str, le: str) -> Key:
    return ("http_request_duration_seconds_bucket",
            items(base, job="checkout-api", route=route, le=le))


def pod_of(key: Key) -> str | None:
    pod = dict(key[1]).get("pod", "")
    return next((p for p, _, name in PODS if name == pod), None)


def balance(rates: Rates) -> None:
    """The 200s of each checkout route are what its total leaves after the other codes."""
    for pod, _, podname in PODS:
        for route, total in ROUTES.items():
            keys = [k for k in rates if k[0] == "http_requests_total"
                    and dict(k[1]).get("pod") == podname and dict(k[1])["route"] == route]
            ok = next(k for k in keys if dict(k[1])["code"] == "200")
            rates[ok] = total - sum(rates[k] for k in keys if k != ok)
            assert rates[ok] >= 0, (pod, route)


def add(rates: Rates, pods: str, route: str, code: str, extra: float) -> None:
    for key in rates:
        lab = dict(key[1])
        if (key[0] == "http_requests_total" and lab.get("job") == "checkout-api"
                and pod_of(key) in pods and lab["route"] == route and lab["code"] == code):
            rates[key] += extra


def num(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(x)


def encode(values: list[float]) -> str:
    """promtool's expanding notation: runs of constant difference as 'a+bxn'."""
    parts, i, n = [], 0, len(values) - 1
    while i <= n:
        if i == n:
            parts.append(num(values[i]))
            break
        d, j = values[i + 1] - values[i], i + 1
        while j + 1 <= n and values[j + 1] - values[j] == d:
            j += 1
        sign = "+" if d >= 0 else "-"
        parts.append(f"{num(values[i])}{sign}{num(abs(d))}x{j - i}")
        i = j + 1
    return " ".join(parts)


def selector(key: Key) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in key[1])
    return f"{key[0]}{{{inner}}}"


def build_series(scn: Scenario) -> list[tuple[str, str]]:
    out = []
    for key in sorted(scn.increments):
        values = scn.counter(key)
        out.append((selector(key), encode(values)))
        lab = dict(key[1])
        if lab.get("le") == "+Inf":
            count = (key[0].replace("_bucket", "_count"),
                     tuple(sorted((k, v) for k, v in key[1] if k != "le")))
            out.append((selector(count), encode(values)))
    return out


def outage(t: int, rates: Rates) -> None:
    if 60 <= t < 80:
        add(rates, "bc", "/api/checkout", "503", 200.0)


def burn(start: int, extra: float) -> Callable[[int, Rates], None]:
    """From `start` on, `extra` more 500s a minute on every user route of every pod."""
    def overlay(t: int, rates: Rates) -> None:
        if t >= start:
            for route in ("/api/cart", "/api/checkout"):
                add(rates, "abc", route, "500", extra)
    return overlay


def quiet(t: int, rates: Rates) -> None:
    if 60 <= t < 100:
        add(rates, "abc", "/api/cart", "429", 176.0)
    if 110 <= t < 140:
        add(rates, "a", "/api/checkout", "503", 3.0)
    if 145 <= t < 150:
        add(rates, "b", PROBE_ROUTE, "503", 240.0)


def latency(t: int, rates: Rates) -> None:
    if 90 <= t < 150:
        for key in rates:
            lab = dict(key[1])
            if key[0].endswith("_bucket") and lab["route"] == "/api/checkout":
                # 200 requests a minute move from under 100 ms to over 300 ms, 20 of them
                # past 1.2 s: the cumulative buckets below them lose them
                rates[key] -= {"0.1": 200.0, "0.3": 200.0, "1.2": 20.0}.get(lab["le"], 0.0)


def duplicates(t: int, rates: Rates) -> None:
    if t >= 150:
        for route in ("/api/cart", "/api/checkout"):
            add(rates, "bc", route, "503", 12.375)
    if t >= 170:
        for key in rates:
            if dict(key[1]).get("app") == "payments" and dict(key[1])["code"] == "500":
                rates[key] += 90.0


def spike(t: int, rates: Rates) -> None:
    """A bad deploy rolled back within 4 minutes: 100 503s a minute, far too little budget
    to page on, however hot the 5-minute window runs."""
    if 360 <= t < 364:
        add(rates, "bc", "/api/checkout", "503", 50.0)


SCENARIOS = [
    Scenario("hard-outage", 1, 210, False, outage),
    Scenario("slow-burn-4.5x", 1, 300, False, burn(60, 2.0)),
    Scenario("creeping-1.5x", 1, 360, False, burn(120, 0.5)),
    Scenario("two-days-4.5x", 10, 2880, False, burn(720, 2.0)),
    Scenario("quiet-429-restart", 1, 200, False, quiet, restart=("b", 150)),
    Scenario("latency-regression", 1, 210, True, latency),
    Scenario("scrape-duplicates", 1, 210, True, duplicates, noisy_pod_a=True),
    Scenario("deploy-spike", 1, 400, False, spike),
]


def sample_exposition() -> str:
    """A /federate snapshot as the platform team pulled it: three days of steady traffic."""
    scn = Scenario("sample", 60, 4320, True, lambda t, r: None, noisy_pod_a=False)
    stamp = 1764547200000 + 4320 * 60000
    lines = ["# TYPE http_requests_total counter",
             "# TYPE http_request_duration_seconds histogram"]
    for key in sorted(scn.increments):
        value = scn.counter(key)[-1]
        lines.append(f"{selector(key)} {num(value)} {stamp}")
        if dict(key[1]).get("le") == "+Inf":
            labels = tuple((k, v) for k, v in key[1] if k != "le")
            lines.append(f"{selector(('http_request_duration_seconds_count', labels))} "
                         f"{num(value)} {stamp}")
            lines.append(f"{selector(('http_request_duration_seconds_sum', labels))} "
                         f"{num(round(value * 0.087, 3))} {stamp}")
    return "\n".join(lines) + "\n"
