#!/usr/bin/env python3
"""The extra placements to compile for the evaluation (`memplace rewrite --compile FILE`), from a
first device run's placements.csv: per kernel, over every input, the Placer's decision, the
engine's best, the rules baseline, the engine's top K (default 4) and the original placement,
each placement once, at most MAX (default 16) per kernel in that order of priority.

  compile_set.py PLACEMENTS.csv OUT.json [--top 4] [--max 16]
"""
import argparse
import csv
import json
from collections import OrderedDict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("placements")
    ap.add_argument("out")
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--max", type=int, default=16)
    a = ap.parse_args()
    priority = ["memplace", "engine_best", "rules", "original"] + \
        ["top%d" % k for k in range(1, a.top + 1)]
    per = OrderedDict()
    rows = list(csv.DictReader(open(a.placements)))
    for role in priority:
        for r in rows:
            if r["dynamic_requested"] == "1" or role not in r["roles"].split("+"):
                continue
            lst = per.setdefault(r["kernel"], [])
            if r["placement"] not in lst and len(lst) < a.max:
                lst.append(r["placement"])
    out = OrderedDict()
    for kernel, lst in per.items():
        out[kernel] = []
        for text in lst:
            p = OrderedDict()
            for item in text.split(","):
                arr, place = item.split("=")
                if place != "global":
                    p[arr] = place
            if p:
                out[kernel].append(p)
    json.dump(out, open(a.out, "w"), indent=1)
    print("%s: %s" % (a.out, ", ".join("%s %d" % (k, len(v)) for k, v in out.items())))


if __name__ == "__main__":
    main()
