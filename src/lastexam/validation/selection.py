"""Which gates `lastexam validate` runs: all of them, the static ones, or those named with --gates."""

from __future__ import annotations

from dataclasses import dataclass

from lastexam.errors import LastexamError

# gate name -> the gates whose results it needs (fixtures built by make.sh and the determinism
# gate grade the oracle's output). "static" needs no sandbox; every other gate does.
GATE_NEEDS: dict[str, tuple[str, ...]] = {
    "static": (),
    "oracle": (),
    "nop": (),
    "negative": ("oracle",),
    "positive": ("oracle",),
    "determinism": ("oracle",),
    "malformed": ("oracle",),  # the other outputs come from the oracle's
    "generate": (),
    "blas": ("oracle", "generate"),  # reruns what passed of those under other BLAS kernels
}


@dataclass(frozen=True)
class GateSelection:
    names: frozenset[str]

    def runs(self, gate: str) -> bool:
        return gate in self.names

    @property
    def sandboxed(self) -> bool:
        return bool(self.names - {"static"})

    @property
    def complete(self) -> bool:
        return self.names >= GATE_NEEDS.keys()


ALL_GATES = GateSelection(frozenset(GATE_NEEDS))
STATIC_GATES = GateSelection(frozenset({"static"}))


def parse_gates(text: str) -> GateSelection:
    """`--gates a,b`: the named gates plus the ones they need; unknown names are an error."""
    asked = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in asked if n not in GATE_NEEDS]
    if unknown or not asked:
        what = f"unknown gate name(s) {', '.join(map(repr, unknown))}" if unknown else "no gate named"
        raise LastexamError(f"{what}; known gates: {', '.join(GATE_NEEDS)}", field="--gates")
    names = set(asked)
    for n in asked:
        names.update(GATE_NEEDS[n])
    return GateSelection(frozenset(names))
