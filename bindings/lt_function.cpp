/*
 * lt_function.cpp — custom autograd from Lua: a libtorch Node whose backward is a Lua function
 * (torch.autograd.Function), tensor gradient hooks that run Lua (x:register_hook), and the
 * backward "jobs" that make both safe.
 *
 * Why the queue: libtorch runs backward nodes on its own threads (the calling thread on CPU,
 * per-device worker threads on CUDA), and nothing may call into a Lua state from a thread that
 * does not own it. So a Lua node's apply() (or a hook) never touches Lua: it posts a request to a
 * process-wide queue and blocks. The Lua thread never runs the engine itself: it starts a job
 * (lt_autograd_backward_start / lt_autograd_grad_start), which runs the engine on a helper thread,
 * and then services the queue (lt_autograd_job_next -> call the Lua function ->
 * lt_autograd_reply) until the job is finished (lt_autograd_job_finish joins it and reports the
 * engine's error, e.g. one raised by a Lua backward, as this call's error). While no Lua node or
 * hook exists in the process, nothing can call back into Lua and the engine runs inline instead
 * (no thread hand-off, ~0.1 ms saved per backward). Each node and hook belongs to the Lua thread
 * that made it; its calls go to that thread's queue, and reaching it from a backward that thread
 * is not running is an error, never a deadlock.
 *
 * Reentrancy: a Lua backward may itself run backward (checkpointing does). A job started while the
 * Lua thread is servicing a request is handed to the engine thread that is blocked on that request
 * and runs there, as PyTorch's reentrant backward does (a CUDA device thread that is waiting on Lua
 * would otherwise never serve the inner graph).
 *
 * Interrupts: the Lua side may be stopped by an error at any instruction (Ctrl-C, a host's hook),
 * also between taking a request and replying to it. A thread's jobs sit on a per-thread stack
 * (lt_autograd_job_depth); lt_autograd_unwind(depth, error), one C call made after the Lua side's
 * protected call fails, answers every request those jobs had taken or still queue with the error,
 * waits for their engines to finish, joins and frees them, and restores the grad mode the first of
 * them started under. The engine's mutex, condition variable and queues are never destroyed: an
 * engine thread may still wait on them while the process exits.
 *
 * Lifetime: a Lua node holds only an integer id of its Lua context. When libtorch releases the
 * node's saved state or destroys the node, the id is queued (lt_autograd_released) and the Lua side
 * drops the context on its own thread.
 */
#include "lt_internal.hpp"
#include "lt_warnings.hpp"

#include <ATen/ThreadLocalState.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace {

using torch::autograd::variable_list;

struct Job;

/* One call into Lua, posted by an engine thread and answered by the Lua thread. */
struct Request {
  int kind = 0;                 /* LT_AUTOGRAD_CALL_FUNCTION or LT_AUTOGRAD_CALL_HOOK */
  int64_t id = 0;               /* the Lua context / hook id */
  bool grad_mode = false;       /* the engine thread's grad mode (create_graph) */
  variable_list inputs;         /* grads flowing in */
  variable_list outputs;        /* grads flowing out (the reply) */
  std::string error;
  bool has_error = false;
  bool done = false;
  std::deque<Job *> nested;     /* reentrant backward jobs to run on the waiting thread */
  Job *taken_by = nullptr;      /* the job whose service loop took it (lt_autograd_job_next) */
};

struct Job {
  std::function<void()> work;
  /* The starting Lua thread's grad mode, autocast, ...: captured only for a job that runs on
   * another thread. An inline job runs on the starting thread itself, whose state it already is;
   * capturing and re-applying it cost ~11,000 instructions per backward, about 1 % of a small
   * model's training step (docs/PERFORMANCE.md, optimisation 30). */
  std::optional<at::ThreadLocalState> tls;
  std::thread thread;
  /* The starting Lua thread's warning handler: the engine's warnings go to its Lua call site. */
  c10::WarningHandler *warnings = c10::WarningUtils::get_warning_handler();
  bool grad_mode = false;       /* the starting thread's grad mode, restored by lt_autograd_unwind */
  bool finished = false;
  bool failed = false;
  int error_kind = LT_OK;
  std::string error;
  variable_list results;
};

