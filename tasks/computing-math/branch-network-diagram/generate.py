"""Seeded generator of inputs/ and reference/ for branch-network-diagram: python3 generate.py --out DIR.

Inputs: the site's VLAN and subnet plan, the asset register and the interface export of the IPAM.
Reference: the logical topology those imply (which device has an active address in which VLAN).
"""

import argparse
import csv
import io
import ipaddress
import json
import random
from pathlib import Path

SEED = 11
CANARY = "688446e1-c70b-4d22-96a8-0820938b833e"
SITE = "lds"

# VLAN id, name, network; the small subnets share one /24, so a /24 assumption fails.
VLANS = [
    (10, "servers", "10.48.1.0/26"),
    (20, "management", "10.48.1.64/27"),
    (30, "voice", "10.48.1.96/27"),
    (40, "printers", "10.48.1.128/28"),
    (50, "cctv", "10.48.1.144/28"),
    (60, "users", "10.48.2.0/24"),
    (90, "backup", "10.48.3.0/25"),
    (100, "fw-transit", "10.48.255.0/29"),
    (900, "isp-handoff", "203.0.113.0/30"),
]
ROUTED = [10, 20, 30, 40, 50, 60]  # the firewall's inside interfaces; backup is not routed


def host(vlan: int, n: int) -> str:
    net = ipaddress.ip_network(dict((v, c) for v, _, c in VLANS)[vlan])
    return str(net.network_address + n)


def build(rng: random.Random) -> tuple[list[dict], list[dict]]:
    """Devices (hostname, role, model, status) and interfaces (hostname, interface, address, admin)."""
    devices: list[dict] = []
    ifaces: list[dict] = []

    def dev(name: str, role: str, model: str, status: str = "in service") -> None:
        devices.append({"hostname": f"{name}", "role": role, "model": model, "status": status})

    def nic(name: str, iface: str, address: str, admin: str = "up") -> None:
        ifaces.append({"hostname": name, "interface": iface, "address": address, "admin": admin})

    dev(f"rtr-{SITE}-01", "router", "Cisco ISR 1111")
    nic(f"rtr-{SITE}-01", "Gi0/0/0", host(900, 2))
    nic(f"rtr-{SITE}-01", "Gi0/0/1", host(100, 1))
    nic(f"rtr-{SITE}-01", "Loopback0", f"10.255.48.{rng.randint(1, 9)}")
    dev(f"fw-{SITE}-01", "firewall", "FortiGate 60F")
    nic(f"fw-{SITE}-01", "wan1", host(100, 2))
    for v in ROUTED:
        nic(f"fw-{SITE}-01", f"internal.{v}", host(v, 1))
    for sw, n in (("core", 2), ("acc01", 3), ("acc02", 4)):
        dev(f"sw-{SITE}-{sw}", "switch", "Aruba 6100")
        nic(f"sw-{SITE}-{sw}", "vlan20", host(20, n))
    servers = [("dc01", True), ("file01", True), ("app01", False), ("app02", False)]
    for i, (name, backup) in enumerate(servers):
        h = f"srv-{SITE}-{name}"
        status = "decommissioned" if name == "app02" else "in service"
        dev(h, "server", "Dell PowerEdge R650", status)
        nic(h, "bond0", host(10, 10 + i))
        nic(h, "eth0", "")
        nic(h, "eth1", "")
        nic(h, "idrac", host(20, 21 + 2 * i))
        if backup:
            # file01's backup NIC is shut: the backup job moved to the SAN
            nic(h, "eth2", host(90, 10 + i), "down" if name == "file01" else "up")
    dev(f"nas-{SITE}-01", "storage", "Synology RS1221+")
    nic(f"nas-{SITE}-01", "bond0", host(90, 5))
    nic(f"nas-{SITE}-01", "eth4", host(20, 30))  # the top of the /27: .94
    dev(f"vgw-{SITE}-01", "voice gateway", "AudioCodes MP-124")
    nic(f"vgw-{SITE}-01", "eth0", host(30, rng.randint(2, 5)))
    dev(f"pbx-{SITE}-01", "call manager", "Virtual appliance")
    nic(f"pbx-{SITE}-01", "ens192", host(30, 30))  # .126
    for i in range(2):
        dev(f"prn-{SITE}-{i + 1:02d}", "printer", "HP LaserJet M507")
        nic(f"prn-{SITE}-{i + 1:02d}", "eth0", host(40, 12 + i))  # .140, .141
    dev(f"nvr-{SITE}-01", "video recorder", "Hikvision DS-7716")
    nic(f"nvr-{SITE}-01", "lan1", host(50, 6))
    nic(f"nvr-{SITE}-01", "lan2", host(20, 20))
    dev(f"cam-{SITE}-01", "camera", "Axis P3265")
    nic(f"cam-{SITE}-01", "eth0", host(50, 14))  # .158
    dev(f"wlc-{SITE}-01", "wireless controller", "Aruba 7005")
    nic(f"wlc-{SITE}-01", "mgmt", host(20, 8))
    nic(f"wlc-{SITE}-01", "users", host(60, 5))
    dev(f"kiosk-{SITE}-01", "kiosk", "HP Elite t655")
    nic(f"kiosk-{SITE}-01", "eth0", host(60, rng.randint(40, 60)))
    dev(f"ups-{SITE}-01", "UPS", "APC SMT3000 NMC3", "decommissioned")
    nic(f"ups-{SITE}-01", "nmc", host(20, 12))
    rng.shuffle(devices)
    return devices, ifaces


def to_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    devices, ifaces = build(rng)
    subnets = [{"vlan": v, "name": n, "network": c,
                "gateway": "" if v in (90, 900) else host(v, 1)} for v, n, c in VLANS]
    subnets[-1]["gateway"] = host(900, 1)
    (out / "inputs" / "subnets.csv").write_text(to_csv(subnets))
    (out / "inputs" / "devices.csv").write_text(to_csv(devices))
    (out / "inputs" / "interfaces.csv").write_text(to_csv(ifaces))

    in_service = sorted(d["hostname"] for d in devices if d["status"] == "in service")
    nets = [(v, ipaddress.ip_network(c)) for v, _, c in VLANS]
    links = set()
    for i in ifaces:
        if i["hostname"] not in in_service or i["admin"] != "up" or not i["address"]:
            continue
        a = ipaddress.ip_address(i["address"])
        links.update((i["hostname"], v) for v, net in nets if a in net)
    expected = {
        "canary": CANARY,
        "devices": in_service,
        "left_out": sorted(d["hostname"] for d in devices if d["status"] != "in service"),
        "vlan_networks": {str(v): c for v, _, c in VLANS},
        "attachments": sorted([h, v] for h, v in links),
        "firewall": f"fw-{SITE}-01",
        "router": f"rtr-{SITE}-01",
    }
    (out / "reference" / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
