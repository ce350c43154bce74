#!/usr/bin/env python3
"""On the GPU machine: Nsight Compute counters for every case of cases.txt.

  ncu_collect.py BIN_DIR OUT_DIR [CASE...]

BIN_DIR holds the sm_90 programs prepare.sh built (BIN_DIR/P, and BIN_DIR/orig_P for the
original sources when present). For each case: one run (--warmup 0 --repeat 1) under
`ncu --clock-control none` (caches flushed before every kernel, ncu's default), CSV in
OUT_DIR/CASE.csv. Metrics this ncu does not know are dropped once, on the first case, and the
kept list is written to OUT_DIR/metrics.txt. The original program (orig_P) is measured too for
the default-placement cases without '_' in their name. No case starts after NCU_DEADLINE_S
seconds (420).
"""
import os
import re
import subprocess
import sys
import time

DEADLINE_S = float(os.environ.get("NCU_DEADLINE_S", "420"))  # no new case after this
HERE = os.path.dirname(os.path.abspath(__file__))

METRICS = [
    # L1TEX, global loads and stores through the LSU pipe
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors.sum",
    # texture pipe
    "l1tex__t_requests_pipe_tex_mem_texture.sum",
    "l1tex__t_sectors_pipe_tex_mem_texture.sum",
    "l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum",
    "l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss.sum",
    "l1tex__t_sector_pipe_tex_mem_texture_op_tex_hit_rate.pct",
    # L1 <- L2
    "l1tex__m_xbar2l1tex_read_sectors.sum",
    "l1tex__m_l1tex2xbar_write_sectors.sum",
    # L2
    "lts__t_sectors.sum",
    "lts__t_sectors_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_atom.sum",
    "lts__t_sectors_op_red.sum",
    "lts__t_sector_hit_rate.pct",
    "lts__t_sector_op_read_hit_rate.pct",
    "lts__t_sector_op_write_hit_rate.pct",
    "lts__t_sectors_lookup_hit.sum",
    "lts__t_sectors_lookup_miss.sum",
    "lts__t_sectors_srcunit_tex.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum",
    "lts__t_sectors_srcunit_ltcfabric.sum",
    "lts__t_sector_srcunit_tex_hit_rate.pct",
    # DRAM
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
    # shared memory
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    # constant cache
    "idc__requests.sum",
    "idc__requests_lookup_hit.sum",
    # time
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__occupancy_limit_shared_mem",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
]


def cases():
    out = []
    for line in open(os.path.join(HERE, "cases.txt")):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        name, prog, args = f[0], f[1], f[2:6]
        placement = f[6] if len(f) > 6 else ""
        out.append((name, prog, args, placement))
    return out


def run_ncu(binary, args, placement, metrics, csv):
    env = dict(os.environ, MEMPLACE_QUIET="1")
    if placement and placement != "default" and not os.path.basename(binary).startswith("orig_"):
        env["MEMPLACE"] = "force:" + placement
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "all", "--csv", "--print-units", "base",
           "--metrics", ",".join(metrics), "--log-file", csv, binary] + args + \
          ["--warmup", "0", "--repeat", "1"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=150)
    except subprocess.TimeoutExpired as e:
        return 124, f"timeout: {e}"
    return p.returncode, p.stdout + p.stderr


def main():
    bindir, outdir = sys.argv[1], sys.argv[2]
    wanted = set(sys.argv[3:])
    os.makedirs(outdir, exist_ok=True)
    metrics = list(METRICS)
    first = True
    started = time.time()
    for name, prog, args, placement in cases():
        if time.time() - started > DEADLINE_S:
            print(f"{name}: skipped (past {DEADLINE_S} s)", flush=True)
            continue
        if wanted and name not in wanted:
            continue
        variants = [(name, os.path.join(bindir, prog))]
        orig = os.path.join(bindir, "orig_" + prog)
        if not placement and "_" not in name and os.path.exists(orig):
            variants.append((name + "_orig", orig))
        for cname, binary in variants:
            csv = os.path.join(outdir, cname + ".csv")
            for attempt in range(8 if first else 1):
                rc, log = run_ncu(binary, args, placement, metrics, csv)
                errors = [l for l in log.splitlines() if "ERROR" in l or "rror" in l]
                bad = set(m for m in metrics for l in errors
                          if re.search(re.escape(m.split(".")[0]) + r"\b", l))
                if rc == 0 or not bad:
                    break
                print(f"dropping {sorted(bad)}", flush=True)
                metrics = [m for m in metrics if m not in bad and m.split(".")[0] not in bad]
            if first:
                with open(os.path.join(outdir, "metrics.txt"), "w") as f:
                    f.write("\n".join(metrics) + "\n")
                first = False
            with open(os.path.join(outdir, cname + ".log"), "w") as f:
                f.write(log)
            print(f"{cname}: rc {rc}, {os.path.getsize(csv) if os.path.exists(csv) else 0} bytes",
                  flush=True)
            if rc != 0:
                print(log[-1500:], flush=True)


if __name__ == "__main__":
    main()