/* Leaked on purpose (never destroyed at exit): see "Interrupts" above. */
std::mutex &g_mutex = *new std::mutex;
std::condition_variable &g_cv = *new std::condition_variable;
/* One queue per Lua thread: a callback is answered by the thread whose Lua state made it. */
std::map<std::thread::id, std::deque<Request *>> &g_queues = *new std::map<std::thread::id, std::deque<Request *>>;
std::multiset<std::thread::id> &g_lua_threads = *new std::multiset<std::thread::id>;  /* Lua threads servicing jobs now */
std::vector<int64_t> &g_released = *new std::vector<int64_t>;
std::atomic<int64_t> g_live_callbacks{0};        /* live Lua nodes + registered hooks */
thread_local std::vector<Request *> tl_servicing;  /* requests this Lua thread is answering */
thread_local bool tl_inline_engine = false;      /* this thread runs the engine itself */
thread_local std::vector<Job *> tl_jobs;         /* jobs this thread started and has not finished */

void run_job(Job *job) {
  {
    std::optional<at::ThreadLocalStateGuard> guard;
    if (job->tls) guard.emplace(*job->tls);
    c10::WarningUtils::WarningHandlerGuard warnings_guard(job->warnings);
    try {
      job->work();
    } catch (...) {
      job->failed = true;
      job->error_kind = lt::fail_current_exception();
      job->error = lt_last_error();
    }
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  job->finished = true;
  g_cv.notify_all();
}

/* Engine side: post a request and wait for the Lua thread's answer (running reentrant jobs it
 * hands back meanwhile). Throws the Lua error, if any. */
variable_list call_lua(std::thread::id owner, int kind, int64_t id, variable_list inputs) {
  /* Declared before the lock, so its tensors (which may own graph nodes whose destructors take
   * g_mutex) are destroyed after the lock is released. */
  Request req;
  std::unique_lock<std::mutex> lock(g_mutex);
  if (tl_inline_engine || owner == std::this_thread::get_id() || g_lua_threads.count(owner) == 0)
    throw std::runtime_error(
        "a Lua autograd Function or hook was reached by a backward pass that ltorch did not start (or "
        "that another Lua state started); run backward through x:backward() or torch.autograd.grad");
  req.kind = kind;
  req.id = id;
  req.grad_mode = c10::GradMode::is_enabled();
  req.inputs = std::move(inputs);
  g_queues[owner].push_back(&req);
  g_cv.notify_all();
  for (;;) {
    g_cv.wait(lock, [&] { return req.done || !req.nested.empty(); });
    if (req.nested.empty()) break;  /* done; a nested job handed over before the reply still runs */
    Job *job = req.nested.front();
    req.nested.pop_front();
    lock.unlock();
    run_job(job);
    lock.lock();
  }
  if (req.has_error) throw std::runtime_error(req.error);
  return std::move(req.outputs);
}

/* The node behind a Lua torch.autograd.Function: one input per forward output, one next edge per
 * tensor argument of forward. */
struct LuaFunctionNode : torch::autograd::Node {
  int64_t id;
  std::string fn_name;
  std::thread::id owner = std::this_thread::get_id();
  bool released = false;
  explicit LuaFunctionNode(int64_t id_, std::string name) : id(id_), fn_name(std::move(name)) { ++g_live_callbacks; }

  std::string name() const override { return fn_name; }

  variable_list apply(variable_list &&grads) override {
    /* PyTorch materializes missing output grads as zeros before calling a custom backward. */
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined() && !input_metadata(i).is_tensor_subclass()) grads[i] = input_metadata(i).zeros_like();
    variable_list out = call_lua(owner, LT_AUTOGRAD_CALL_FUNCTION, id, std::move(grads));
    out.resize(num_outputs());
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].defined() && !should_compute_output(i)) out[i] = at::Tensor();
    return out;
  }

  void release_variables() override { queue_release(); }
  ~LuaFunctionNode() override {
    queue_release();
    --g_live_callbacks;
  }

  void queue_release() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (released) return;
    released = true;
    g_released.push_back(id);
  }
};

