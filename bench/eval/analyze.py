#!/usr/bin/env python3
"""The evaluation's figures (issue 8, docs/EVALUATION.md) from bench/evaluate.sh's CSVs.

  analyze.py DIR                     the summary table (DIR holds placements.csv, cases.csv)
  analyze.py DIR --plots PNGDIR      also one PNG per kernel: predicted against measured time
  analyze.py DIR --doc FILE.md       also the report (device.txt in DIR gives device and date)

Definitions (per kernel x input, i.e. per input signature a sweep measured):
  T(p)      the median over the timed launches of placement p (CUDA events around the runtime's
            stream work for the launch and the kernel), outputs bitwise equal to the original's;
  original  the placement the program's authors wrote (const __restrict__ -> readonly);
  memplace  what the online Placer (MEMPLACE=auto) runs at the end of the program: its decision
            after the on-line tuning among its shortlist (Options::tuneCandidates), as the sweep
            measured it (its decision at the trace when that placement was not measured);
  rules     the rule-based baseline (search's rules algorithm on the same trace);
  oracle    the fastest measured placement (any dispatch);
  speedup   T(original) / T(p); share of the oracle = geomean speedup of p / geomean of the oracle;
  within 5% T(memplace) <= 1.05 T(oracle);
  Spearman  rank correlation of predicted and measured time over the placements measured through
            the runtime's own dispatch (not the forced-dynamic baselines), model-feasible;
  overhead  the Placer's report: profiling (traced launch beyond the original, collecting and
            converting the records) + engine (analysis, model, search) + transform (host and
            stream work of placed launches); with overhead over L launches:
            L T(original) / (T(original) + (L - 1) T(memplace) + overhead), L the launches of
            that signature in one run of the benchmark program (warm-up + timed runs).
Standard library only for the figures; matplotlib for --plots.
"""
import argparse
import csv
import math
import os
import statistics
import sys
from collections import OrderedDict

# Dispatches that run the placement's own machine code: compiled in, or just in time.
INSTANTIATED = ("specialized", "jit")


def _num(v):
    if v in ("", None):
        return None
    try:
        return float(v)
    except ValueError:
        return v


def load(d):
    with open(os.path.join(d, "placements.csv")) as f:
        prows = [{k: (_num(v) if k in NUMERIC_P else v) for k, v in r.items()}
                 for r in csv.DictReader(f)]
    with open(os.path.join(d, "cases.csv")) as f:
        crows = [{k: (_num(v) if k in NUMERIC_C else v) for k, v in r.items()}
                 for r in csv.DictReader(f)]
    return prows, crows


NUMERIC_P = {"index", "compiled", "dynamic_requested", "model_feasible", "predicted_us",
             "median_ms", "min_ms", "max_ms", "n_timed", "host_us", "compared", "equal",
             "differing_words", "compare_predicted_us"}
NUMERIC_C = {"space", "feasible", "enumerated", "complete", "pool", "planned", "measured",
             "unequal", "memplace_compiled", "compiled_count", "plan_ms", "sweep_ms", "launches",
             "overhead_profiling_ms", "overhead_engine_ms", "overhead_transform_ms",
             "overhead_total_ms", "placer_original_ms", "placer_placed_ms", "program_median_ms",
             "program_kernel_ms", "original_median_ms", "original_kernel_ms", "checksum_equal",
             "run_rc", "wall_ms"}


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        avg = (i + j) / 2.0 + 1
        for k in range(i, j + 1):
            r[order[k]] = avg
        i = j + 1
    return r


def spearman(x, y):
    """Spearman's rho with average ranks for ties (Pearson on the ranks); None when undefined."""
    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def canonical(placement):
    """A placement's text with its arrays sorted by name (reports sort them, sweeps do not)."""
    return ",".join(sorted(x for x in placement.split(",") if x))


def has_role(r, role):
    return role in (r["roles"] or "").split("+")


