/*
 * lt_profiler.cpp — libtorch's own profiler (the autograd profiler over Kineto that PyTorch's
 * torch.profiler wraps) behind the C ABI, for lua/torch/profiler/.
 *
 * What it does: lt_profiler_start prepares and enables the Kineto profiler on the calling thread
 * (torch::autograd::profiler::prepareProfiler + enableProfiler, ProfilerState::KINETO: the calls
 * torch.autograd.profiler.profile._prepare_trace/_start_trace make) for the activities asked
 * (LT_PROFILER_CPU, LT_PROFILER_CUDA) with record_shapes, profile_memory and with_stack.
 * lt_profiler_stop disables it and hands back an lt_profiler_result: the KinetoEvents (op ranges,
 * record_function ranges, "[memory]" allocation events, device kernels on a GPU) read one by one
 * with lt_profiler_result_event (name, start/end in ns, threads, sequence and correlation ids,
 * device, bytes, scope, activity), their input shapes with lt_profiler_result_shape, and
 * lt_profiler_result_save writes Kineto's Chrome trace (ProfilerResult::save). Lua turns the
 * events into PyTorch's FunctionEvents (lua/torch/profiler/events.lua).
 *
 * record_function ranges: lt_record_function_enter opens an at::RecordFunction with USER_SCOPE
 * (what torch.profiler.record_function's _record_function_enter_new does), lt_record_function_exit
 * ends and frees it. A range opened while no profiler listens is inactive and costs one call.
 *
 * Ownership: each lt_profiler_result and lt_record_function has exactly one free
 * (lt_profiler_result_free, lt_record_function_exit or lt_record_function_free). Names returned
 * by lt_profiler_result_event point into the result and live as long as it.
 */
#include "lt_internal.hpp"

#include <ATen/record_function.h>
#include <c10/util/Type.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kp = torch::autograd::profiler;
namespace pi = torch::profiler::impl;

struct lt_profiler_result {
  std::unique_ptr<kp::ProfilerResult> result;
  std::vector<std::string> names;  // demangled event names, index-aligned with result->events()
};

struct lt_record_function {
  std::string name;  // declared first: the RecordFunction may hold a view of it until it ends
  at::RecordFunction rf{at::RecordScope::USER_SCOPE};
};

namespace {

std::set<pi::ActivityType> activity_set(int activities) {
  std::set<pi::ActivityType> out;
  if (activities & LT_PROFILER_CPU) out.insert(pi::ActivityType::CPU);
  if (activities & LT_PROFILER_CUDA) out.insert(pi::ActivityType::CUDA);
  if (out.empty()) throw lt::ValueError("profiler: no activities to profile");
  return out;
}

pi::ProfilerConfig config(int record_shapes, int profile_memory, int with_stack) {
  return pi::ProfilerConfig(pi::ProfilerState::KINETO, record_shapes != 0, profile_memory != 0,
                            with_stack != 0, /*with_flops=*/false, /*with_modules=*/false);
}

const kp::KinetoEvent &event_at(const lt_profiler_result *r, int64_t i) {
  if (r == nullptr || !r->result) throw lt::ValueError("profiler: the result was freed");
  const auto &events = r->result->events();
  if (i < 0 || i >= static_cast<int64_t>(events.size())) throw std::out_of_range("profiler: event index out of range");
  return events[static_cast<size_t>(i)];
}

}  // namespace

