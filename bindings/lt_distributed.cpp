/*
 * lt_distributed.cpp — libtorch's c10d for Lua: rendezvous stores (TCPStore, FileStore) and
 * process groups (Gloo when its headers were found at configure time, LTORCH_WITH_GLOO: Debian's
 * libgloo-dev; NCCL when libtorch was built with it and ltorch is compiled with
 * LTORCH_WITH_NCCL), with the collectives that data-parallel training needs: all_reduce,
 * broadcast, all_gather, barrier. lua/torch/distributed.lua builds PyTorch's
 * torch.distributed API on top.
 *
 * Every collective is synchronous from the caller's view: it enqueues the c10d Work and waits
 * for it with a bounded timeout (NCCL: in stream order, as PyTorch; the host goes on); a peer
 * that died or never answered surfaces as an error from Work::wait (caught here, reported
 * through the error slot), never as a hang or a C++ throw.
 * Gloo wants dense contiguous CPU tensors: non-contiguous inputs are reduced through a
 * contiguous copy that is copied back.
 *
 * Kept in its own file: the c10d and Gloo headers are heavy to compile.
 */
#include "lt_internal.hpp"
#include "lt_distributed.hpp"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <ATen/ops/empty_like.h>
#ifdef LTORCH_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef LTORCH_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

struct lt_store {
  c10::intrusive_ptr<c10d::Store> s;
};

/* The collectives ltorch uses, over one concrete group type. libtorch 1.13's ProcessGroupGloo
 * derives from ProcessGroup, 2.x's from Backend; both spell these methods the same, so holding
 * the concrete type keeps this file building against either. */
struct lt_collectives {
  virtual ~lt_collectives() = default;
  virtual int rank() = 0;
  virtual int size() = 0;
  virtual c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &ts, const c10d::AllreduceOptions &o) = 0;
  virtual c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &ts, const c10d::BroadcastOptions &o) = 0;
  virtual c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &out,
                                                   std::vector<at::Tensor> &in, const c10d::AllgatherOptions &o) = 0;
  virtual c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &o) = 0;
  virtual c10::intrusive_ptr<c10d::Backend> backend() = 0;
};

template <class PG>
struct lt_collectives_of : lt_collectives {
  explicit lt_collectives_of(c10::intrusive_ptr<PG> p) : pg(std::move(p)) {}
  c10::intrusive_ptr<PG> pg;
  int rank() override { return pg->getRank(); }
  int size() override { return pg->getSize(); }
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &ts, const c10d::AllreduceOptions &o) override {
    return pg->allreduce(ts, o);
  }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &ts, const c10d::BroadcastOptions &o) override {
    return pg->broadcast(ts, o);
  }
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &out, std::vector<at::Tensor> &in,
                                           const c10d::AllgatherOptions &o) override {
    return pg->allgather(out, in, o);
  }
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &o) override { return pg->barrier(o); }
  c10::intrusive_ptr<c10d::Backend> backend() override { return pg; }
};

struct lt_process_group {
  std::unique_ptr<lt_collectives> pg;
  std::string backend;
  std::chrono::milliseconds timeout;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> c10d_group;  // built by lt::c10d_group on first use
  // A collective was interrupted while in flight: the backend's threads still wait on it, and
  // destroying the backend would join them (a hang until the peer answers or times out).
  bool abandoned = false;
  std::optional<at::Device> bound_device;  // init_process_group's device_id
};