def case_figures(prows, crows):
    """One dict per kernel x input with the times, speedups and correlations defined above."""
    by = OrderedDict()
    for r in prows:
        by.setdefault((r["program"], r["input"], r["kernel"]), []).append(r)
    cinfo = {(c["program"], c["input"], c["kernel"]): c for c in crows}
    out = []
    for key, rows in by.items():
        c = cinfo.get(key, {})
        ok = [r for r in rows if r["status"] == "ok" and r["median_ms"] is not None]
        good = [r for r in ok if r["equal"] == 1]

        def pick(role):
            for r in ok:
                if has_role(r, role) and not r["dynamic_requested"]:
                    return r
            return None

        orig, mem, rules, odyn = pick("original"), pick("memplace"), pick("rules"), None
        # What the Placer's launches ran at the end of the program (after its on-line tuning),
        # as the sweep measured it; else its decision at the trace.
        final = canonical(c.get("placer_applied") or "")
        for r in ok:
            if final and canonical(r["placement"]) == final and not r["dynamic_requested"]:
                mem = r
                break
        for r in ok:
            if has_role(r, "original_dynamic"):
                odyn = r
        best = min(good, key=lambda r: r["median_ms"]) if good else None
        spec = [r for r in good if r["dispatch"] in INSTANTIATED]
        best_spec = min(spec, key=lambda r: r["median_ms"]) if spec else None
        f = OrderedDict(program=key[0], input=key[1], kernel=key[2])
        f["planned"] = len(rows)
        f["measured"] = len(ok)
        f["unequal"] = sum(1 for r in ok if r["equal"] != 1)
        f["fallback"] = sum(1 for r in rows if r["status"] == "fallback")
        f["skipped"] = sum(1 for r in rows if r["status"] == "skipped")
        f["space"] = c.get("space")
        f["feasible"] = c.get("feasible")
        f["complete"] = c.get("complete")
        f["T_orig"] = orig["median_ms"] if orig else None
        f["T_mem"] = mem["median_ms"] if mem else None
        f["T_rules"] = rules["median_ms"] if rules else None
        f["T_best"] = best["median_ms"] if best else None
        f["best"] = best["placement"] if best else ""
        f["best_dispatch"] = best["dispatch"] if best else ""
        f["memplace"] = mem["placement"] if mem else c.get("memplace", "")
        f["memplace_dispatch"] = mem["dispatch"] if mem else ""
        f["rules"] = rules["placement"] if rules else c.get("rules", "")
        f["original"] = orig["placement"] if orig else c.get("original", "")
        t0 = f["T_orig"]
        f["S_mem"] = t0 / f["T_mem"] if t0 and f["T_mem"] else None
        f["S_rules"] = t0 / f["T_rules"] if t0 and f["T_rules"] else None
        f["S_best"] = t0 / f["T_best"] if t0 and f["T_best"] else None
        f["T_best_spec"] = best_spec["median_ms"] if best_spec else None
        f["S_best_spec"] = t0 / f["T_best_spec"] if t0 and f["T_best_spec"] else None
        f["best_is_dynamic"] = bool(best) and best["dispatch"] not in INSTANTIATED
        f["mem_within5"] = (f["T_mem"] <= 1.05 * f["T_best"]) if f["T_mem"] and f["T_best"] else None
        f["rules_within5"] = (f["T_rules"] <= 1.05 * f["T_best"]) if f["T_rules"] and f["T_best"] else None
        pts = [r for r in ok if not r["dynamic_requested"] and r["model_feasible"] == 1
               and r["predicted_us"] is not None]
        f["n_rho"] = len(pts)
        f["rho"] = spearman([r["predicted_us"] for r in pts], [r["median_ms"] for r in pts])
        dpts = [r for r in pts if r["dispatch"] in INSTANTIATED]
        f["rho_specialized"] = spearman([r["predicted_us"] for r in dpts],
                                        [r["median_ms"] for r in dpts])
        # The compare spec (MEMPLACE_SWEEP_COMPARE_SPEC, e.g. a probed one): its best placement
        # and its rank correlation over the same placements.
        cmp_ = pick("compare_best")
        f["compare_spec"] = c.get("compare_spec") or ""
        f["T_cmp"] = cmp_["median_ms"] if cmp_ else None
        f["S_cmp"] = t0 / f["T_cmp"] if t0 and f["T_cmp"] else None
        f["cmp_within5"] = (f["T_cmp"] <= 1.05 * f["T_best"]) if f["T_cmp"] and f["T_best"] else None
        cpts = [r for r in pts if r.get("compare_predicted_us") is not None]
        f["rho_cmp"] = spearman([r["compare_predicted_us"] for r in cpts],
                                [r["median_ms"] for r in cpts])
        f["rho_builtin_on_cmp"] = spearman([r["predicted_us"] for r in cpts],
                                           [r["median_ms"] for r in cpts])
        f["dyn_penalty"] = (odyn["median_ms"] / t0) if odyn and t0 else None
        # The Placer's own run of the program: overheads over the program's launches.
        L = c.get("launches")
        oh = c.get("overhead_total_ms")
        f["launches"] = L
        f["overhead_ms"] = oh
        f["placer_status"] = c.get("placer_status", "")
        f["memplace_status"] = c.get("memplace_status", "")
        f["tuning_state"] = c.get("tuning_state", "")
        f["memplace_decision"] = (pick("memplace") or {}).get("placement", "")

        def with_overhead(n):
            if not (t0 and f["T_mem"] and oh is not None and n and n >= 1):
                return None
            return n * t0 / (t0 + (n - 1) * f["T_mem"] + oh)

        f["S_mem_oh"] = with_overhead(L)
        f["S_mem_oh1000"] = with_overhead(1000)
        # The unrewritten program's own median for this kernel (one launch a run; fft's stages
        # add up in its figure, so fft is left out of this comparison).
        ob = c.get("original_kernel_ms") or None
        f["orig_binary_ms"] = ob if key[0] != "fft" else None
        f["B_orig"] = ob / t0 if ob and t0 and key[0] != "fft" else None
        f["B_mem"] = ob / f["T_mem"] if f["orig_binary_ms"] and f["T_mem"] else None
        f["B_best"] = ob / f["T_best"] if f["orig_binary_ms"] and f["T_best"] else None
        f["checksum_equal"] = c.get("checksum_equal")
        out.append(f)
    return out


