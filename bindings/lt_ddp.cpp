/*
 * lt_ddp.cpp — DistributedDataParallel's engine for Lua: libtorch's own c10d::Reducer, the C++
 * object under PyTorch's DDP. lua/torch/nn/parallel.lua drives it exactly as
 * torch/nn/parallel/distributed.py does:
 *
 *   construction  lt_ddp_new: parameters (deduplicated, requires_grad only) bucketed by
 *                 c10d::compute_bucket_assignment_by_size, buckets reversed (the order backward
 *                 produces gradients), one Reducer that hooks every parameter's AccumulateGrad
 *                 node, and its Logger (the Reducer reports errors through it).
 *   each forward  lt_ddp_rebuild_buckets (once, after the first iteration: buckets in the order
 *                 gradients really arrived), lt_ddp_prepare_forward, then after the module ran
 *                 lt_ddp_prepare_backward(outputs) (the graph walk that finds unused parameters
 *                 when find_unused_parameters is on).
 *   backward      any loss:backward(): the hooks copy each ready gradient into its bucket
 *                 (divided by the world size), all-reduce a bucket as soon as it is full — while
 *                 backward goes on — and a callback at the end of backward waits for them and
 *                 writes the averaged buckets back into .grad.
 *   no_sync       the Lua side skips prepare_backward: the hooks then do nothing.
 *
 * Coalesced broadcasts: lt_ddp_broadcast_coalesced (c10d::broadcast_coalesced) packs the
 * parameters at construction and the buffers before each forward into 250 MiB buffers.
 *
 * Comm hooks: c10d's built-ins (allreduce, fp16_compress) and bf16_compress, written here as
 * PyTorch writes it in Python (default_hooks.bf16_compress_hook). static_graph: the Reducer's own
 * mode; its first iteration reduces everything at the end of backward (delay_all_reduce), which
 * PyTorch queues from its _DDPSink and this file from a hook on the forward's outputs.
 *
 * Kept apart from lt_distributed.cpp: reducer.hpp pulls in autograd's internals.
 */
#include "lt_internal.hpp"
#include "lt_distributed.hpp"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/default_comm_hooks.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

struct lt_ddp {
  std::shared_ptr<c10d::Reducer> reducer;
  std::shared_ptr<c10d::Logger> logger;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  bool static_graph = false;
  int64_t iterations = 0;  // forwards that prepared a synchronized backward
};

namespace {

c10d::Reducer &reducer(lt_ddp *d) {
  if (d == nullptr || !d->reducer) throw lt::ValueError("DistributedDataParallel's reducer was freed");
  return *d->reducer;
}

/* PyTorch's bf16_compress_hook: the bucket cast to bfloat16 and pre-divided by the world size,
 * all-reduced, cast back into the bucket. */
class Bf16CompressHook : public c10d::CppCommHookInterface<c10::intrusive_ptr<c10d::ProcessGroup>> {
 public:
  explicit Bf16CompressHook(const c10::intrusive_ptr<c10d::ProcessGroup> &pg)
      : c10d::CppCommHookInterface<c10::intrusive_ptr<c10d::ProcessGroup>>(pg) {}

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket &bucket) override {
    at::Tensor buffer = bucket.getBufferRef();
    at::Tensor compressed = buffer.to(at::kBFloat16).div_(state_->getSize());
    std::vector<at::Tensor> tensors{compressed};
    auto fut = state_->allreduce(tensors)->getFuture();
    auto decompress = [buffer](c10::ivalue::Future &done) {
      at::Tensor reduced = done.value().toTensorVector().at(0);
      buffer.copy_(reduced);
      return c10::IValue(buffer);
    };
    return fut->then(decompress, c10::TensorType::get());
  }
};

/* The parameters as the Reducer wants them: each tensor once (a shared parameter appears once). */
std::vector<at::Tensor> unique_params(lt_tensor *const *params, int n, const char *const *names,
                                      std::unordered_map<size_t, std::string> &name_of) {
  std::vector<at::Tensor> out;
  std::unordered_set<const c10::TensorImpl *> seen;
  for (int i = 0; i < n; i++) {
    const at::Tensor &p = lt::get(params[i]);
    if (!p.requires_grad()) continue;
    if (!p.is_leaf()) throw lt::ValueError(std::string("parameter '") + names[i] + "' is not a leaf tensor");
    if (!seen.insert(p.unsafeGetTensorImpl()).second) continue;
    name_of[out.size()] = names[i];
    out.push_back(p);
  }
  if (out.empty()) {
    throw lt::ValueError("the module has no parameter that requires grad: there is nothing to synchronize");
  }
  return out;
}

}  // namespace