namespace {

c10d::Store &store(lt_store *s) {
  if (s == nullptr || !s->s) throw lt::ValueError("distributed store was freed");
  return *s->s;
}

lt_process_group &group(lt_process_group *g) {
  if (g == nullptr || !g->pg) throw lt::ValueError("process group was destroyed (destroy_process_group)");
  return *g;
}

std::chrono::milliseconds ms(int64_t timeout_ms) {
  if (timeout_ms <= 0) throw lt::ValueError("distributed timeout must be positive (milliseconds)");
  return std::chrono::milliseconds(timeout_ms);
}

c10d::ReduceOp reduce_op(int op) {
  switch (op) {
    case 0: return c10d::ReduceOp::SUM;
    case 1: return c10d::ReduceOp::PRODUCT;
    case 2: return c10d::ReduceOp::MIN;
    case 3: return c10d::ReduceOp::MAX;
    case 4: return c10d::ReduceOp::AVG;
    default: throw lt::ValueError("unknown reduce op code " + std::to_string(op));
  }
}

/* Waits for a collective. NCCL: stream-ordered (below). Gloo: polls its completion so that an
 * interrupt (Ctrl-C, ltorch_interrupt) ends the wait at once instead of after the group's timeout, then lets Work::wait report the
 * result (a peer's failure, the timeout). The first ~1000 polls only yield, so a collective that
 * completes in microseconds pays no sleep; after them the poll sleeps 200 us. After an interrupt
 * the collective is still in flight: the group must not be used again (as after a timeout). */
void wait(lt_process_group &g, const c10::intrusive_ptr<c10d::Work> &work, const char *what) {
  try {
    if (g.backend == "nccl") {
      // NCCL's Work::wait orders the current CUDA stream after the collective and returns: the
      // host does not wait, so a collective overlaps whatever is queued after it (PyTorch's
      // behaviour). Errors and timeouts come from its watchdog through the next wait.
      work->wait(g.timeout);
      return;
    }
    auto deadline = std::chrono::steady_clock::now() + g.timeout;
    for (int polls = 0; !work->isCompleted(); polls++) {
      if (lt::interrupt_requested()) {
        g.abandoned = true;
        throw std::runtime_error("interrupted! (while waiting for the other ranks; this process group "
                                 "cannot be used after it)");
      }
      if (std::chrono::steady_clock::now() > deadline) break;  // Work::wait raises the timeout
      if (polls < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    work->wait(g.timeout);
  } catch (const std::exception &e) {
    throw std::runtime_error(std::string(what) + " failed (" + g.backend + "): " + e.what());
  }
}

}  // namespace

/* PyTorch's registration: "gloo" serves CPU and CUDA tensors, "nccl" CUDA tensors. */
c10::intrusive_ptr<c10d::ProcessGroup> lt::c10d_group(lt_process_group *g) {
  auto &pg = group(g);
  if (!pg.c10d_group) {
    auto wrapper = c10::make_intrusive<c10d::ProcessGroup>(pg.store, pg.pg->rank(), pg.pg->size());
    auto backend = pg.pg->backend();
    if (pg.backend == "nccl") {
      wrapper->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, backend);
      wrapper->setDefaultBackend(c10d::ProcessGroup::BackendType::NCCL);
    } else {
      wrapper->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, backend);
      wrapper->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, backend);
      wrapper->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
    }
    if (pg.bound_device) wrapper->setBoundDeviceId(pg.bound_device);
    pg.c10d_group = wrapper;
  }
  return pg.c10d_group;
}

