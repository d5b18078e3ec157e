#include "trace/trace-hw_rdma_sim.h"