def overall(figs):
    g = OrderedDict()
    full = [f for f in figs if f["S_mem"] and f["S_best"]]
    g["cases"] = len(figs)
    g["cases_with_all"] = len(full)
    g["placements"] = sum(f["measured"] for f in figs)
    g["unequal"] = sum(f["unequal"] for f in figs)
    g["geo_mem"] = geomean([f["S_mem"] for f in full])
    g["geo_best"] = geomean([f["S_best"] for f in full])
    g["share_mem"] = g["geo_mem"] / g["geo_best"] if g["geo_mem"] and g["geo_best"] else None
    fr = [f for f in figs if f["S_rules"] and f["S_best"]]
    g["geo_rules"] = geomean([f["S_rules"] for f in fr])
    g["geo_best_rules"] = geomean([f["S_best"] for f in fr])
    g["share_rules"] = g["geo_rules"] / g["geo_best_rules"] if g["geo_rules"] and g["geo_best_rules"] else None
    w = [f["mem_within5"] for f in figs if f["mem_within5"] is not None]
    g["within5_mem"] = sum(w) / len(w) if w else None
    w = [f["rules_within5"] for f in figs if f["rules_within5"] is not None]
    g["within5_rules"] = sum(w) / len(w) if w else None
    rh = [f["rho"] for f in figs if f["rho"] is not None]
    g["median_rho"] = statistics.median(rh) if rh else None
    g["n_rho"] = len(rh)
    g["n_rho_undefined"] = sum(1 for f in figs if f["rho"] is None)
    rh0 = [f["rho"] if f["rho"] is not None else 0.0 for f in figs]
    g["median_rho_all"] = statistics.median(rh0) if rh0 else None
    g["geo_best_spec"] = geomean([f["S_best_spec"] for f in full if f["S_best_spec"]])
    g["share_mem_spec"] = g["geo_mem"] / g["geo_best_spec"] if g["geo_mem"] and g["geo_best_spec"] else None
    g["best_dynamic"] = sum(1 for f in figs if f["best_is_dynamic"])
    rh = [f["rho_specialized"] for f in figs if f["rho_specialized"] is not None]
    g["median_rho_specialized"] = statistics.median(rh) if rh else None
    g["geo_binary_orig"] = geomean([f["B_orig"] for f in figs if f["B_orig"]])
    g["geo_binary_mem"] = geomean([f["B_mem"] for f in figs if f["B_mem"]])
    g["geo_binary_best"] = geomean([f["B_best"] for f in figs if f["B_best"]])
    g["n_binary"] = sum(1 for f in figs if f["B_mem"])
    g["geo_mem_oh"] = geomean([f["S_mem_oh"] for f in figs if f["S_mem_oh"]])
    g["geo_mem_oh1000"] = geomean([f["S_mem_oh1000"] for f in figs if f["S_mem_oh1000"]])
    g["n_oh"] = sum(1 for f in figs if f["S_mem_oh"])
    dp = [f["dyn_penalty"] for f in figs if f["dyn_penalty"]]
    g["dyn_penalty_median"] = statistics.median(dp) if dp else None
    g["dyn_penalty_max"] = max(dp) if dp else None
    # The compare spec against the built-in, on the cases where both are defined.
    cf = [f for f in figs if f["S_cmp"] and f["S_mem"] and f["S_best"]]
    g["compare_spec"] = next((f["compare_spec"] for f in figs if f["compare_spec"]), "")
    g["n_cmp"] = len(cf)
    g["geo_cmp"] = geomean([f["S_cmp"] for f in cf])
    g["geo_mem_on_cmp"] = geomean([f["S_mem"] for f in cf])
    g["geo_best_on_cmp"] = geomean([f["S_best"] for f in cf])
    w = [f["cmp_within5"] for f in cf]
    g["within5_cmp"] = sum(w) / len(w) if w else None
    w = [f["mem_within5"] for f in cf]
    g["within5_mem_on_cmp"] = sum(w) / len(w) if w else None
    pr = [(f["rho_cmp"], f["rho_builtin_on_cmp"]) for f in figs
          if f["rho_cmp"] is not None and f["rho_builtin_on_cmp"] is not None]
    g["n_rho_cmp"] = len(pr)
    g["median_rho_cmp"] = statistics.median([a for a, _ in pr]) if pr else None
    g["median_rho_builtin_on_cmp"] = statistics.median([b for _, b in pr]) if pr else None
    g["rho_cmp_better"] = sum(1 for a, b in pr if a > b)
    ce = [f["checksum_equal"] for f in figs if f["checksum_equal"] is not None]
    g["checksum_equal"] = (sum(1 for x in ce if x == 1), len(ce))
    return g


