#!/usr/bin/env python3
"""The extra placements the evaluation compiles (`memplace rewrite --compile FILE`), from a first
device run (bench/evaluate.sh's raw.tgz, unpacked: RUNS/sweep_*.jsonl, and its placements.csv):

  compile_set.py RUNS PLACEMENTS.csv OUT.json [--full 64] [--cap 40] [--cap-heavy 12]

Per kernel, the places each array took in that run's plans (union over inputs):
  - when they combine into at most --full placements: every combination with at most one
    l2persist array (one access-policy window), so that every feasible placement of the kernel
    runs through a specialised instantiation;
  - else, in this order, up to --cap (--cap-heavy for the f64 hydro kernels, whose
    instantiations take long to compile): the original placement, the rules baseline's and the
    Placer's placements, the best measured placement of each input, the engine's top 8, then
    every placement that changes one array of the original, then one array of the default.
Arrays not named in a placement are global; the default (all global) is always compiled.
"""
import argparse
import csv
import glob
import itertools
import json
from collections import OrderedDict

HEAVY = {"hydro_fb_hourglass_force", "hydro_monotonic_q"}


def parse(text):
    p = OrderedDict()
    for item in text.split(","):
        a, pl = item.split("=")
        p[a] = pl
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("placements")
    ap.add_argument("out")
    ap.add_argument("--full", type=int, default=64)
    ap.add_argument("--cap", type=int, default=40)
    ap.add_argument("--cap-heavy", type=int, default=12)
    a = ap.parse_args()
    arrays, places = OrderedDict(), OrderedDict()
    for f in sorted(glob.glob(a.runs + "/sweep_*.jsonl")):
        for line in open(f):
            j = json.loads(line)
            if j["type"] != "signature" or j.get("status") != "swept":
                continue
            arrays[j["kernel"]] = j["arrays"]
            d = places.setdefault(j["kernel"], OrderedDict())
            for arr in j["arrays"]:
                s = d.setdefault(arr, [])
                for pl in j["places"][arr]:
                    if pl not in s:
                        s.append(pl)
    rows = list(csv.DictReader(open(a.placements)))
    out = OrderedDict()
    for k, arrs in arrays.items():
        lists = [places[k][x] for x in arrs]
        n = 1
        for l in lists:
            n *= len(l)
        chosen = []

        def add(p):
            key = tuple(p[x] for x in arrs)
            if all(v == "global" for v in key) or key in chosen:
                return
            if sum(v == "l2persist" for v in key) > 1:
                return
            chosen.append(key)

        if n <= a.full:
            for combo in itertools.product(*lists):
                add(dict(zip(arrs, combo)))
            how = "all %d combinations" % n
        else:
            cap = a.cap_heavy if k in HEAVY else a.cap
            mine = [r for r in rows if r["kernel"] == k and r["dynamic_requested"] == "0"]
            for role in ("original", "rules", "memplace"):
                for r in mine:
                    if role in r["roles"].split("+"):
                        add(parse(r["placement"]))
            by_input = OrderedDict()
            for r in mine:
                if r["status"] == "ok" and r["equal"] == "1":
                    b = by_input.get(r["input"])
                    if b is None or float(r["median_ms"]) < float(b["median_ms"]):
                        by_input[r["input"]] = r
            for r in by_input.values():
                add(parse(r["placement"]))
            for t in range(1, 9):
                for r in mine:
                    if "top%d" % t in r["roles"].split("+"):
                        add(parse(r["placement"]))
            orig = next((parse(r["placement"]) for r in mine
                         if "original" in r["roles"].split("+")), {x: "global" for x in arrs})
            for base in (orig, {x: "global" for x in arrs}):
                for i, x in enumerate(arrs):
                    for pl in lists[i]:
                        p = dict(base)
                        p[x] = pl
                        add(p)
            chosen = chosen[:cap]
            how = "%d of %d combinations (capped at %d)" % (len(chosen), n, cap)
        out[k] = [OrderedDict((x, v) for x, v in zip(arrs, key) if v != "global") for key in chosen]
        print("%-26s %3d placements: %s" % (k, len(chosen), how))
    json.dump(out, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
