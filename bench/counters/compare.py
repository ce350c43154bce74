#!/usr/bin/env python3
"""Model against Nsight Compute: one table row per case, kernel and metric.

  compare.py PREP_DIR NCU_DIR [--memplace BIN] [--json OUT.json] [--markdown OUT.md]

PREP_DIR is prepare.sh's output (traces/PROGRAM_INPUT_SIZE/*.trace, full traces of the same
runs), NCU_DIR ncu_collect.py's (CASE.csv). For every case of cases.txt and every kernel traced
for it, `memplace place TRACE --spec h100 --json --evaluate PLACEMENT` gives the model's
per-memory counters (breakdown.counters) for the case's placement, set against ncu's:

  L1 ld sectors    L1 read transactions (sectors)   l1tex__t_sectors_pipe_lsu_mem_global_op_ld
  L1 ld hit %      L1 read hits / transactions      l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate
  tex sectors      texL1 read transactions          l1tex__t_sectors_pipe_tex_mem_texture
  tex hit %        texL1 read hits / transactions   ..._texture_lookup_hit / ..._texture
  L2 rd sectors    L2 read transactions             lts__t_sectors_srcunit_tex_op_read
  L2 rd hit %      L2 read hits / transactions      ..._srcunit_tex_op_read_lookup_hit / ..._op_read
  L2 wr sectors    L2 write transactions            lts__t_sectors_srcunit_tex_op_write
  L2 wr hit %      L2 write hits / transactions     ..._srcunit_tex_op_write_lookup_hit / ..._op_write
  DRAM rd sectors  reads reaching device memory     dram__sectors_read
  DRAM wr sectors  writes reaching device memory    dram__sectors_write

Error: (model - ncu) / ncu for counts, model - ncu in points for hit rates.
"""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def cases():
    out = []
    for line in open(os.path.join(HERE, "cases.txt")):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        out.append((f[0], f[1], f[2:6], f[6] if len(f) > 6 else "default"))
    return out


