"""key<TAB>value lines from analysis.R -> the nested results.json the SAP asks for."""
import json
import sys

out: dict = {}
for line in open(sys.argv[1]).read().splitlines():
    key, value = line.split("\t")
    *path, leaf = key.split(".")
    node = out
    for p in path:
        node = node.setdefault(p, {})
    if value == "NA":
        node[leaf] = None
    elif leaf in ("violating", "strata_added"):
        node[leaf] = sorted(v for v in value.split(",") if v)
    elif leaf in ("n", "events") or path[0] in ("itt_n", "dfs_events") or path[-1] == "events":
        node[leaf] = int(value)
    else:
        node[leaf] = float(value)
json.dump(out, sys.stdout, indent=2)
