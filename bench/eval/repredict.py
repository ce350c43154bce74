#!/usr/bin/env python3
"""Re-scores an evaluation without a GPU: the engine of this checkout predicts every placement a
device run measured, from the Placer's traces of that run (issue 8, item 5: fix the model, not
the benchmark, and see what the fix does to the figures before spending device time).

  repredict.py DIR [--memplace build/bin/memplace] [--spec h100] [--cases PROG[,PROG...]]
               [--detail] [-- extra `memplace place` options]

DIR holds what bench/evaluate.sh brought back: placements.csv, cases.csv and the Placer's traces
(traces.tar.xz, unpacked into DIR/traces on first use).

For each kernel x input it runs `memplace place TRACE --spec SPEC --evaluate P ...` on every
placement measured through the runtime's own dispatch, then recomputes as analyze.py does:
  rho       Spearman's rank correlation of predicted and measured time (model-feasible ones);
  choice    the Placer's rule on the measured placements: the least predicted time, an
            uncompiled (dynamic) placement charged the Placer's 1.10 penalty; among equals a
            compiled one, then the one closest to the original; each placement is also tried
            with its read-only/global arrays put back where the original keeps them where the
            model prices both alike; the original stays unless the choice is predicted 1.02x faster;
  within 5% the choice's measured time against the best measured;
  share     geomean speedup of the choice over the original / the oracle's.
With --tune K (default 3) the choice is then the Placer's on-line tuning among its shortlist
(with --explore N, default 2, exploration moves as MEMPLACE_TUNE_EXPLORE),
with the sweep's medians standing in for the Placer's own timed launches.
The choice is made among the measured placements only (a new model may prefer one that was not
measured; such cases are counted and listed with --detail).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tarfile
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from analyze import spearman  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PENALTY = 1.10
THRESHOLD = 1.02
ALIASES = {"global", "readonly"}  # one option in the model on sm_70+ unless reads are ordered


def parse(p):
    return OrderedDict(x.split("=", 1) for x in p.split(",") if x)


def unparse(d):
    """The canonical text of a placement: arrays sorted by name."""
    return ",".join("%s=%s" % kv for kv in sorted(d.items()))


def load_rows(d):
    with open(os.path.join(d, "placements.csv")) as f:
        prows = list(csv.DictReader(f))
    with open(os.path.join(d, "cases.csv")) as f:
        crows = list(csv.DictReader(f))
    return prows, crows


def traces_dir(d):
    t = os.path.join(d, "traces")
    if not os.path.isdir(t):
        with tarfile.open(os.path.join(d, "traces.tar.xz")) as tf:
            tf.extractall(d)
    return t


def find_trace(tdir, prog, inp, kernel):
    folder = os.path.join(tdir, "%s__%s" % (prog, inp))
    if not os.path.isdir(folder):
        return None
    names = sorted(f for f in os.listdir(folder) if f.startswith(kernel + "-"))
    return os.path.join(folder, names[0]) if names else None


def predict(args, trace, placements):
    """{placement string: predicted seconds or None (infeasible)} from one `memplace place`."""
    out = {}
    chunk = 64  # keep command lines short
    for i in range(0, len(placements), chunk):
        cmd = [args.memplace, "place", trace, "--spec", args.spec, "--json", "--top", "1"]
        for p in placements[i:i + chunk]:
            cmd += ["--evaluate", p]
        cmd += args.extra
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd[:3]), r.stderr.strip()[-400:]))
        j = json.loads(r.stdout)
        for e in j["evaluated"]:
            out[e["request"]] = e["predicted_time"] if e["feasible"] else None
    return out


def choose(cands, original, jit=True):
    """The Placer's rule (placer/src/placer.cpp runEngine) among measured candidates:
    cands = [(placement dict, predicted s, compiled bool)]. With jit, the fastest placement not
    compiled in replaces the decision when it is predicted THRESHOLD faster than both the
    original and the decision as it runs (its JIT placement, what the launches run once it is
    compiled)."""
    pred_of = {unparse(p): (t, c) for p, t, c in cands}
    orig_key = unparse(original)
    if orig_key not in pred_of or pred_of[orig_key][0] is None:
        return orig_key
    t_orig = pred_of[orig_key][0]
    options = []
    for p, t, c in cands:
        if t is None:
            continue
        variants = [p]
        q = OrderedDict((a, original[a] if v in ALIASES and original.get(a) in ALIASES else v)
                        for a, v in p.items())
        # put back only where the model prices both alike (Model::equivalent: not in a kernel
        # with ordered reads, where the read-only path changes the other arrays' cost)
        tq = pred_of.get(unparse(q), (None,))[0]
        if q != p and tq is not None and abs(tq - t) <= 1e-9 * t:
            variants.append(q)
        for v in variants:
            vc = pred_of[unparse(v)][1]
            changed = sum(1 for a in v if v[a] != original.get(a))
            options.append((t * (1.0 if vc else PENALTY), not vc, changed, unparse(v)))
    if not options:
        return orig_key
    best = min(options)
    decision, effective = (orig_key, t_orig) if not best[0] * THRESHOLD < t_orig else (
        best[3], best[0])
    if jit:
        unc = [(o[0] / PENALTY, o[2], o[3]) for o in options if o[1]]
        if unc:
            j = min(unc)
            if j[0] * THRESHOLD < t_orig and j[0] * THRESHOLD < effective:
                return j[2]
    return decision


def exploration(pred, original, short, count):
    """The Placer's exploration moves (explorationMoves): for each place, the best predicted
    placement (among those measured) that moves one array from the original there and is not in
    `short`; the `count` fastest predicted."""
    def moved(key):
        return [(a, v) for a, v in parse(key).items() if v != original.get(a)]
    t_orig = pred.get(unparse(original))
    best = {}
    for key, t in pred.items():
        m = moved(key)
        alike = {m[0][1], original.get(m[0][0])} <= ALIASES and t == t_orig if m else False
        if len(m) != 1 or key in short or alike:
            continue
        if m[0][1] not in best or t < pred[best[m[0][1]]]:
            best[m[0][1]] = key
    return sorted(best.values(), key=lambda key: pred[key])[:count]


def tune(cands, original, first, measured, k, margin=1.01, explore=2):
    """The Placer's on-line tuning (Options::tuneCandidates, tuneExplore): the decision as it
    runs, then the fastest predicted placements of distinct predicted time (never the original),
    k in all, then the exploration moves; each measured; the fastest stays unless none is
    `margin` faster than the original. Here the sweep's medians stand for the Placer's few timed
    launches."""
    orig_key = unparse(original)
    pred = {unparse(p): t for p, t, _ in cands if t is not None}
    if orig_key not in pred:
        return first
    changed = lambda key: sum(1 for a, v in parse(key).items() if v != original.get(a))
    compiled = {unparse(p): c for p, _, c in cands}
    order = sorted(pred, key=lambda key: (pred[key], not compiled[key], changed(key)))
    times, short = [pred[orig_key]], []
    if first != orig_key:
        short.append(first)
        times.append(pred.get(first, -1))
    for key in order:
        if len(short) >= k:
            break
        if key != orig_key and all(abs(pred[key] - t) > 1e-6 * max(pred[key], t) for t in times):
            short.append(key)
            times.append(pred[key])
    short += exploration(pred, original, short, explore)
    best = min(short, key=lambda key: measured[key][0], default=None)
    if best is not None and measured[best][0] * margin < measured[orig_key][0]:
        return best
    return orig_key


def show(key, measured, pred, orig_key):
    """One case's placements, fastest measured first, with the predicted time and both ratios
    to the original."""
    t0, p0 = measured[orig_key][0], pred.get(orig_key)
    print("%s %s %s: measured ms, predicted us, each / the original's" % key)
    for k in sorted(measured, key=lambda k: measured[k][0]):
        t, p = measured[k][0], pred.get(k)
        print("  %9.4f %6.3f  %9s %6s  %s%s" % (
            t, t / t0, "-" if p is None else "%.1f" % (p * 1e6),
            "-" if p is None or not p0 else "%.3f" % (p / p0), k, "  (original)" if k == orig_key
            else ""))


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--spec", default="h100")
    ap.add_argument("--cases", help="programs to re-score (comma list); default all")
    ap.add_argument("--detail", action="store_true", help="one line per case")
    ap.add_argument("--show", metavar="PROG/INPUT",
                    help="print that case's placements, measured against predicted")
    ap.add_argument("--instantiated", action="store_true",
                    help="only placements measured as their own machine code (specialised or "
                         "JIT), not through the dynamic accessor")
    ap.add_argument("--explore", type=int, default=2, metavar="N",
                    help="the tuning's exploration moves (MEMPLACE_TUNE_EXPLORE; default 2)")
    ap.add_argument("--tune", type=int, default=3, metavar="K",
                    help="the Placer's on-line tuning: K candidates measured (default 3; 0 or 1: "
                         "off, the model's choice alone)")
    ap.add_argument("--no-jit", dest="jit", action="store_false",
                    help="the Placer without just-in-time instantiation (placements not compiled "
                         "in run through the dynamic accessor)")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.extra = extra
    prows, crows = load_rows(args.dir)
    tdir = traces_dir(args.dir)
    only = set(args.cases.split(",")) if args.cases else None
    by = OrderedDict()
    for r in prows:
        by.setdefault((r["program"], r["input"], r["kernel"]), []).append(r)
    results = []
    for c in crows:
        key = (c["program"], c["input"], c["kernel"])
        if only and key[0] not in only:
            continue
        trace = find_trace(tdir, *key)
        rows = [r for r in by.get(key, []) if r["status"] == "ok" and r["median_ms"]
                and r["equal"] == "1" and r["dynamic_requested"] != "1"]
        if trace is None or not rows:
            print("%s %s %s: no trace or no measurement; skipped" % key, file=sys.stderr)
            continue
        if args.instantiated:
            rows = [r for r in rows if r["dispatch"] in ("specialized", "jit")]
        measured = OrderedDict()
        for r in rows:
            k = unparse(parse(r["placement"]))
            # "compiled": in the compile set (a JIT instantiation is not: the Placer asks for it)
            measured.setdefault(k, (float(r["median_ms"]), r["compiled"] == "1"))
        pred = predict(args, trace, list(measured))
        original = parse(c["original"]) if c["original"] else None
        orig_key = unparse(original) if original else None
        if orig_key not in measured:
            print("%s %s %s: the original was not measured; skipped" % key, file=sys.stderr)
            continue
        cands = [(parse(k), pred.get(k), comp) for k, (_, comp) in measured.items()]
        pick = choose(cands, original, args.jit)
        if args.tune >= 2:
            pick = tune(cands, original, pick, measured, args.tune, explore=args.explore)
        pts = [(pred[k], t) for k, (t, _) in measured.items() if pred.get(k) is not None]
        if args.show == "%s/%s" % key[:2]:
            show(key, measured, pred, orig_key)
        rho = spearman([p for p, _ in pts], [t for _, t in pts])
        t_best = min(t for t, _ in measured.values())
        t_orig = measured[orig_key][0]
        t_pick = measured[pick][0]
        results.append(dict(key=key, rho=rho, within=t_pick <= 1.05 * t_best,
                            s_pick=t_orig / t_pick, s_best=t_orig / t_best, pick=pick,
                            best=min(measured, key=lambda k: measured[k][0]),
                            n=len(pts)))
    if args.detail:
        for x in results:
            print("%-14s %-12s %-24s rho %5s  %s  S %.3f / best %.3f  pick %s" % (
                x["key"][0], x["key"][1], x["key"][2][:24],
                "-" if x["rho"] is None else "%.2f" % x["rho"], "in5 " if x["within"] else "MISS",
                x["s_pick"], x["s_best"], x["pick"][:90]))
    rhos = sorted(x["rho"] for x in results if x["rho"] is not None)
    med = rhos[len(rhos) // 2] if len(rhos) % 2 else (
        (rhos[len(rhos) // 2 - 1] + rhos[len(rhos) // 2]) / 2 if rhos else None)
    n = len(results)
    gm_pick = geomean([x["s_pick"] for x in results])
    gm_best = geomean([x["s_best"] for x in results])
    print("cases %d; within 5%% of the best: %.3f; geomean speedup %.3f, oracle %.3f, share %.3f; "
          "median Spearman %.3f over %d cases (%d undefined)" % (
              n, sum(x["within"] for x in results) / n if n else 0, gm_pick or 0, gm_best or 0,
              (gm_pick / gm_best) if gm_pick and gm_best else 0, med if med is not None else 0,
              len(rhos), n - len(rhos)))


if __name__ == "__main__":
    main()