extern "C" {

/* bucket_cap_bytes / first_bucket_cap_bytes as PyTorch computes them from bucket_cap_mb; the
 * first iteration uses one bucket unless find_unused_parameters (PyTorch's choice too: the real
 * gradient order is only known after one backward, and rebuild_buckets then applies the caps). */
int lt_ddp_new(lt_ddp **out, lt_process_group *g, lt_tensor *const *params, const char *const *names, int n,
               int64_t bucket_cap_bytes, int64_t first_bucket_cap_bytes, int find_unused,
               int gradient_as_bucket_view, int static_graph) {
  LT_TRY
  *out = nullptr;
  if (bucket_cap_bytes <= 0 || first_bucket_cap_bytes <= 0) throw lt::ValueError("bucket caps must be positive");
  auto group = lt::c10d_group(g);
  std::unordered_map<size_t, std::string> name_of;
  std::vector<at::Tensor> ps = unique_params(params, n, names, name_of);
  std::vector<bool> sparse(ps.size(), false);
  std::vector<size_t> limits;
  if (static_graph || !find_unused) {
    limits.push_back(static_cast<size_t>(std::numeric_limits<int64_t>::max()));
  } else {
    limits = {static_cast<size_t>(first_bucket_cap_bytes), static_cast<size_t>(bucket_cap_bytes)};
  }
  auto assigned = c10d::compute_bucket_assignment_by_size(ps, limits, sparse, {}, std::nullopt);
  std::vector<std::vector<size_t>> buckets = std::get<0>(assigned);
  std::reverse(buckets.begin(), buckets.end());
  auto d = std::make_unique<lt_ddp>();
  d->group = group;
  d->reducer = std::make_shared<c10d::Reducer>(ps, buckets, group, sparse, bucket_cap_bytes, find_unused != 0,
                                               gradient_as_bucket_view != 0, name_of, first_bucket_cap_bytes,
                                               false, false, std::vector<int64_t>{});
  d->logger = std::make_shared<c10d::Logger>(d->reducer);
  d->reducer->set_logger(d->logger);
  if (static_graph) {
    d->reducer->set_static_graph();
    d->static_graph = true;
  }
  *out = d.release();
  LT_CATCH
}

/* Removes the Reducer's hooks from the parameters (its destructor does; it may throw). */
void lt_ddp_free(lt_ddp *d) {
  if (d == nullptr) return;
  try {
    d->logger.reset();
    d->reducer.reset();
  } catch (...) {
  }
  delete d;
}

/* Before forward, with grad enabled: the Reducer rebuilds its buckets once (a broadcast of rank
 * 0's order); *rebuilt = 1 when it did. */
int lt_ddp_rebuild_buckets(lt_ddp *d, int *rebuilt) {
  LT_TRY
  *rebuilt = reducer(d).rebuild_buckets() ? 1 : 0;
  LT_CATCH
}

int lt_ddp_prepare_forward(lt_ddp *d) {
  LT_TRY
  reducer(d).prepare_for_forward();
  d->iterations++;
  LT_CATCH
}

/* After forward, when this iteration's backward synchronizes. outputs: the tensors the forward
 * returned, walked for unused parameters (find_unused_parameters without static_graph) or
 * hooked (static_graph's first iteration); the Lua side passes none otherwise. */
int lt_ddp_prepare_backward(lt_ddp *d, lt_tensor *const *outputs, int n) {
  LT_TRY
  auto &r = reducer(d);
  std::vector<at::Tensor> outs;
  for (int i = 0; i < n; i++) outs.push_back(lt::get(outputs[i]));
  r.prepare_for_backward(d->static_graph ? std::vector<at::Tensor>{} : outs);
  if (d->static_graph && d->iterations == 1) {
    /* First static-graph iteration: the Reducer only counts hooks; all-reduce everything once
     * backward is done, queued from inside backward as PyTorch's _DDPSink does. */
    auto queued = std::make_shared<std::atomic<bool>>(false);
    std::weak_ptr<c10d::Reducer> weak = d->reducer;
    for (auto &o : outs) {
      if (!o.requires_grad()) continue;
      o.register_hook([queued, weak](const at::Tensor &grad) {
        if (!queued->exchange(true)) {
          torch::autograd::Engine::get_default_engine().queue_callback([weak] {
            if (auto r = weak.lock()) r->delay_all_reduce();
          });
        }
        return grad;
      });
    }
  }
  LT_CATCH
}

/* name: "allreduce" | "fp16_compress" | "bf16_compress". Once, before the first backward. */
int lt_ddp_register_comm_hook(lt_ddp *d, const char *name) {
  LT_TRY
  auto &r = reducer(d);
  std::string h(name);
  if (h == "allreduce") {
    r.register_builtin_comm_hook(c10d::BuiltinCommHookType::ALLREDUCE);
  } else if (h == "fp16_compress") {
    r.register_builtin_comm_hook(c10d::BuiltinCommHookType::FP16_COMPRESS);
  } else if (h == "bf16_compress") {
    r.register_comm_hook(std::make_unique<Bf16CompressHook>(d->group));
  } else {
    throw lt::ValueError("unknown comm hook '" + h + "' (allreduce, fp16_compress, bf16_compress)");
  }
  LT_CATCH
}

/* Broadcasts `ts` from rank `src` in place, packed into buffers of up to buffer_size bytes: one
 * collective per buffer instead of one per tensor (c10d::broadcast_coalesced, PyTorch's
 * _broadcast_coalesced; DDP's parameters at construction and buffers before each forward). */
int lt_ddp_broadcast_coalesced(lt_process_group *g, lt_tensor *const *ts, int n, int64_t buffer_size, int src) {
  LT_TRY
  if (buffer_size <= 0) throw lt::ValueError("broadcast buffer size must be positive");
  std::vector<at::Tensor> tensors;
  tensors.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) tensors.push_back(lt::get(ts[i]));
  at::NoGradGuard no_grad;   // parameters are written in place, as under PyTorch's torch.no_grad()
  if (!tensors.empty()) c10d::broadcast_coalesced(lt::c10d_group(g), tensors, static_cast<size_t>(buffer_size), src);
  LT_CATCH
}

}  // extern "C"
