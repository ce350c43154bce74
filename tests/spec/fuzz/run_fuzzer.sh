#!/usr/bin/env bash
# Runs a libFuzzer binary for N seconds on a copy of the seed corpora, so the checked-in
# corpus is never modified. Fails on any crash, leak, timeout or sanitizer report.
# MEMPLACE_FUZZ_MAX_LEN (bytes, default 8192) and MEMPLACE_FUZZ_TIMEOUT (seconds an input may
# take, default 10) come from the environment (memplace_fuzzer in cmake/memplace.cmake).
set -euo pipefail
bin=$1; seconds=$2; shift 2
work=${@: -1}; seeds=("${@:1:$#-1}")
rm -rf "$work"; mkdir -p "$work/corpus" "$work/artifacts"
for s in "${seeds[@]}"; do [ -d "$s" ] && cp "$s"/* "$work/corpus/" 2>/dev/null || true; done
exec "$bin" "$work/corpus" -max_total_time="$seconds" -max_len="${MEMPLACE_FUZZ_MAX_LEN:-8192}" \
  -timeout="${MEMPLACE_FUZZ_TIMEOUT:-10}" \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 -close_fd_mask=3
