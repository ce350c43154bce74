#!/usr/bin/env python3
"""The demo's table: what the Placer decided for each kernel and input, and what it predicted
(and, on a GPU, measured), from the Placer's report (MEMPLACE_REPORT) and the program's own
`demo ...` lines.

  report_table.py --report report.json --run memplace.txt [--original original.txt]

--run is the output of the program built through memplace, --original the same program as
written (its times are the baseline of the measured speedups; its hashes must equal the
memplace run's: bitwise-equal outputs). Exit 1 when the runs disagree or a check failed.
The report's kernels are in the order their signatures were first seen, which is the program's
order of inputs; each is matched to its input by kernel name and grid.
"""
import argparse
import json
import sys


def parse_run(path):
    """The `demo KERNEL INPUT key=value ...` lines, in order, and the concurrency line."""
    cases, concurrent, overall = [], None, None
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) < 2 or words[0] != "demo":
                continue
            if words[1] == "concurrent":
                concurrent = dict(w.split("=", 1) for w in words[2:] if "=" in w)
                continue
            if words[1] == "demo:" or words[1].endswith(":"):
                overall = words[-1]
                continue
            if len(words) < 4:
                continue
            kv = dict(w.split("=", 1) for w in words[3:] if "=" in w)
            kv["kernel"], kv["input"] = words[1], words[2]
            if words[3] == "FAIL":
                kv["check"] = "FAIL"
            cases.append(kv)
    return cases, concurrent, overall


def fmt_us(v):
    if v is None:
        return "-"
    if v >= 1000:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_ms(v):
    if v is None or v < 0:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def decision_text(k):
    applied = k.get("applied") or {}
    decision = k.get("decision") or {}
    status = k.get("status", "?")
    if status in ("failed", "pending"):
        return status + (": " + k.get("failure", "") if k.get("failure") else "")
    moved = ["%s=%s" % (a, p) for a, p in decision.items() if p != "global"]
    text = ", ".join(moved) if moved else "all global (original)"
    if status == "reverted":
        text += " [reverted: measured slower]"
    elif status == "observed":
        text += " [trace mode: not applied]"
    elif status == "original" and moved:
        text += " [kept original]"
    del applied
    best = k.get("engine_best") or {}
    pred = k.get("predicted") or {}
    if best and best != decision and pred.get("engine_best_us"):
        moved_best = ["%s=%s" % (a, p) for a, p in best.items() if p != "global"]
        text += "  (engine's best: %s, %.2fx, not compiled in)" % (
            ", ".join(moved_best) or "all global",
            pred["original_us"] / pred["engine_best_us"])
    return text