/* Runs job->work on a helper thread, or on the engine thread the Lua thread is answering. With no
 * Lua node or hook alive anywhere nothing can call back into Lua: the engine then runs here, at no
 * thread hand-off cost (the common case: a model of built-in ops). */
Job *start_job(Job *job) {
  job->grad_mode = c10::GradMode::is_enabled();
  const bool run_inline = g_live_callbacks.load() == 0 && tl_servicing.empty();
  if (!run_inline) {
    try {
      job->tls.emplace();   /* on the starting thread, before another one runs the job */
    } catch (...) {
      delete job;
      throw;
    }
  }
  tl_jobs.push_back(job);
  if (run_inline) {
    tl_inline_engine = true;
    run_job(job);
    tl_inline_engine = false;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_lua_threads.insert(std::this_thread::get_id());
    return job;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_lua_threads.insert(std::this_thread::get_id());
  if (!tl_servicing.empty()) {
    tl_servicing.back()->nested.push_back(job);
    g_cv.notify_all();
  } else {
    try {
      job->thread = std::thread(run_job, job);
    } catch (...) {
      g_lua_threads.erase(g_lua_threads.find(std::this_thread::get_id()));
      tl_jobs.pop_back();
      delete job;
      throw;
    }
  }
  return job;
}

void answer(Request *r, const std::string &error) {
  r->error = error;
  r->has_error = true;
  r->done = true;
}

/* Ends `job` after its service loop was abandoned: answers what it took or queued with `error`
 * until its engine finishes (callbacks the engine posts meanwhile get the same answer). */
void abort_job(Job *job, const std::string &error) {
  std::unique_lock<std::mutex> lock(g_mutex);
  for (size_t i = tl_servicing.size(); i-- > 0;)
    if (tl_servicing[i]->taken_by == job) {
      answer(tl_servicing[i], error);
      tl_servicing.erase(tl_servicing.begin() + static_cast<long>(i));
    }
  auto &queue = g_queues[std::this_thread::get_id()];
  for (;;) {
    for (Request *r : queue) answer(r, error);
    queue.clear();
    g_cv.notify_all();
    if (job->finished) break;
    g_cv.wait(lock, [&] { return job->finished || !queue.empty(); });
  }
}

c10::optional<bool> retain_opt(int retain_graph) {
  return retain_graph < 0 ? c10::nullopt : c10::optional<bool>(retain_graph != 0);
}

}  // namespace