extern "C" {

int lt_dist_has_backend(const char *backend, int *out) {
  LT_TRY
  std::string b(backend);
  *out = 0;
#ifdef LTORCH_WITH_GLOO
  if (b == "gloo") *out = 1;
#endif
#ifdef LTORCH_WITH_NCCL
  if (b == "nccl") *out = 1;
#endif
  LT_CATCH
}

int lt_dist_store_tcp(lt_store **out, const char *host, int port, int is_server, int world_size,
                      int64_t timeout_ms) {
  LT_TRY
  *out = nullptr;
  if (port < 0 || port > 65535) throw lt::ValueError("TCPStore port out of range: " + std::to_string(port));
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(port);
  o.isServer = is_server != 0;
  if (world_size > 0) o.numWorkers = static_cast<std::size_t>(world_size);
  o.waitWorkers = true;
  o.timeout = ms(timeout_ms);
  auto s = c10::make_intrusive<c10d::TCPStore>(std::string(host), o);
  *out = new lt_store{s};
  LT_CATCH
}

int lt_dist_store_file(lt_store **out, const char *path, int world_size, int64_t timeout_ms) {
  LT_TRY
  *out = nullptr;
  auto s = c10::make_intrusive<c10d::FileStore>(std::string(path), world_size);
  s->setTimeout(ms(timeout_ms));
  *out = new lt_store{s};
  LT_CATCH
}

int lt_dist_store_prefix(lt_store **out, const char *prefix, lt_store *base) {
  LT_TRY
  *out = nullptr;
  store(base);
  auto s = c10::make_intrusive<c10d::PrefixStore>(std::string(prefix), base->s);
  *out = new lt_store{s};
  LT_CATCH
}

void lt_dist_store_free(lt_store *s) { delete s; }

int lt_dist_store_set(lt_store *s, const char *key, const char *value, int64_t len) {
  LT_TRY
  const auto *p = reinterpret_cast<const uint8_t *>(value);
  store(s).set(std::string(key), std::vector<uint8_t>(p, p + len));
  LT_CATCH
}

/* Waits (the store's timeout) for key; *out is malloc'ed, freed with lt_dist_buffer_free. */
int lt_dist_store_get(lt_store *s, const char *key, char **out, int64_t *len) {
  LT_TRY
  *out = nullptr;
  *len = 0;
  auto v = store(s).get(std::string(key));
  char *buf = static_cast<char *>(std::malloc(v.size() + 1));
  if (buf == nullptr) throw std::bad_alloc();
  if (!v.empty()) std::memcpy(buf, v.data(), v.size());
  buf[v.size()] = '\0';
  *out = buf;
  *len = static_cast<int64_t>(v.size());
  LT_CATCH
}

void lt_dist_buffer_free(char *p) { std::free(p); }

int lt_dist_store_add(lt_store *s, const char *key, int64_t delta, int64_t *out) {
  LT_TRY
  *out = store(s).add(std::string(key), delta);
  LT_CATCH
}

int lt_dist_pg_new(lt_process_group **out, lt_store *s, const char *backend, int rank, int world_size,
                   int64_t timeout_ms, const char *gloo_hostname, const char *gloo_iface) {
  LT_TRY
  *out = nullptr;
  store(s);
  std::string b(backend);
  if (world_size < 1) throw lt::ValueError("world_size must be >= 1, got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size) {
    throw lt::ValueError("rank " + std::to_string(rank) + " out of range for world_size " + std::to_string(world_size));
  }
  auto timeout = ms(timeout_ms);
  std::unique_ptr<lt_collectives> pg;
  if (b == "gloo") {
#ifdef LTORCH_WITH_GLOO
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    if (gloo_iface != nullptr && gloo_iface[0] != '\0') {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(gloo_iface));
    } else if (gloo_hostname != nullptr && gloo_hostname[0] != '\0') {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(gloo_hostname));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    opts->threads = 2;
    pg = std::make_unique<lt_collectives_of<c10d::ProcessGroupGloo>>(
        c10::make_intrusive<c10d::ProcessGroupGloo>(s->s, rank, world_size, opts));
#else
    (void)gloo_hostname;
    (void)gloo_iface;
    throw lt::ValueError("backend 'gloo' is not available: this ltorch was built without Gloo's headers "
                         "(install libgloo-dev, or the libtorch's own gloo/ include directory, and reconfigure)");
#endif
  } else if (b == "nccl") {
#ifdef LTORCH_WITH_NCCL
    /* libtorch 2.x's NCCL watchdog defaults to tearing the process down on a timeout or NCCL
     * error (TORCH_NCCL_ASYNC_ERROR_HANDLING=3); ltorch reports those from Work::wait as Lua
     * errors instead. A value the user set is kept. (Its monitor thread can still abort a
     * process whose collective hangs past the heartbeat timeout.) */
    setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0", 0);
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    pg = std::make_unique<lt_collectives_of<c10d::ProcessGroupNCCL>>(
        c10::make_intrusive<c10d::ProcessGroupNCCL>(s->s, rank, world_size, opts));
#else
    throw lt::ValueError("backend 'nccl' is not available: this ltorch was built without NCCL "
                         "(CPU-only libtorch, or no nccl.h at configure time); use backend='gloo'");
#endif
  } else {
    throw lt::ValueError("unknown distributed backend '" + b + "' (expected 'gloo' or 'nccl')");
  }
  *out = new lt_process_group{std::move(pg), b, timeout, s->s, {}};
  LT_CATCH
}