def fmt(x, p=3):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return ("%." + str(p) + "f") % x
    return str(x)


def summary_text(prows, crows):
    figs = case_figures(prows, crows)
    g = overall(figs)
    lines = []
    lines.append("%-16s %-12s %-24s %4s %8s %8s %8s %8s %6s %6s %6s %5s" %
                 ("program", "input", "kernel", "n", "orig_ms", "mem_ms", "rules_ms", "best_ms",
                  "S_mem", "S_best", "rho", "in5%"))
    for f in figs:
        lines.append("%-16s %-12s %-24s %4d %8s %8s %8s %8s %6s %6s %6s %5s" % (
            f["program"][:16], f["input"][:12], f["kernel"][:24], f["measured"],
            fmt(f["T_orig"], 4), fmt(f["T_mem"], 4), fmt(f["T_rules"], 4), fmt(f["T_best"], 4),
            fmt(f["S_mem"], 2), fmt(f["S_best"], 2), fmt(f["rho"], 2), fmt(f["mem_within5"])))
    lines.append("")
    lines.append("cases %d (%d with original, memplace and oracle), placements measured %d, "
                 "outputs unequal %d" % (g["cases"], g["cases_with_all"], g["placements"], g["unequal"]))
    lines.append("geomean speedup over the original: memplace %s, oracle %s, share %s; rules %s "
                 "(share %s)" % (fmt(g["geo_mem"]), fmt(g["geo_best"]), fmt(g["share_mem"]),
                                 fmt(g["geo_rules"]), fmt(g["share_rules"])))
    lines.append("within 5%% of the best: memplace %s, rules %s; median Spearman %s over %d cases "
                 "(specialised or JIT instantiations only %s)" % (fmt(g["within5_mem"]), fmt(g["within5_rules"]),
                                            fmt(g["median_rho"]), g["n_rho"],
                                            fmt(g["median_rho_specialized"])))
    lines.append("Spearman undefined (the model predicts one time for every placement) in %d cases; "
                 "median counting those as 0: %s; oracle among specialised or JIT instantiations only: "
                 "geomean %s (memplace's share %s); oracle through the dynamic accessor in %d cases"
                 % (g["n_rho_undefined"], fmt(g["median_rho_all"]), fmt(g["geo_best_spec"]),
                    fmt(g["share_mem_spec"]), g["best_dynamic"]))
    tuned = [f for f in figs if f.get("tuning_state")]
    lines.append("on-line tuning: done in %d of %d cases that had a shortlist (changed the "
                 "decision in %d)" % (sum(1 for f in tuned if f["tuning_state"] == "done"),
                                      len(tuned), sum(1 for f in tuned if f["memplace"] and
                                                      canonical(f["memplace"]) !=
                                                      canonical(f["memplace_decision"]))))
    lines.append("with the Placer's overhead: geomean %s over the program's launches (%d cases), "
                 "%s over 1000 launches; dynamic accessor on the original: median %s, max %s; "
                 "program checksums equal to the original binary's: %d/%d" % (
                     fmt(g["geo_mem_oh"]), g["n_oh"], fmt(g["geo_mem_oh1000"]),
                     fmt(g["dyn_penalty_median"]), fmt(g["dyn_penalty_max"]),
                     g["checksum_equal"][0], g["checksum_equal"][1]))
    lines.append("against the unrewritten binary's kernel time (%d cases, fft left out): the "
                 "rewritten original placement %s, memplace %s, oracle %s (geomean speedups)" % (
                     g["n_binary"], fmt(g["geo_binary_orig"]), fmt(g["geo_binary_mem"]),
                     fmt(g["geo_binary_best"])))
    if g["compare_spec"]:
        lines.append("compare spec %s on %d cases: its choice within 5%% of the best %s (built-in "
                     "%s), geomean speedup %s (built-in %s, oracle %s); median Spearman %s against "
                     "the built-in's %s over %d cases (better in %d)" % (
                         os.path.basename(g["compare_spec"]), g["n_cmp"], fmt(g["within5_cmp"]),
                         fmt(g["within5_mem_on_cmp"]), fmt(g["geo_cmp"]), fmt(g["geo_mem_on_cmp"]),
                         fmt(g["geo_best_on_cmp"]), fmt(g["median_rho_cmp"]),
                         fmt(g["median_rho_builtin_on_cmp"]), g["n_rho_cmp"], g["rho_cmp_better"]))
    return "\n".join(lines)


