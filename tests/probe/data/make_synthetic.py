#!/usr/bin/env python3
"""Writes synthetic_measurements.json: memplace-probe-gpu's output format, generated from known
parameters with the models the fits assume (plus a little deterministic noise), so the tests
can check that each fit recovers its parameter. Run from this folder to regenerate."""
import json, math, random

rng = random.Random(7)
def noisy(x, rel=0.004):
    return round(x * (1 + rng.uniform(-rel, rel)), 3)

KB, MB = 1024, 1024 * 1024
lat = dict(shared=29.0, l1_hit=32.0, readonly_hit=32.5, l2_hit=250.0, l2_via_l1=262.0,
           dram=480.0, dram_via_l1=495.0, dram_wide=560.0, tex_hit=44.0, tex_l2=290.0,
           tex_dram=520.0, const_l1=24.0, const_l15=80.0, const_l2=240.0, const_dram=520.0)
CAP = dict(l1=240 * KB, tex=240 * KB, c1=2 * KB, c15=32 * KB, l2=48 * MB)
BLOCK = dict(l1=32, l2=64, tex=32, c1=64, c15=256)
BANKS = 32
CLOCK = 1755.0
A = dict(registers=0.00042, shared=0.00031, L1=0.00011, texL1=0.00014, constL1=0.0021,
         constL15=0.0009, L2=0.00005, global_=0.000037)
A_CMP = {k: v * 3 for k, v in A.items()}

def resident(size, cap):
    return min(1.0, cap / size)

def resident_full_pass(size, cap):
    # Every line visited each pass (the constant sweep): an LRU cache keeps almost nothing once
    # the set outgrows it.
    return 1.0 if size <= cap else 0.1 * cap / size

def capacity_sweep(sizes, cap, hit, miss):
    return [[s, noisy(hit * h + miss * (1 - h))] for s in sizes for h in [resident(s, cap)]]

def stride_sweep(strides, b, hit, miss):
    return [[s, noisy(hit + (miss - hit) * min(1.0, s / b))] for s in strides]

def degree(stride, banks, words=8192):
    per = {}
    for l in range(32):
        w = (l * stride) % words
        per.setdefault(w % banks, set()).add(w)
    return max(len(v) for v in per.values())

m = {
    "schema": "memplace-probe-measurements", "version": 1, "date": "2026-01-01T00:00:00Z",
    "quick": False,
    "device": {
        "name": "Synthetic GPU", "cc_major": 9, "cc_minor": 0, "sms": 132, "warp_size": 32,
        "clock_peak_khz": 1980000, "memory_clock_peak_khz": 2619000, "memory_bus_width_bits": 5120,
        "l2_bytes": 50 * MB, "persisting_l2_max_bytes": 39321600,
        "access_policy_window_max_bytes": 134213632, "max_threads_per_sm": 2048,
        "max_blocks_per_sm": 32, "max_registers_per_sm": 65536, "max_shared_per_sm": 233472,
        "max_threads_per_block": 1024, "max_registers_per_block": 65536,
        "max_shared_per_block": 49152, "max_shared_per_block_optin": 232448,
        "reserved_shared_per_block": 1024, "total_constant_bytes": 65536,
        "total_global_bytes": 85520809984, "free_global_bytes": 84000000000,
        "max_texture_1d_linear": 268435456, "driver_version": 13000, "runtime_version": 13000},
    "latency": {k: {"cycles": v, "path": "synthetic", "bytes": 4096, "stride": 128,
                    "steps": 4096, "method": "synthetic " + k} for k, v in lat.items()},
    "sweeps": {
        "l1_capacity": {"path": "ld.global.ca", "method": "synthetic", "points": capacity_sweep(
            [k * KB for k in [16, 32, 64, 128, 192, 224, 240, 256, 288, 320, 384, 512]],
            CAP["l1"], lat["l1_hit"], lat["l2_via_l1"])},
        "texl1_capacity": {"path": "tex1Dfetch", "method": "synthetic", "points": capacity_sweep(
            [k * KB for k in [16, 32, 64, 128, 192, 224, 240, 256, 288, 320, 384, 512]],
            CAP["tex"], lat["tex_hit"], lat["tex_l2"])},
        "l2_capacity": {"path": "ld.global.cg", "method": "synthetic", "points": capacity_sweep(
            [k * MB for k in [4, 8, 16, 32, 40, 48, 56, 64, 80, 96, 128, 192, 256]],
            CAP["l2"], lat["l2_hit"], lat["dram"])},
        "const_capacity": {"path": "ld.const", "method": "synthetic", "points": [
            [s, noisy(lat["const_l1"] * resident_full_pass(s, CAP["c1"]) +
                      (1 - resident_full_pass(s, CAP["c1"])) *
                      (lat["const_l15"] * resident_full_pass(s, CAP["c15"]) +
                       lat["const_l2"] * (1 - resident_full_pass(s, CAP["c15"]))))]
            for s in [256, 512, 1024, 2048, 2560, 3072, 4096, 8192, 16384, 32768, 40960, 49152,
                      65536]]},
    },
    "strides": {
        "l1_fetch": {"path": "ld.global.ca", "method": "synthetic", "points": stride_sweep(
            [8, 16, 32, 64, 128, 256, 512], BLOCK["l1"], lat["l1_hit"], lat["l2_via_l1"])},
        "l2_fetch": {"path": "ld.global.cg", "method": "synthetic", "points": stride_sweep(
            [8, 16, 32, 64, 128, 256, 512], BLOCK["l2"], lat["l2_hit"], lat["dram"])},
        "tex_fetch": {"path": "tex1Dfetch", "method": "synthetic", "points": stride_sweep(
            [8, 16, 32, 64, 128, 256, 512], BLOCK["tex"], lat["tex_hit"], lat["tex_l2"])},
        "const_fetch": {"path": "ld.const", "method": "synthetic", "points": [
            [s, noisy(lat["const_l1"] + (lat["const_l15"] - lat["const_l1"]) * min(1, s / BLOCK["c1"])
                      + (lat["const_l2"] - lat["const_l15"]) * min(1, s / BLOCK["c15"]))]
            for s in [4, 8, 16, 32, 64, 128, 256, 512, 1024]]},
    },
    "shared_banks": {"method": "synthetic", "words": 8192, "points": [
        [s, noisy(29 + 2 * (degree(s, BANKS) - 1))]
        for s in [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64, 128]]},
    "constant_lanes": {"method": "synthetic",
                       "spacing4": [[d, noisy(24 + 4.2 * (d - 1))] for d in [1, 2, 4, 8, 16, 32]],
                       "spacing64": [[d, noisy(24 + 4.3 * (d - 1))] for d in [1, 2, 4, 8, 16, 32]]},
    "clock_mhz": [1754.0, 1756.0],
}

