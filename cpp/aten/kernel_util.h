#pragma once
// The kernels' helpers moved to ops/kernel_util.h; this forwards for the units that
// still include them from here (distributed/collectives.cpp).
#include "ops/kernel_util.h"