/* Binds the group to one device (init_process_group's device_id, PyTorch's bound_device_id):
 * NCCL then creates its communicator for that device now instead of guessing it at the first
 * collective. */
int lt_dist_pg_bind_device(lt_process_group *g, int device_type, int device_index) {
  LT_TRY
  auto &pg = group(g);
  c10::Device d = lt::device(device_type, device_index);
  if (!d.has_index()) throw lt::ValueError("device_id must name a device with an index, got '" + d.str() + "'");
  pg.bound_device = d;
  auto backend = pg.pg->backend();
  backend->setBoundDeviceId(d);
  if (pg.backend == "nccl") backend->eagerConnectSingleDevice(d);
  if (pg.c10d_group) pg.c10d_group->setBoundDeviceId(d);
  LT_CATCH
}

/* A group with an abandoned collective keeps its backend alive on purpose (its threads are still
 * blocked in that collective; destroying it would join them): the process can exit at once. */
void lt_dist_pg_free(lt_process_group *g) {
  if (g != nullptr && g->abandoned) {
    (void)g->pg.release();  // deliberately leaked, see above
    g->c10d_group.reset();
  }
  delete g;
}

int lt_dist_pg_rank(lt_process_group *g, int *rank, int *world_size) {
  LT_TRY
  auto &pg = group(g);
  *rank = pg.pg->rank();
  *world_size = pg.pg->size();
  LT_CATCH
}

/* op: 0 sum, 1 product, 2 min, 3 max, 4 avg (NCCL only; the Lua side divides a sum for Gloo). */
int lt_dist_all_reduce(lt_process_group *g, lt_tensor *t, int op) {
  LT_TRY
  auto &pg = group(g);
  at::Tensor &x = lt::get_mut(t);
  at::Tensor buf = x.is_contiguous() ? x : x.contiguous();
  std::vector<at::Tensor> ts{buf};
  c10d::AllreduceOptions o;
  o.reduceOp = reduce_op(op);
  o.timeout = pg.timeout;
  wait(pg, pg.pg->allreduce(ts, o), "all_reduce");
  if (!buf.is_same(x)) x.copy_(buf);
  LT_CATCH
}

int lt_dist_broadcast(lt_process_group *g, lt_tensor *t, int src) {
  LT_TRY
  auto &pg = group(g);
  at::Tensor &x = lt::get_mut(t);
  if (src < 0 || src >= pg.pg->size()) throw lt::ValueError("broadcast: src rank " + std::to_string(src) + " out of range");
  at::Tensor buf = x.is_contiguous() ? x : x.contiguous();
  std::vector<at::Tensor> ts{buf};
  c10d::BroadcastOptions o;
  o.rootRank = src;
  o.timeout = pg.timeout;
  wait(pg, pg.pg->broadcast(ts, o), "broadcast");
  if (!buf.is_same(x)) x.copy_(buf);
  LT_CATCH
}

/* outs: world_size handles, each receiving a new tensor (caller frees). */
int lt_dist_all_gather(lt_process_group *g, lt_tensor **outs, int n, const lt_tensor *t) {
  LT_TRY
  auto &pg = group(g);
  for (int i = 0; i < n; i++) outs[i] = nullptr;
  if (n != pg.pg->size()) {
    throw lt::ValueError("all_gather: expected " + std::to_string(pg.pg->size()) + " outputs, got " + std::to_string(n));
  }
  at::Tensor x = lt::get(t).contiguous();
  std::vector<std::vector<at::Tensor>> output(1);
  for (int i = 0; i < n; i++) output[0].push_back(at::empty_like(x));
  std::vector<at::Tensor> input{x};
  c10d::AllgatherOptions o;
  o.timeout = pg.timeout;
  wait(pg, pg.pg->allgather(output, input, o), "all_gather");
  for (int i = 0; i < n; i++) outs[i] = lt::wrap(output[0][i]);
  LT_CATCH
}

int lt_dist_barrier(lt_process_group *g) {
  LT_TRY
  auto &pg = group(g);
  c10d::BarrierOptions o;
  o.timeout = pg.timeout;
  wait(pg, pg.pg->barrier(o), "barrier");
  LT_CATCH
}

}  // extern "C"
