/*
 * lt_distributed.hpp — what lt_ddp.cpp needs from lt_distributed.cpp: a process group handle as
 * c10d's own ProcessGroup (the object c10d::Reducer and its comm hooks take), without Gloo's or
 * NCCL's headers. lt_distributed.cpp defines the function; the c10d::ProcessGroup is built on
 * first use around the group's backend and kept for the handle's life.
 */
#pragma once

#include "lt.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace lt {

/* The group as a c10d::ProcessGroup whose default backend is this handle's (Gloo for CPU and
 * CUDA tensors, or NCCL for CUDA tensors, as PyTorch registers them). Throws on a destroyed group. */
c10::intrusive_ptr<c10d::ProcessGroup> c10d_group(lt_process_group *g);

}  // namespace lt