def table(headers, rows):
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    out = ["  ".join(str(h).ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for r in rows:
        out.append("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--original")
    args = ap.parse_args()

    with open(args.report) as f:
        report = json.load(f)
    cases, concurrent, _ = parse_run(args.run)
    orig_cases = parse_run(args.original)[0] if args.original else []
    orig_by = {(c["kernel"], c["input"]): c for c in orig_cases}

    # Match report entries to inputs: per kernel, in order of first appearance.
    by_kernel = {}
    for k in report.get("kernels", []):
        by_kernel.setdefault(k["kernel"], []).append(k)
    problems = []
    matched = []
    seen = {}
    for c in cases:
        i = seen.get(c["kernel"], 0)
        seen[c["kernel"]] = i + 1
        entries = by_kernel.get(c["kernel"], [])
        k = entries[i] if i < len(entries) else None
        if k is not None and "grid" in c and k["signature"]["grid"][0] != int(c["grid"]):
            problems.append("%s %s: report entry %d has grid %s, the run %s" %
                            (c["kernel"], c["input"], i, k["signature"]["grid"][0], c["grid"]))
            k = None
        matched.append((c, k))

    gpu = not report.get("emulated", True)
    timed = report.get("time_kernels", False)
    dev = (report.get("devices") or [{}])[0]
    spec = dev.get("spec", {})
    title = "memplace demo on %s%s (spec %s from %s)" % (
        dev.get("name", "?"), ", CPU emulation" if not gpu else "",
        spec.get("name", "?"), spec.get("source", "?"))

    headers = ["kernel", "input", "decision (arrays not in global memory)",
               "predicted us: orig -> decision", "benefit"]
    if gpu and timed:
        headers += ["measured ms: orig -> placed", "measured"]
    if args.original:
        headers += ["end-to-end incl. overhead" if gpu else "outputs vs original"]
    rows = []
    for c, k in matched:
        row = [c["kernel"], c["input"]]
        if k is None:
            row += ["(no report entry)", "-", "-"]
        else:
            pred = k.get("predicted") or {}
            row.append(decision_text(k))
            if pred:
                row.append("%s -> %s" % (fmt_us(pred.get("original_us")),
                                         fmt_us(pred.get("decision_us"))))
                row.append("%.2fx" % pred.get("speedup", 1.0))
            else:
                row += ["-", "-"]
        if gpu and timed:
            m = (k or {}).get("measured") or {}
            o, p = m.get("original_ms"), m.get("placed_ms")
            row.append("%s -> %s" % (fmt_ms(o), fmt_ms(p)) if o is not None else "-")
            row.append("%.2fx" % (o / p) if o and p else "-")
        if args.original:
            oc = orig_by.get((c["kernel"], c["input"]))
            same = oc is not None and oc.get("hash") == c.get("hash")
            if oc is None:
                row.append("(not run)")
            elif not same:
                row.append("OUTPUTS DIFFER")
                problems.append("%s %s: outputs differ from the original program's" %
                                (c["kernel"], c["input"]))
            elif gpu:
                to, tm = float(oc["total_ms"]), float(c["total_ms"])
                row.append("%.2fx over %s launches (%s -> %s ms), bitwise equal" %
                           (to / tm, c["reps"], fmt_ms(to), fmt_ms(tm)))
            else:
                row.append("bitwise equal")
        if c.get("check") != "PASS":
            problems.append("%s %s: the program's own check failed" % (c["kernel"], c["input"]))
        rows.append(row)

    print(title)
    print(table(headers, rows))

    if gpu and args.original:
        # Issue 7 item 6: what a first and a later launch cost against the kernel.
        print()
        print("First launch vs later launches (host wall time of launch + synchronise, ms)")
        h2 = ["kernel", "input", "kernel (orig)", "first: original", "first: memplace",
              "overhead: profiling / engine / transform (all launches)",
              "later: original", "later: memplace", "break-even launches"]
        rows2 = []
        for c, k in matched:
            oc = orig_by.get((c["kernel"], c["input"]))
            if oc is None or k is None:
                continue
            m = k.get("measured") or {}
            o = k.get("overhead_ms") or {}
            be = m.get("break_even_launches")
            rows2.append([c["kernel"], c["input"], fmt_ms(m.get("original_ms")),
                          fmt_ms(float(oc["first_ms"])), fmt_ms(float(c["first_ms"])),
                          "%s / %s / %s" % (fmt_ms(o.get("profiling")), fmt_ms(o.get("engine")),
                                            fmt_ms(o.get("transform"))),
                          fmt_ms(float(oc["later_ms"])), fmt_ms(float(c["later_ms"])),
                          "%.0f" % be if be is not None else "-"])
        print(table(h2, rows2))

    if concurrent is not None:
        print()
        print("Concurrency: %s host threads x %s streams, %s launches at once: %s" %
              (concurrent.get("threads"), concurrent.get("streams"), concurrent.get("launches"),
               "every output bitwise the single-stream one" if concurrent.get("check") == "PASS"
               else "MISMATCH"))
        if concurrent.get("check") != "PASS":
            problems.append("concurrent launches: outputs differ")
    tot = (report.get("totals") or {}).get("overhead_ms") or {}
    if tot:
        print("memplace overhead over the whole run: %s ms (profiling %s, engine %s, transform %s)%s"
              % (fmt_ms(tot.get("total")), fmt_ms(tot.get("profiling")),
                 fmt_ms(tot.get("engine")), fmt_ms(tot.get("transform")),
                 "; emulation times, not GPU times" if not gpu else ""))
    for w in report.get("warnings", []):
        print("warning: " + w)
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