extern "C" {

int lt_profiler_start(int activities, int record_shapes, int profile_memory, int with_stack) {
  LT_TRY
  if (pi::ProfilerStateBase::get() != nullptr)
    throw lt::ValueError("profiler: a profiler is already running (stop it before starting another)");
  auto set = activity_set(activities);
  auto cfg = config(record_shapes, profile_memory, with_stack);
  kp::prepareProfiler(cfg, set);
  kp::enableProfiler(cfg, set);
  LT_CATCH
}

int lt_profiler_enabled(int *on) {
  LT_TRY
  *on = pi::ProfilerStateBase::get() != nullptr ? 1 : 0;
  LT_CATCH
}

int lt_profiler_stop(lt_profiler_result **out) {
  LT_TRY
  *out = nullptr;
  if (pi::ProfilerStateBase::get() == nullptr) throw lt::ValueError("profiler: stop() without a running profiler");
  auto holder = std::make_unique<lt_profiler_result>();
  holder->result = kp::disableProfiler();
  if (!holder->result) throw std::runtime_error("profiler: libtorch returned no result");
  const auto &events = holder->result->events();
  holder->names.reserve(events.size());
  for (const auto &e : events) {
    std::string name = e.name();
    // PyTorch's StringTable: demangles C++ symbols (device kernels), leaves 1-character names.
    holder->names.push_back(name.size() > 1 ? c10::demangle(name.c_str()) : name);
  }
  *out = holder.release();
  LT_CATCH
}

void lt_profiler_result_free(lt_profiler_result *r) { delete r; }

int lt_profiler_result_count(const lt_profiler_result *r, int64_t *n, uint64_t *trace_start_ns) {
  LT_TRY
  if (r == nullptr || !r->result) throw lt::ValueError("profiler: the result was freed");
  *n = static_cast<int64_t>(r->result->events().size());
  *trace_start_ns = r->result->trace_start_ns();
  LT_CATCH
}

int lt_profiler_result_event(const lt_profiler_result *r, int64_t i, lt_profiler_event *out) {
  LT_TRY
  const auto &e = event_at(r, i);
  out->name = r->names[static_cast<size_t>(i)].c_str();
  out->start_ns = e.startNs();
  out->end_ns = e.endNs();
  out->start_thread = e.startThreadId();
  out->end_thread = e.endThreadId();
  out->fwd_thread = e.fwdThreadId();
  out->sequence_nr = e.sequenceNr();
  out->correlation_id = e.correlationId();
  out->linked_correlation_id = e.linkedCorrelationId();
  out->device_type = static_cast<int>(e.deviceType());
  out->device_index = e.deviceIndex();
  out->device_resource_id = e.deviceResourceId();
  out->nbytes = e.nBytes();
  out->scope = static_cast<int>(e.scope());
  out->activity_type = static_cast<int>(e.activityType());
  out->is_async = e.isAsync() ? 1 : 0;
  out->is_hidden = e.isHiddenEvent() ? 1 : 0;
  out->n_shapes = e.hasShapes() ? static_cast<int>(e.shapes().size()) : 0;
  LT_CATCH
}

int lt_profiler_result_shape(const lt_profiler_result *r, int64_t i, int input, const int64_t **dims, int *ndim) {
  LT_TRY
  const auto &e = event_at(r, i);
  if (!e.hasShapes() || input < 0 || static_cast<size_t>(input) >= e.shapes().size())
    throw std::out_of_range("profiler: input index out of range");
  const auto &shape = e.shapes()[static_cast<size_t>(input)];
  *dims = shape.data();
  *ndim = static_cast<int>(shape.size());
  LT_CATCH
}

int lt_profiler_result_save(lt_profiler_result *r, const char *path) {
  LT_TRY
  if (r == nullptr || !r->result) throw lt::ValueError("profiler: the result was freed");
  if (path == nullptr) throw lt::ValueError("profiler: path is NULL");
  r->result->save(std::string(path));
  LT_CATCH
}

int lt_record_function_enter(lt_record_function **out, const char *name) {
  LT_TRY
  *out = nullptr;
  if (name == nullptr) throw lt::ValueError("record_function: name is NULL");
  auto rf = std::make_unique<lt_record_function>();
  rf->name = name;
  if (rf->rf.isActive()) rf->rf.before(std::string_view(rf->name));
  *out = rf.release();
  LT_CATCH
}

int lt_record_function_exit(lt_record_function *rf) {
  LT_TRY
  if (rf == nullptr) throw lt::ValueError("record_function: the range was already closed");
  std::unique_ptr<lt_record_function> owned(rf);
  owned->rf.end();
  LT_CATCH
}

void lt_record_function_free(lt_record_function *rf) { delete rf; }

}  // extern "C"
