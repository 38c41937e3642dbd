"""The industry taxonomy (clusters, subdomains, O*NET-SOC codes), shipped as package data."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Subdomain:
    id: str
    name: str
    cluster: str
    soc: tuple[str, ...]


@dataclass(frozen=True)
class Cluster:
    id: str
    name: str
    pool: int
    subdomains: tuple[Subdomain, ...]


@dataclass(frozen=True)
class Taxonomy:
    clusters: tuple[Cluster, ...]

    def cluster(self, cluster_id: str) -> Cluster | None:
        return next((c for c in self.clusters if c.id == cluster_id), None)

    def subdomain(self, subdomain_id: str) -> Subdomain | None:
        return next(
            (s for c in self.clusters for s in c.subdomains if s.id == subdomain_id), None
        )

    @property
    def subdomains(self) -> tuple[Subdomain, ...]:
        return tuple(s for c in self.clusters for s in c.subdomains)


@cache
def load_taxonomy() -> Taxonomy:
    raw = tomllib.loads(resources.files(__name__).joinpath("taxonomy.toml").read_text())
    clusters = []
    for c in raw["cluster"]:
        subs = tuple(
            Subdomain(id=s["id"], name=s["name"], cluster=c["id"], soc=tuple(s["soc"]))
            for s in c["subdomains"]
        )
        clusters.append(Cluster(id=c["id"], name=c["name"], pool=c["pool"], subdomains=subs))
    return Taxonomy(clusters=tuple(clusters))