# Calibration kernels: measured time = sum_j N_j T_j a_j (cycles) -> ms at CLOCK.
spec_lat = dict(registers=1, shared=lat["shared"], L1=lat["l1_hit"], texL1=lat["tex_hit"],
                constL1=lat["const_l1"], constL15=lat["const_l15"], L2=lat["l2_via_l1"],
                global_=lat["dram_via_l1"])
def kernel(name, path, regime, mem, n, bytes_, a):
    cycles = n * spec_lat[mem] * a[mem]
    ms = noisy(cycles / (CLOCK * 1e3), 0.01)
    return {"name": name, "path": path, "regime": regime, "bytes": bytes_, "ms": ms,
            "method": "synthetic", "transactions": {mem.rstrip("_"): n}}
G = 1 << 30
kernels = [
    kernel("dram_ld", "ld.global.ca", "memory", "global_", G / 32, G, A),
    kernel("dram_ld128", "ld.global.ca", "memory", "global_", G / 32, G, A),
    kernel("dram_ld_fma", "ld.global.ca", "compute", "global_", G / 32, G, A_CMP),
    kernel("l2_ld", "ld.global.cg", "memory", "L2", 8 * 16 * MB / 32, 8 * 16 * MB, A),
    kernel("l2_ld_fma", "ld.global.cg", "compute", "L2", 8 * 16 * MB / 32, 8 * 16 * MB, A_CMP),
    kernel("l1_ld", "ld.global.ca", "memory", "L1", 1e9, 32e9, A),
    kernel("l1_ld_fma", "ld.global.ca", "compute", "L1", 1e8, 32e8, A_CMP),
    kernel("texl1_tex", "tex1Dfetch", "memory", "texL1", 1e9, 32e9, A),
    kernel("texl1_tex_fma", "tex1Dfetch", "compute", "texL1", 1e8, 32e8, A_CMP),
    kernel("shared_ld", "ld.shared", "memory", "shared", 5e8, 64e9, A),
    kernel("shared_ld_fma", "ld.shared", "compute", "shared", 5e7, 64e8, A_CMP),
    kernel("const_bcast", "ld.const", "memory", "constL1", 3e8, 3.8e10, A),
    kernel("const_bcast_fma", "ld.const", "compute", "constL1", 3e7, 3.8e9, A_CMP),
    kernel("const_l15", "ld.const", "memory", "constL15", 3e8, 3.8e10, A),
    kernel("const_l15_fma", "ld.const", "compute", "constL15", 3e7, 3.8e9, A_CMP),
    kernel("registers", "fma", "memory", "registers", 2e9, 0, A),
    kernel("registers_fma", "fma", "compute", "registers", 2e9, 0, A),
]
kernels.append({"name": "dram_st128", "path": "st.global", "regime": "none", "bytes": G,
                "ms": 0.4, "method": "synthetic", "transactions": {}})
m["kernels"] = kernels
m["elapsed_s"] = 12.5
with open("synthetic_measurements.json", "w") as f:
    json.dump(m, f, indent=1)
    f.write("\n")
print("truth:", json.dumps(dict(CAP=CAP, BLOCK=BLOCK, BANKS=BANKS, A=A, A_CMP=A_CMP)))