def plots(prows, crows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    figs = case_figures(prows, crows)
    kernels = OrderedDict()
    for r in prows:
        kernels.setdefault((r["program"], r["kernel"]), []).append(r)
    written = []
    for (prog, kern), rows in kernels.items():
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        inputs = list(OrderedDict.fromkeys(r["input"] for r in rows))
        for i, inp in enumerate(inputs):
            pts = [r for r in rows if r["input"] == inp and r["status"] == "ok"
                   and r["median_ms"] is not None and r["predicted_us"] is not None
                   and not r["dynamic_requested"]]
            if not pts:
                continue
            f = next((x for x in figs if x["program"] == prog and x["kernel"] == kern
                      and x["input"] == inp), None)
            color = "C%d" % (i % 10)
            spec = [r for r in pts if r["dispatch"] in INSTANTIATED]
            dyn = [r for r in pts if r["dispatch"] not in INSTANTIATED]
            label = "%s (rho %s, n %d)" % (inp, fmt(f["rho"], 2) if f else "-", len(pts))
            ax.scatter([r["predicted_us"] for r in spec], [r["median_ms"] * 1e3 for r in spec],
                       s=22, color=color, marker="o", label=label)
            ax.scatter([r["predicted_us"] for r in dyn], [r["median_ms"] * 1e3 for r in dyn],
                       s=22, facecolors="none", edgecolors=color, marker="o")
            for role, marker, size in (("original", "s", 90), ("rules", "^", 110),
                                       ("memplace", "*", 180)):
                rr = [r for r in pts if has_role(r, role)]
                if rr:
                    ax.scatter([rr[0]["predicted_us"]], [rr[0]["median_ms"] * 1e3], s=size,
                               marker=marker, facecolors="none", edgecolors="k", linewidths=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("predicted time (us)")
        ax.set_ylabel("measured time (us, median)")
        ax.set_title("%s: %s" % (prog, kern))
        ax.grid(True, which="both", alpha=0.3)
        from matplotlib.lines import Line2D
        handles, labels = ax.get_legend_handles_labels()
        handles += [Line2D([], [], marker="s", ls="", mfc="none", mec="k", label="original"),
                    Line2D([], [], marker="^", ls="", mfc="none", mec="k", label="rules"),
                    Line2D([], [], marker="*", ls="", mfc="none", mec="k", ms=12, label="memplace"),
                    Line2D([], [], marker="o", ls="", mfc="none", mec="gray",
                           label="dynamic accessor")]
        ax.legend(handles=handles, fontsize=7, loc="best")
        fig.tight_layout()
        name = "%s_%s.png" % (prog, kern)
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        written.append(name)
    # Speedups per case.
    fs = [f for f in figs if f["S_best"]]
    if fs:
        fig, ax = plt.subplots(figsize=(max(8, 0.28 * len(fs)), 4.5))
        xs = range(len(fs))
        ax.bar([x - 0.27 for x in xs], [f["S_best"] for f in fs], 0.27, label="oracle", color="0.7")
        ax.bar(list(xs), [f["S_mem"] or 0 for f in fs], 0.27, label="memplace", color="C0")
        ax.bar([x + 0.27 for x in xs], [f["S_rules"] or 0 for f in fs], 0.27, label="rules",
               color="C1")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(["%s/%s/%s" % (f["program"], f["input"], f["kernel"][:14]) for f in fs],
                           rotation=90, fontsize=6)
        ax.set_ylabel("speedup over the original placement")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "speedups.png"), dpi=90)
        plt.close(fig)
        written.append("speedups.png")
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--plots")
    ap.add_argument("--doc")
    a = ap.parse_args()
    prows, crows = load(a.dir)
    print(summary_text(prows, crows))
    if a.plots:
        print("plots: %d" % len(plots(prows, crows, a.plots)))
    if a.doc:
        import report  # bench/eval/report.py: the markdown
        report.write(a.dir, a.doc, case_figures(prows, crows), overall(case_figures(prows, crows)),
                     prows, crows)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
