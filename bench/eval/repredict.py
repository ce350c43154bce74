#!/usr/bin/env python3
"""Re-scores an evaluation without a GPU: the engine of this checkout predicts every placement a
device run measured, from the Placer's traces of that run (issue 8, item 5: fix the model, not
the benchmark, and see what the fix does to the figures before spending device time).

  repredict.py DIR [--memplace build/bin/memplace] [--spec SPEC] [--cases PROG[,PROG...]]
               [--detail] [--pairs MIN] [--what-if PLACE[,PLACE...]]
               [-- extra `memplace place` options]

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

The spec defaults to the built-in of the device the run measured (DIR/device.txt: h200 on an
H200, else h100). Two diagnostics of where the model ranks wrongly:
  --pairs MIN     over pairs of placements that differ in one array and measured at least MIN
                  apart (0.05: 5%), how many the model orders right, by the two places of the
                  array (global against the read-only path left out: one option in the model);
                  with --detail the wrong ones;
  --what-if P     the median rho were the model right about every move of one array from the
                  original to a place in P: each prediction is multiplied by the measured over
                  predicted ratio of every such single move the placement makes.
"""
import argparse
import csv
import json
import os
import subprocess
import statistics
import sys
import tarfile
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from analyze import geomean, spearman  # noqa: E402

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


def default_spec(d):
    """The built-in spec of the device DIR/device.txt names (h200 for an H200, else h100)."""
    try:
        with open(os.path.join(d, "device.txt")) as f:
            return "h200" if "H200" in f.readline() + f.readline() else "h100"
    except OSError:
        return "h100"


def one_move(a, b):
    """(array, place in a, place in b) when placements a and b differ in one array, else None."""
    diff = [x for x in a if a[x] != b.get(x)]
    return (diff[0], a[diff[0]], b[diff[0]]) if len(diff) == 1 else None


def pair_counts(measured, pred, minimum, tally, wrong, label):
    """Counts, per unordered pair of places, the one-array pairs measured `minimum` apart that
    the model orders right (tally[places] = [right, wrong]); appends the wrong ones to `wrong`."""
    keys = [k for k in measured if pred.get(k)]
    for i, p in enumerate(keys):
        for q in keys[i + 1:]:
            m = one_move(parse(p), parse(q))
            if m is None or {m[1], m[2]} <= ALIASES:
                continue
            mr, pr = measured[q][0] / measured[p][0], pred[q] / pred[p]
            if abs(mr - 1) < minimum:
                continue
            right = (mr > 1) == (pr > 1) and pr != 1
            tally.setdefault(tuple(sorted((m[1], m[2]))), [0, 0])[0 if right else 1] += 1
            if not right:
                wrong.append("%s %s: %s -> %s measured %.3f predicted %.3f" % (
                    label, m[0], m[1], m[2], mr, pr))


def what_if(measured, pred, orig_key, places):
    """Predictions corrected by the measured over predicted ratio of each single move from the
    original to a place in `places` that the placement makes (the model right about those)."""
    orig = parse(orig_key)
    ratio = {}
    for k in measured:
        m = one_move(orig, parse(k))
        if m and m[2] in places and pred.get(k) and pred.get(orig_key):
            ratio[(m[0], m[2])] = (measured[k][0] / measured[orig_key][0]) / (
                pred[k] / pred[orig_key])
    out = {}
    for k, t in pred.items():
        if t is not None:
            f = 1.0
            for a, v in parse(k).items():
                if v != orig.get(a):
                    f *= ratio.get((a, v), 1.0)
            out[k] = t * f
    return out


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


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--spec", help="spec to predict with (default: the device's built-in)")
    ap.add_argument("--pairs", type=float, metavar="MIN",
                    help="count one-array pairs measured MIN apart that the model orders right")
    ap.add_argument("--what-if", metavar="PLACES",
                    help="the median rho with the single moves to these places corrected")
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
    args.spec = args.spec or default_spec(args.dir)
    print("spec %s" % args.spec, file=sys.stderr)
    prows, crows = load_rows(args.dir)
    tdir = traces_dir(args.dir)
    only = set(args.cases.split(",")) if args.cases else None
    by = OrderedDict()
    for r in prows:
        by.setdefault((r["program"], r["input"], r["kernel"]), []).append(r)
    results, tally, wrong, whatif_rhos = [], {}, [], []
    whatif_places = set(args.what_if.split(",")) if args.what_if else None
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
        if args.pairs is not None:
            pair_counts(measured, pred, args.pairs, tally, wrong, "%s/%s/%s" % key)
        if whatif_places:
            corrected = what_if(measured, pred, orig_key, whatif_places)
            r = spearman([corrected[k] for k in measured if k in corrected],
                         [t for k, (t, _) in measured.items() if k in corrected])
            if r is not None:
                whatif_rhos.append(r)
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
    if args.pairs is not None:
        print("one-array pairs measured %g%% apart, ordered right / wrong by the model:"
              % (100 * args.pairs))
        for places, (right, bad) in sorted(tally.items(), key=lambda kv: -kv[1][1]):
            print("  %-24s %4d / %d" % (" - ".join(places), right, bad))
        if args.detail:
            print("\n".join("  " + w for w in wrong))
    if whatif_places:
        print("what-if (moves to %s right): median Spearman %.3f over %d cases" % (
            ",".join(sorted(whatif_places)),
            statistics.median(whatif_rhos) if whatif_rhos else 0, len(whatif_rhos)))
    rhos = [x["rho"] for x in results if x["rho"] is not None]
    med = statistics.median(rhos) if rhos else None
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