extern "C" {

int lt_autograd_backward_start(lt_autograd_job **out, const lt_tensor *const *tensors, int n,
                               const lt_tensor *const *grads, int retain_graph, int create_graph) {
  LT_TRY
  if (n <= 0) throw lt::ValueError("backward: needs at least one tensor");
  variable_list ts, gs;
  for (int i = 0; i < n; ++i) {
    ts.push_back(lt::get(tensors[i]));
    gs.push_back(grads != nullptr && grads[i] != nullptr ? lt::get(grads[i]) : at::Tensor());
    // The implicit grad of a scalar output is made here as Python's _make_grads makes it
    // (ones_like, preserve_format: the ops a profiler sees are PyTorch's); libtorch's C++ default
    // (legacy contiguous format) and its errors for other outputs stay as they are.
    const at::Tensor &t = ts.back();
    if (!gs.back().defined() && t.requires_grad() && t.numel() == 1 && c10::isFloatingType(t.scalar_type()))
      gs.back() = at::ones_like(t, c10::TensorOptions(), at::MemoryFormat::Preserve);
  }
  auto retain = retain_opt(retain_graph);
  bool create = create_graph != 0;
  auto *job = new Job();
  job->work = [ts, gs, retain, create] { torch::autograd::backward(ts, gs, retain, create); };
  *out = reinterpret_cast<lt_autograd_job *>(start_job(job));
  LT_CATCH
}

int lt_autograd_grad_start(lt_autograd_job **out, const lt_tensor *const *outputs, int n_outputs,
                           const lt_tensor *const *grad_outputs, const lt_tensor *const *inputs, int n_inputs,
                           int retain_graph, int create_graph, int allow_unused) {
  LT_TRY
  if (n_outputs <= 0 || n_inputs <= 0) throw lt::ValueError("autograd.grad: needs at least one output and one input");
  variable_list outs, ins, gouts;
  for (int i = 0; i < n_outputs; ++i) {
    outs.push_back(lt::get(outputs[i]));
    gouts.push_back(grad_outputs != nullptr && grad_outputs[i] != nullptr ? lt::get(grad_outputs[i]) : at::Tensor());
  }
  for (int i = 0; i < n_inputs; ++i) ins.push_back(lt::get(inputs[i]));
  auto retain = retain_opt(retain_graph);
  bool create = create_graph != 0, unused = allow_unused != 0;
  auto *job = new Job();
  job->work = [job, outs, ins, gouts, retain, create, unused] {
    job->results = torch::autograd::grad(outs, ins, gouts, retain, create, unused);
  };
  *out = reinterpret_cast<lt_autograd_job *>(start_job(job));
  LT_CATCH
}

int lt_autograd_job_next(lt_autograd_job *handle, lt_autograd_request **req, int *kind, int64_t *id, int *n,
                         int *grad_mode) {
  LT_TRY
  Job *job = reinterpret_cast<Job *>(handle);
  std::unique_lock<std::mutex> lock(g_mutex);
  auto &queue = g_queues[std::this_thread::get_id()];
  g_cv.wait(lock, [&] { return job->finished || !queue.empty(); });
  if (!queue.empty()) {
    Request *r = queue.front();
    queue.pop_front();
    r->taken_by = job;
    tl_servicing.push_back(r);
    *req = reinterpret_cast<lt_autograd_request *>(r);
    *kind = r->kind;
    *id = r->id;
    *n = static_cast<int>(r->inputs.size());
    *grad_mode = r->grad_mode ? 1 : 0;
  } else {
    *req = nullptr;
  }
  LT_CATCH
}

int lt_autograd_request_input(lt_autograd_request *handle, int i, lt_tensor **out) {
  LT_TRY
  Request *r = reinterpret_cast<Request *>(handle);
  if (i < 0 || i >= static_cast<int>(r->inputs.size())) throw lt::ValueError("request input out of range");
  *out = lt::wrap(r->inputs[i]);
  LT_CATCH
}

int lt_autograd_reply(lt_autograd_request *handle, const lt_tensor *const *grads, int n, const char *error) {
  LT_TRY
  Request *r = reinterpret_cast<Request *>(handle);
  variable_list outs;
  std::string err;
  bool has_error = error != nullptr;
  if (has_error) err = error;
  try {
    for (int i = 0; i < n; ++i) outs.push_back(grads[i] != nullptr ? lt::get(grads[i]) : at::Tensor());
  } catch (const std::exception &e) {
    has_error = true;
    err = e.what();
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  for (size_t i = tl_servicing.size(); i-- > 0;)
    if (tl_servicing[i] == r) {
      tl_servicing.erase(tl_servicing.begin() + static_cast<long>(i));
      break;
    }
  r->outputs = std::move(outs);
  r->error = std::move(err);
  r->has_error = has_error;
  r->done = true;
  g_cv.notify_all();
  LT_CATCH
}

int lt_autograd_job_finish(lt_autograd_job *handle, lt_tensor **results, int capacity) {
  Job *job = reinterpret_cast<Job *>(handle);
  if (job->thread.joinable()) job->thread.join();
  lt::warnings_deliver();  /* what the engine's threads warned, to this thread's call site */
  for (size_t i = tl_jobs.size(); i-- > 0;)
    if (tl_jobs[i] == job) {
      tl_jobs.erase(tl_jobs.begin() + static_cast<long>(i));
      break;
    }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto me = std::this_thread::get_id();
    auto it = g_lua_threads.find(me);
    if (it != g_lua_threads.end()) g_lua_threads.erase(it);
    /* After a failed backward, nodes still running on other engine threads (CUDA devices) may
     * have posted calls that no one will service: answer them so those threads move on. */
    if (g_lua_threads.count(me) == 0) {
      auto q = g_queues.find(me);
      if (q != g_queues.end()) {
        for (Request *r : q->second) {
          r->error = "backward was aborted before this Lua callback could run";
          r->has_error = true;
          r->done = true;
        }
        q->second.clear();
        g_cv.notify_all();
      }
    }
  }
  int status = LT_OK;
  if (job->failed) {
    lt::set_error(job->error_kind, job->error);
    status = job->error_kind;
  } else if (results != nullptr) {
    for (int i = 0; i < capacity && i < static_cast<int>(job->results.size()); ++i)
      results[i] = lt::wrap(job->results[i]);
  }
  delete job;
  return status;
}

int lt_autograd_job_depth(int *depth) {
  *depth = static_cast<int>(tl_jobs.size());
  return LT_OK;
}

int lt_autograd_unwind(int depth, const char *error) {
  LT_TRY
  if (depth < 0) depth = 0;
  std::string msg = error != nullptr ? error : "backward was interrupted";
  bool restore = false, grad_mode = false;
  while (static_cast<int>(tl_jobs.size()) > depth) {
    Job *job = tl_jobs.back();
    restore = true;
    grad_mode = job->grad_mode;
    abort_job(job, msg);
    lt_autograd_job_finish(reinterpret_cast<lt_autograd_job *>(job), nullptr, 0);
  }
  if (restore) c10::GradMode::set_enabled(grad_mode);
  LT_CATCH
}

int lt_autograd_released(int64_t lo, int64_t hi, int64_t *ids, int capacity, int *n) {
  LT_TRY
  std::lock_guard<std::mutex> lock(g_mutex);
  int k = 0;
  for (size_t i = 0; i < g_released.size() && k < capacity;) {
    int64_t id = g_released[i];
    if (id >= lo && id < hi) {
      ids[k++] = id;
      g_released[i] = g_released.back();
      g_released.pop_back();
    } else {
      ++i;
    }
  }
  *n = k;
  LT_CATCH
}

int lt_function_attach(lt_tensor **results, const lt_tensor *const *outputs, int n_outputs,
                       const lt_tensor *const *inputs, int n_inputs, const int *flags, int64_t id,
                       const char *name) {
  LT_TRY
  variable_list ins;
  for (int i = 0; i < n_inputs; ++i) ins.push_back(lt::get(inputs[i]));
  auto node = std::shared_ptr<LuaFunctionNode>(new LuaFunctionNode(id, name ? name : "LuaFunctionBackward"),
                                               torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(ins));
  std::vector<at::Tensor> outs;
  for (int i = 0; i < n_outputs; ++i) {
    const at::Tensor &o = lt::get(outputs[i]);
    int f = flags[i];
    bool is_input = false;
    for (const auto &in : ins) is_input = is_input || o.is_same(in);
    at::Tensor r;
    if (f & LT_FUNCTION_NON_DIFFERENTIABLE) {
      node->add_input_metadata(torch::autograd::Node::undefined_input());
      r = is_input ? o.detach() : o;
    } else if (f & LT_FUNCTION_DIRTY) {
      if (o.is_leaf() && o.requires_grad())
        throw lt::ValueError("a leaf Variable that requires grad is being used in an in-place operation "
                             "(mark_dirty on an input that is a leaf requiring grad)");
      r = o;
      uint32_t nr = node->add_input_metadata(r);
      torch::autograd::impl::rebase_history(r, {node, nr});
    } else {
      /* A fresh TensorImpl for every output, so tensors saved in forward (which are the raw
       * outputs) never hold this node alive through their grad_fn. */
      r = o.detach();
      uint32_t nr = node->add_input_metadata(r);
      torch::autograd::impl::set_gradient_edge(r, {node, nr});
    }
    outs.push_back(r);
  }
  for (int i = 0; i < n_outputs; ++i) results[i] = lt::wrap(outs[i]);
  LT_CATCH
}

int lt_tensor_register_hook(const lt_tensor *t, int64_t id, int *handle) {
  LT_TRY
  const at::Tensor &self = lt::get(t);
  if (!self.requires_grad())
    throw lt::ValueError("cannot register a hook on a tensor that doesn't require gradient");
  /* The hook object counts itself as a live callback until libtorch drops it (remove_hook or the
   * tensor's death), which keeps backward on the off-thread path while it exists. */
  struct Counted {
    Counted() { ++g_live_callbacks; }
    ~Counted() { --g_live_callbacks; }
  };
  auto counted = std::make_shared<Counted>();
  std::thread::id owner = std::this_thread::get_id();
  unsigned pos = self.register_hook([id, owner, counted](const at::Tensor &grad) -> at::Tensor {
    variable_list out = call_lua(owner, LT_AUTOGRAD_CALL_HOOK, id, {grad});
    return out.empty() ? at::Tensor() : out[0];
  });
  *handle = static_cast<int>(pos);
  LT_CATCH
}

int lt_tensor_remove_hook(const lt_tensor *t, int handle) {
  LT_TRY
  lt::get(t).remove_hook(static_cast<unsigned>(handle));
  LT_CATCH
}

namespace {
/* x:register_post_accumulate_grad_hook: once AccumulateGrad has updated x.grad, Lua hook `id`
 * runs with x (its result is ignored). libtorch holds one such hook per tensor; the Lua side
 * keeps the list of hooks behind the id. Counts as a live callback, like the tensor hooks. */
struct PostAccumulateHook : torch::autograd::PostAccumulateGradHook {
  int64_t id;
  std::thread::id owner = std::this_thread::get_id();
  explicit PostAccumulateHook(int64_t id_) : id(id_) { ++g_live_callbacks; }
  ~PostAccumulateHook() override { --g_live_callbacks; }
  void operator()(const torch::autograd::Variable &tensor) override {
    call_lua(owner, LT_AUTOGRAD_CALL_HOOK, id, {tensor});
  }
};
}  // namespace

int lt_tensor_post_accumulate_hook(const lt_tensor *t, int64_t id, int64_t *current) {
  LT_TRY
  const at::Tensor &self = lt::get(t);
  if (!self.requires_grad())
    throw lt::ValueError("cannot register a hook on a tensor that doesn't require gradient");
  if (self.grad_fn()) throw lt::ValueError("post accumulate grad hooks cannot be registered on non-leaf tensors");
  auto &slot = torch::autograd::impl::post_acc_grad_hooks(self);
  auto *ours = dynamic_cast<PostAccumulateHook *>(slot.get());
  if (ours == nullptr) {
    torch::autograd::impl::set_post_acc_grad_hooks(self, std::make_unique<PostAccumulateHook>(id));
    *current = id;
  } else {
    *current = ours->id;
  }
  LT_CATCH
}

int lt_tensor_remove_post_accumulate_hook(const lt_tensor *t) {
  LT_TRY
  const at::Tensor &self = lt::get(t);
  if (dynamic_cast<PostAccumulateHook *>(torch::autograd::impl::post_acc_grad_hooks(self).get()) != nullptr)
    torch::autograd::impl::set_post_acc_grad_hooks(self, nullptr);
  LT_CATCH
}

}  // extern "C"
