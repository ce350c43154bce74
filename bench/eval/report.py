"""Writes docs/EVALUATION.md from the evaluation's figures (analyze.py --doc): the method
(bench/eval/EVALUATION.head.md), the tables and figures computed here from the CSVs, and the
discussion (bench/eval/EVALUATION.tail.md)."""
import os
import statistics

from analyze import fmt


def _device(d):
    info = {"device": "?", "driver": "?", "date": "?", "commit": "?", "nvcc": "?"}
    path = os.path.join(d, "device.txt")
    if not os.path.exists(path):
        return info
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("name,") and i + 1 < len(lines):
            parts = [p.strip() for p in lines[i + 1].split(",")]
            info["device"] = parts[0]
            info["driver"] = parts[1] if len(parts) > 1 else "?"
            info["clocks"] = ", ".join(parts[3:]) if len(parts) > 3 else ""
        if line.startswith("date:"):
            info["date"] = line.split(":", 1)[1].strip()
        if line.startswith("commit:"):
            info["commit"] = line.split(":", 1)[1].strip()
        if line.startswith("Cuda compilation tools"):
            info["nvcc"] = line.strip()
    return info


def write(d, path, figs, g, prows, crows):
    dev = _device(d)
    here = os.path.dirname(os.path.abspath(__file__))
    head = open(os.path.join(here, "EVALUATION.head.md")).read()
    out = []
    out.append(head.rstrip() + "\n")
    out.append("\n## The run\n")
    out.append("- Device: **%s**, driver %s; %s; clocks at the start (SM, max SM, memory): %s." %
               (dev["device"], dev["driver"], dev["nvcc"], dev.get("clocks", "?")))
    out.append("- Date: %s. Commit: `%s` (the evaluated sources; the report itself was generated "
               "afterwards from the CSVs)." % (dev["date"], dev["commit"]))
    out.append("- %d kernel x input cases (%d programs, %d inputs), %d placements measured, "
               "%d with outputs different from the original placement's." % (
                   g["cases"], len({f["program"] for f in figs}),
                   len({(f["program"], f["input"]) for f in figs}), g["placements"], g["unequal"]))
    comp = sum(1 for f in figs if f["complete"] == 1)
    out.append("- %d cases measured every feasible placement (space enumerated and within the "
               "cap); the other %d a sample (see Method). Placements skipped by the per-signature "
               "time budget: %d; runtime fallbacks (not measured): %d." % (
                   comp, len(figs) - comp, sum(f["skipped"] for f in figs),
                   sum(f["fallback"] for f in figs)))
    out.append("- Program checksums under MEMPLACE=sweep (after the sweep the program ran on the "
               "Placer's decision) equal to the original binary's: %d of %d runs." %
               g["checksum_equal"])
    out.append("\n## Figures\n")
    out.append("| figure | memplace | rule-based baseline | target |")
    out.append("|---|---|---|---|")
    out.append("| geometric-mean speedup over the original (kernel time) | %s | %s | - |" %
               (fmt(g["geo_mem"]), fmt(g["geo_rules"])))
    out.append("| the oracle's geometric-mean speedup (over the cases each one ran) | %s | %s | - |" %
               (fmt(g["geo_best"]), fmt(g["geo_best_rules"])))
    out.append("| share of the oracle's speedup (ratio of geomeans) | %s | %s | >= 0.95 |" %
               (fmt(g["share_mem"]), fmt(g["share_rules"])))
    out.append("| cases within 5%% of the best measured placement | %s | %s | >= 0.90 |" %
               (fmt(g["within5_mem"]), fmt(g["within5_rules"])))
    out.append("| median Spearman rho, predicted vs measured (%d cases) | %s | (same model) | >= 0.8 |" %
               (g["n_rho"], fmt(g["median_rho"])))
    out.append("| cases where rho is undefined (one predicted time for every placement) | %d | | |" %
               g["n_rho_undefined"])
    out.append("| median Spearman rho, undefined counted as 0 (%d cases) | %s | | |" %
               (g["cases"], fmt(g["median_rho_all"])))
    out.append("| median Spearman rho, specialised or JIT instantiations only | %s | | |" %
               fmt(g["median_rho_specialized"]))
    out.append("| oracle among specialised or JIT instantiations only: geomean speedup (memplace's share) "
               "| %s (%s) | | |" % (fmt(g["geo_best_spec"]), fmt(g["share_mem_spec"])))
    out.append("| cases whose oracle ran through the dynamic accessor | %d | | |" % g["best_dynamic"])
    out.append("| geometric-mean speedup with the Placer's overhead, over the program's launches "
               "(%d cases) | %s | - | - |" % (g["n_oh"], fmt(g["geo_mem_oh"])))
    out.append("| the same over 1,000 launches | %s | - | - |" % fmt(g["geo_mem_oh1000"]))
    out.append("| geometric-mean speedup over the **unrewritten** program's own kernel time (%d cases, "
               "fft left out): rewritten original placement, memplace, oracle | %s, %s, %s | | |" % (
                   g["n_binary"], fmt(g["geo_binary_orig"]), fmt(g["geo_binary_mem"]),
                   fmt(g["geo_binary_best"])))
    out.append("| dynamic accessor / specialised, original placement (median, max) | %s, %s | | |" %
               (fmt(g["dyn_penalty_median"]), fmt(g["dyn_penalty_max"])))
    if g["compare_spec"]:
        out.append("\n### The probed spec against the built-in (issue 9)\n")
        out.append("Every plan was also predicted with a second spec, `%s` (the sweep's "
                   "MEMPLACE_SWEEP_COMPARE_SPEC; prepare.py's default is the H100 spec `memplace "
                   "probe` wrote, tests/probe/data/h100_probed.msl), and that spec's best placement "
                   "was measured too. Same traces, same measured times: only the spec differs.\n"
                   % os.path.basename(g["compare_spec"]))
        out.append("| figure | built-in spec | compare spec |")
        out.append("|---|---|---|")
        out.append("| cases within 5%% of the best (%d cases) | %s | %s |" % (
            g["n_cmp"], fmt(g["within5_mem_on_cmp"]), fmt(g["within5_cmp"])))
        out.append("| geometric-mean speedup of its choice over the original (oracle %s) | %s | %s |"
                   % (fmt(g["geo_best_on_cmp"]), fmt(g["geo_mem_on_cmp"]), fmt(g["geo_cmp"])))
        out.append("| median Spearman rho over the same placements (%d cases) | %s | %s |" % (
            g["n_rho_cmp"], fmt(g["median_rho_builtin_on_cmp"]), fmt(g["median_rho_cmp"])))
        out.append("| cases where the compare spec's rho is higher | | %d of %d |" % (
            g["rho_cmp_better"], g["n_rho_cmp"]))
        out.append("\nThe built-in spec's choice here is the Placer's decision (`memplace`), which "
                   "also weighs what is compiled in; the compare spec's is its model's best.")
    out.append("\n![speedups](eval/speedups.png)\n")
    out.append("\n## Per case\n")
    out.append("Times are medians in ms; S = T(original) / T. `in 5%` = memplace within 5% of "
               "the best measured. `n` = placements measured (dispatched as the runtime would, "
               "plus the forced-dynamic baselines), `space` = combinations of the places each "
               "array can take.\n")
    out.append("| program | input | kernel | space | n | original | memplace | rules | best | "
               "S memplace | S rules | S oracle | in 5% | rho | with overhead (L) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in figs:
        out.append("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) |" % (
            f["program"], f["input"], f["kernel"], fmt(f["space"], 0), f["measured"],
            fmt(f["T_orig"], 4), fmt(f["T_mem"], 4), fmt(f["T_rules"], 4), fmt(f["T_best"], 4),
            fmt(f["S_mem"], 2), fmt(f["S_rules"], 2), fmt(f["S_best"], 2),
            fmt(f["mem_within5"]), fmt(f["rho"], 2), fmt(f["S_mem_oh"], 2),
            fmt(f["launches"], 0)))
    out.append("\n### Against the unrewritten program\n")
    out.append("The original binary's own median for the kernel (bench harness, CUDA events, one "
               "program at a time) over the rewritten program's times. Below 1: the rewritten "
               "kernel is slower than the hand-written one in that placement.\n")
    out.append("| program | input | kernel | binary ms | binary / rewritten original | "
               "binary / memplace | binary / oracle |")
    out.append("|---|---|---|---|---|---|---|")
    for f in figs:
        if f["B_orig"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                f["program"], f["input"], f["kernel"], fmt(f["orig_binary_ms"], 4),
                fmt(f["B_orig"], 2), fmt(f["B_mem"], 2), fmt(f["B_best"], 2)))
    out.append("\n### Placements chosen\n")
    out.append("| program | input | kernel | memplace (dispatch) | rules | best measured (dispatch) |")
    out.append("|---|---|---|---|---|---|")
    for f in figs:
        out.append("| %s | %s | %s | %s (%s) | %s | %s (%s) |" % (
            f["program"], f["input"], f["kernel"], f["memplace"] or "-",
            f["memplace_dispatch"] or "-", f["rules"] or "-", f["best"] or "-",
            f["best_dispatch"] or "-"))
    misses = [f for f in figs if f["mem_within5"] is False]
    out.append("\n## Where memplace misses (more than 5% from the best)\n")
    if not misses:
        out.append("None.")
    for f in misses:
        out.append("- %s %s `%s`: memplace %s ms (%s), best %s ms (%s): %.2fx slower; "
                   "Spearman %s." % (f["program"], f["input"], f["kernel"], fmt(f["T_mem"], 4),
                                     f["memplace"], fmt(f["T_best"], 4), f["best"],
                                     f["T_mem"] / f["T_best"], fmt(f["rho"], 2)))
    out.append("\n## Plots: predicted against measured time, per kernel\n")
    out.append("Filled circles: specialised instantiations; open circles: the dynamic accessor; "
               "square: the original placement; triangle: rules; star: memplace. Log-log; one "
               "colour per input; rho per input in the legend.\n")
    for prog, kern in dict.fromkeys((f["program"], f["kernel"]) for f in figs):
        out.append("![%s %s](eval/%s_%s.png)" % (prog, kern, prog, kern))
    tail = os.path.join(here, "EVALUATION.tail.md")
    if os.path.exists(tail):
        out.append("\n" + open(tail).read().rstrip())
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