def read_ncu(path):
    """{kernel display name: {metric: value}} (the last launch of each name wins)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        return rows
    for r in csv.DictReader(text[start:].splitlines()):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except (ValueError, KeyError):
            continue
        rows.setdefault((r["ID"], r["Kernel Name"]), {})[r["Metric Name"]] = v
    out = {}
    for (_, name), m in rows.items():
        out[name] = m
    return out


def find_kernel(ncu, kernel):
    pat = re.compile(r"^(void\s+)?" + re.escape(kernel) + r"\s*[<(]")
    hits = [m for n, m in ncu.items() if pat.search(n)]
    return hits[-1] if hits else None


def model_counters(memplace, trace, placement, spec):
    p = subprocess.run([memplace, "place", trace, "--spec", spec, "--json", "--evaluate",
                        placement], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"memplace place {trace} --evaluate {placement}: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    ev = j["evaluated"][0]
    if not ev["feasible"]:
        raise RuntimeError(f"{placement} infeasible: {ev['breakdown'].get('reason')}")
    c = {x["memory"]: x for x in ev["breakdown"]["counters"]}
    return j["kernel"], c, ev["breakdown"]


def get(c, mem, key):
    return c[mem][key] if mem in c else 0.0


def rows_for(case, kernel, c, m):
    def ratio(a, b):
        return 100.0 * a / b if b else None
    l2r = get(c, "L2", "read_requests") + get(c, "L2persist", "read_requests")
    l2h = get(c, "L2", "read_hits") + get(c, "L2persist", "read_hits")
    l2w = get(c, "L2", "write_requests") + get(c, "L2persist", "write_requests")
    rows = [
        ("L1 ld sectors", get(c, "L1", "read_requests"),
         m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), "count"),
        ("L1 ld hit %", ratio(get(c, "L1", "read_hits"), get(c, "L1", "read_requests")),
         m.get("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"), "pct"),
    ]
    tex = m.get("l1tex__t_sectors_pipe_tex_mem_texture.sum", 0)
    if "texL1" in c or tex:
        texhit = m.get("l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum")
        rows += [
            ("tex sectors", get(c, "texL1", "read_requests"), tex, "count"),
            ("tex hit %", ratio(get(c, "texL1", "read_hits"), get(c, "texL1", "read_requests")),
             ratio(texhit, tex) if texhit is not None else None, "pct"),
        ]
    ncu_l2r = m.get("lts__t_sectors_srcunit_tex_op_read.sum")
    ncu_l2h = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
    rows += [
        ("L2 rd sectors", l2r, ncu_l2r, "count"),
        ("L2 rd hit %", ratio(l2h, l2r),
         ratio(ncu_l2h, ncu_l2r) if ncu_l2h is not None and ncu_l2r else None, "pct"),
        ("L2 wr sectors", l2w, m.get("lts__t_sectors_srcunit_tex_op_write.sum"), "count"),
        ("L2 wr hit %", ratio(get(c, "L2", "write_hits") + get(c, "L2persist", "write_hits"), l2w),
         ratio(m.get("lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum"),
               m.get("lts__t_sectors_srcunit_tex_op_write.sum"))
         if m.get("lts__t_sectors_srcunit_tex_op_write.sum") else None, "pct"),
        ("DRAM rd sectors", get(c, "global", "read_requests"), m.get("dram__sectors_read.sum"),
         "count"),
        ("DRAM wr sectors", get(c, "global", "write_requests"), m.get("dram__sectors_write.sum"),
         "count"),
    ]
    out = []
    for metric, model, ncu, kind in rows:
        if model is None and ncu is None:
            continue
        err = None
        if model is not None and ncu is not None:
            if kind == "pct":
                err = model - ncu
            elif ncu > 0:
                err = (model - ncu) / ncu
            elif model == 0:
                err = 0.0
        out.append({"case": case, "kernel": kernel, "metric": metric, "model": model,
                    "ncu": ncu, "error": err, "kind": kind})
    return out


def fmt_value(v, kind):
    if v is None:
        return "–"
    if kind == "pct":
        return f"{v:.1f}"
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def fmt_error(e, kind):
    if e is None:
        return "–"
    return f"{e:+.1f} pt" if kind == "pct" else f"{100 * e:+.0f}%"


def wide_table(rows):
    metrics = []
    for r in rows:
        if r["metric"] not in metrics:
            metrics.append(r["metric"])
    keys = []
    cells = {}
    for r in rows:
        k = (r["case"], r["kernel"], r["input"], r["placement"])
        if k not in keys:
            keys.append(k)
        if r["model"] is None and r["ncu"] is None:
            continue
        cells[k + (r["metric"],)] = (f"{fmt_value(r['model'], r['kind'])} / "
                                     f"{fmt_value(r['ncu'], r['kind'])} "
                                     f"({fmt_error(r['error'], r['kind'])})")
    lines = ["| case | kernel | input | placement | " + " | ".join(metrics) + " |",
             "|---|---|---|---|" + "---|" * len(metrics)]
    for k in keys:
        lines.append("| " + " | ".join(k) + " | " +
                     " | ".join(cells.get(k + (m,), "") for m in metrics) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prep")
    ap.add_argument("ncu")
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--spec", default="h100")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--wide", action="store_true",
                    help="one row per case and kernel, a column per metric: model / ncu (error)")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    rows = []
    for name, prog, args, placement in cases():
        if a.cases and name not in a.cases:
            continue
        d = os.path.join(a.prep, "traces", f"{prog}_{args[1]}_{args[3]}")
        variants = [(name, placement)]
        if placement == "default" and os.path.exists(os.path.join(a.ncu, name + "_orig.csv")):
            # the untouched program: its hand placement (read-only path) is global on sm_90
            variants.append((name + "_orig", placement))
        for vname, vplacement in variants:
            ncu = read_ncu(os.path.join(a.ncu, vname + ".csv"))
            for trace in sorted(glob.glob(os.path.join(d, "*.trace"))):
                try:
                    kernel, c, _ = model_counters(a.memplace, trace, vplacement, a.spec)
                except RuntimeError as e:
                    print(f"{vname}: {e}", file=sys.stderr)
                    continue
                m = find_kernel(ncu, kernel) or {}
                if not m:
                    print(f"{vname}: no ncu row for kernel {kernel}", file=sys.stderr)
                rows += [dict(r, input=f"{args[1]} {args[3]}", placement=vplacement)
                         for r in rows_for(vname, kernel, c, m)]
    lines = ["| case | kernel | input | placement | metric | model | ncu | error |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['kernel']} | {r['input']} | {r['placement']} | "
                     f"{r['metric']} | {fmt_value(r['model'], r['kind'])} | "
                     f"{fmt_value(r['ncu'], r['kind'])} | {fmt_error(r['error'], r['kind'])} |")
    text = "\n".join(lines) + "\n"
    if a.wide:
        text = wide_table(rows)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
