#!/usr/bin/env python3
"""Turns the evaluation's raw results (bench/evaluate.sh's runs folder) into two CSVs and prints
the summary table:  collect.py RUNS OUT

  placements.csv  one row per measured placement: program, input, kernel, signature, index,
                  placement, roles, compiled, dynamic_requested, dispatch, status, detail,
                  model_feasible, predicted_us, median_ms, min_ms, max_ms, n_timed, host_us,
                  compared, equal, differing_words
  cases.csv       one row per kernel x input (signature): the plan (space, feasible, planned,
                  measured), the placements (original, memplace, engine best, rules), the Placer's
                  report (status, overheads, launches, its own kernel timings), the program runs
                  (original binary and rewritten, medians and checksums)
Only the Python standard library (the device's python3 has it; analyze.py is imported for the
summary).
"""
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402

PLACEMENT_FIELDS = ["program", "input", "kernel", "signature", "index", "placement", "roles",
                    "compiled", "dynamic_requested", "dispatch", "status", "detail",
                    "model_feasible", "predicted_us", "median_ms", "min_ms", "max_ms", "n_timed",
                    "host_us", "compared", "equal", "differing_words", "compare_predicted_us"]
CASE_FIELDS = ["program", "input", "kernel", "signature", "status", "space", "feasible",
               "enumerated", "complete", "pool", "planned", "measured", "unequal", "original",
               "memplace", "memplace_status", "memplace_compiled", "memplace_why", "engine_best",
               "rules", "compiled_count", "plan_ms", "sweep_ms", "launches", "placer_status",
               "placer_applied", "tuning_state", "tuning_why", "tuning_launches",
               "overhead_profiling_ms", "overhead_engine_ms",
               "overhead_transform_ms", "overhead_total_ms", "placer_original_ms",
               "placer_placed_ms", "program_median_ms", "program_kernel_ms", "program_checksum",
               "original_median_ms", "original_kernel_ms", "original_checksum", "checksum_equal",
               "run_rc", "wall_ms", "compare_spec"]


def ptext(p):
    if not p:
        return ""
    return ",".join("%s=%s" % (k, v) for k, v in p.items())


def read_json(path):
    """A JSON file, or the last line of a file whose last line is a JSON object."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def main():
    runs, out = sys.argv[1], sys.argv[2]
    meta = json.load(open(os.path.join(runs, "cases.json")))
    walls = {}
    if os.path.exists(os.path.join(runs, "walls.txt")):
        for line in open(os.path.join(runs, "walls.txt")):
            tag, rc, ms = line.split()
            walls[tag] = (int(rc), int(ms))
    prows, crows = [], []
    for c in meta["cases"]:
        prog, inp = c["program"], c["input"]
        tag = "%s__%s" % (prog, inp)
        sweep = os.path.join(runs, "sweep_%s.jsonl" % tag)
        if not os.path.exists(sweep):
            continue
        report = read_json(os.path.join(runs, "report_%s.json" % tag)) or {}
        placer = {}
        for k in report.get("kernels", []):
            placer.setdefault(k["kernel"], k)
        run = read_json(os.path.join(runs, "run_%s.json" % tag)) or {}
        orig = read_json(os.path.join(runs, "orig_%s.json" % tag)) or {}
        for line in open(sweep):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j["type"] == "placement":
                prows.append({
                    "program": prog, "input": inp, "kernel": j["kernel"],
                    "signature": j["signature"], "index": j["index"],
                    "placement": j["placement_text"], "roles": "+".join(j["roles"]),
                    "compiled": int(j["compiled"]), "dynamic_requested": int(j["dynamic_requested"]),
                    "dispatch": j["dispatch"], "status": j["status"], "detail": j["detail"],
                    "model_feasible": int(j["model_feasible"]),
                    "predicted_us": "" if j["predicted_us"] is None else j["predicted_us"],
                    "median_ms": "" if j["median_ms"] is None else j["median_ms"],
                    "min_ms": "" if j["min_ms"] is None else j["min_ms"],
                    "max_ms": "" if j["max_ms"] is None else j["max_ms"],
                    "n_timed": len(j["ms"]),
                    "host_us": "" if j["host_us"] is None else j["host_us"],
                    "compared": int(j["compared"]), "equal": int(j["equal"]),
                    "differing_words": j["differing_words"],
                    "compare_predicted_us": "" if j.get("compare_predicted_us") is None
                    else j["compare_predicted_us"]})
                continue
            k = j["kernel"]
            pk = placer.get(k, {})
            oh = pk.get("overhead_ms", {})
            meas = pk.get("measured", {})
            row = {
                "program": prog, "input": inp, "kernel": k, "signature": j.get("signature", ""),
                "status": j.get("status", ""), "space": j.get("space", ""),
                "feasible": j.get("feasible", ""), "enumerated": int(bool(j.get("enumerated"))),
                "complete": int(bool(j.get("complete"))), "pool": j.get("pool", ""),
                "planned": j.get("planned", ""), "measured": j.get("measured", ""),
                "unequal": j.get("unequal", ""), "original": ptext(j.get("original")),
                "memplace": ptext(j.get("memplace")), "memplace_status": j.get("memplace_status", ""),
                "memplace_compiled": int(bool(j.get("memplace_compiled"))),
                "memplace_why": j.get("memplace_why", ""),
                "engine_best": ptext(j.get("engine_best")), "rules": ptext(j.get("rules")),
                "compiled_count": j.get("compiled_count", ""), "plan_ms": j.get("plan_ms", ""),
                "sweep_ms": j.get("sweep_ms", ""),
                "launches": pk.get("launches", {}).get("total", ""),
                "placer_status": pk.get("status", ""),
                "placer_applied": ptext(pk.get("applied")),
                "tuning_state": (pk.get("tuning") or {}).get("state") or "",
                "tuning_why": (pk.get("tuning") or {}).get("why") or "",
                "tuning_launches": (pk.get("tuning") or {}).get("launches", ""),
                "overhead_profiling_ms": oh.get("profiling", ""),
                "overhead_engine_ms": oh.get("engine", ""),
                "overhead_transform_ms": oh.get("transform", ""),
                "overhead_total_ms": oh.get("total", ""),
                "placer_original_ms": meas.get("original_ms", "") if meas.get("original_ms") is not None else "",
                "placer_placed_ms": meas.get("placed_ms", "") if meas.get("placed_ms") is not None else "",
                "program_median_ms": run.get("median_ms", ""),
                "program_kernel_ms": (run.get("kernels") or {}).get(k, ""),
                "program_checksum": run.get("checksum", ""),
                "original_median_ms": orig.get("median_ms", ""),
                "original_kernel_ms": (orig.get("kernels") or {}).get(k, ""),
                "original_checksum": orig.get("checksum", ""),
                "checksum_equal": int(bool(run.get("checksum")) and run.get("checksum") == orig.get("checksum")),
                "run_rc": walls.get(tag, ("", ""))[0], "wall_ms": walls.get(tag, ("", ""))[1],
                "compare_spec": j.get("compare_spec") or ""}
            crows.append(row)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "placements.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, PLACEMENT_FIELDS)
        w.writeheader()
        w.writerows(prows)
    with open(os.path.join(out, "cases.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, CASE_FIELDS)
        w.writeheader()
        w.writerows(crows)
    print("wrote %d placements of %d cases" % (len(prows), len(crows)))
    skipped = os.path.join(runs, "skipped.txt")
    if os.path.exists(skipped):
        print(open(skipped).read().strip())
    print(analyze.summary_text(*analyze.load(out)))


if __name__ == "__main__":
    main()
