// The one header a rewritten program includes: device accessors for every place, the staging
// prologue and epilogue, and the launch API (docs/rewrite-contract.md, runtime/README.md).
#pragma once

#include "memplace/accessors.cuh"
#include "memplace/config.h"
#include "memplace/desc.h"
#include "memplace/host.h"
#include "memplace/launch.cuh"
#include "memplace/site.cuh"
#include "memplace/stage.cuh"
