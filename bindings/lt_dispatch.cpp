/*
 * lt_dispatch.cpp — calls any registered ATen operator by name through libtorch's boxed
 * dispatcher (the path TorchScript uses), so the whole op surface needs no per-op C++: the Lua
 * side holds each overload's schema (generated from native_functions.yaml), packs arguments as
 * lt_value tagged unions, and lt_op_call builds the IValue stack, runs the op (autograd
 * included: the boxed path goes through every dispatch key) and unpacks the results.
 *
 * Why boxed rather than thousands of generated unboxed wrappers: it compiles in seconds on two
 * cores, it binds exactly the operators the loaded libtorch registered (a 2.x libtorch works
 * without regenerating C++), and the few hottest ops keep hand-written unboxed wrappers.
 *
 * Usage (C): lt_op *add; lt_op_find(&add, "aten::add", "Tensor");
 *            lt_value args[3] = {...}, res[1]; int n; lt_op_call(add, args, 3, res, 1, &n);
 */
#include "lt_internal.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <ATen/native/Resize.h>
#include <c10/util/SmallVector.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

struct lt_op {
  c10::OperatorHandle handle;
  std::string schema;
  int nargs;  // the registered schema's argument count: a call with another count is refused
  // Whether the tensors it may write are checked against their storage after the call
  // (call_guarded). Not for the in-place foreach ops (_foreach_add_, ...): they write their
  // tensors element by element and never change their sizes, and the check cost ~380
  // instructions per tensor, on every parameter of every optimizer step.
  bool guard_writes;
};

namespace {

// A list argument's elements, read in place (checked: a negative length or a NULL array is refused).
template <typename T>
c10::ArrayRef<T> list_of(const lt_value &v) {
  if (v.n < 0 || (v.n > 0 && v.p == nullptr)) throw lt::ValueError("bad list argument");
  return c10::ArrayRef<T>(static_cast<const T *>(v.p), static_cast<size_t>(v.n));
}

c10::IValue to_ivalue(const lt_value &v) {
  switch (v.tag) {
    case LT_V_NONE: return c10::IValue();
    case LT_V_TENSOR: return c10::IValue(lt::get(static_cast<const lt_tensor *>(v.p)));
    /* SymInt and SymInt[] travel as plain ints: libtorch's unboxing accepts them (1.13 and 2.x). */
    case LT_V_INT:
    case LT_V_SYM_INT: return c10::IValue(v.i);
    case LT_V_DOUBLE: return c10::IValue(v.d);
    case LT_V_BOOL: return c10::IValue(v.i != 0);
    case LT_V_SCALAR_INT: return c10::IValue(at::Scalar(v.i));
    case LT_V_SCALAR_DOUBLE: return c10::IValue(at::Scalar(v.d));
    case LT_V_SCALAR_BOOL: return c10::IValue(at::Scalar(v.i != 0));
    case LT_V_INT_LIST:
    case LT_V_SYM_INT_LIST: return c10::IValue(list_of<int64_t>(v));
    case LT_V_DOUBLE_LIST: return c10::IValue(list_of<double>(v));
    case LT_V_BOOL_LIST: {
      c10::List<bool> l;
      const int *p = static_cast<const int *>(v.p);  // list_of's checks, without a temporary
      if (v.n < 0 || (v.n > 0 && p == nullptr)) throw lt::ValueError("bad list argument");
      l.reserve(static_cast<size_t>(v.n));
      for (int64_t i = 0; i < v.n; ++i) l.push_back(p[i] != 0);
      return c10::IValue(l);
    }
    case LT_V_TENSOR_LIST: {
      // reserved: grown one push at a time, a list of 4 reallocated its storage 3 times
      auto handles = list_of<const lt_tensor *>(v);
      c10::List<at::Tensor> l;
      l.reserve(handles.size());
      for (const lt_tensor *t : handles) l.push_back(lt::get(t));
      return c10::IValue(l);
    }
    case LT_V_OPT_TENSOR_LIST: {
      auto handles = list_of<const lt_tensor *>(v);
      c10::List<c10::optional<at::Tensor>> l;
      l.reserve(handles.size());
      for (const lt_tensor *t : handles)
        l.push_back(t == nullptr ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(lt::get(t)));
      return c10::IValue(l);
    }
    case LT_V_STRING:
      if (v.p == nullptr) throw lt::ValueError("NULL string argument");
      return c10::IValue(std::string(static_cast<const char *>(v.p)));
    case LT_V_DEVICE: return c10::IValue(lt::device(static_cast<int>(v.i), static_cast<int>(v.n)));
    case LT_V_SCALAR_TYPE: return c10::IValue(static_cast<int64_t>(lt::scalar_type(static_cast<int>(v.i))));
    case LT_V_LAYOUT:
    case LT_V_MEMORY_FORMAT: return c10::IValue(v.i);
    default: throw lt::ValueError("unknown argument tag " + std::to_string(v.tag));
  }
}

template <typename T>
void *copy_array(const std::vector<T> &src) {
  void *p = std::malloc(sizeof(T) * (src.empty() ? 1 : src.size()));
  if (p == nullptr) throw std::bad_alloc();
  if (!src.empty()) std::memcpy(p, src.data(), sizeof(T) * src.size());
  return p;
}

void from_ivalue(const c10::IValue &iv, lt_value &out) {
  out = lt_value{LT_V_NONE, 0, 0.0, nullptr, 0};
  if (iv.isNone()) return;
  if (iv.isTensor()) {
    const at::Tensor &t = iv.toTensor();
    if (!t.defined()) return;
    out.tag = LT_V_TENSOR;
    out.p = lt::wrap(t);
  } else if (iv.isTensorList()) {
    auto list = iv.toTensorVector();
    std::vector<lt_tensor *> handles;
    handles.reserve(list.size());
    for (auto &t : list) handles.push_back(lt::wrap(t));
    out.tag = LT_V_TENSOR_LIST;
    out.n = static_cast<int64_t>(handles.size());
    out.p = copy_array(handles);
  } else if (iv.isBool()) {
    out.tag = LT_V_BOOL;
    out.i = iv.toBool() ? 1 : 0;
  } else if (iv.isInt()) {
    out.tag = LT_V_INT;
    out.i = iv.toInt();
  } else if (iv.isSymInt()) {
    out.tag = LT_V_INT;
    out.i = iv.toSymInt().expect_int();
  } else if (iv.isDouble()) {
    out.tag = LT_V_DOUBLE;
    out.d = iv.toDouble();
  } else if (iv.isIntList()) {
    out.tag = LT_V_INT_LIST;
    auto v = iv.toIntVector();
    out.n = static_cast<int64_t>(v.size());
    out.p = copy_array(v);
  } else if (iv.isDoubleList()) {
    out.tag = LT_V_DOUBLE_LIST;
    auto v = iv.toDoubleVector();
    out.n = static_cast<int64_t>(v.size());
    out.p = copy_array(v);
  } else if (iv.isString()) {
    out.tag = LT_V_STRING;
    std::string s = iv.toStringRef();
    out.n = static_cast<int64_t>(s.size());
    out.p = copy_array(std::vector<char>(s.c_str(), s.c_str() + s.size() + 1));
  } else if (iv.isDevice()) {
    out.tag = LT_V_DEVICE;
    out.i = static_cast<int64_t>(iv.toDevice().type());
    out.n = iv.toDevice().index();
  } else {
    throw lt::ValueError(std::string("unsupported result type ") + iv.tagKind());
  }
}

// A tensor argument the operator may write (schema alias annotation `Tensor(a!)`: in-place
// self, out=, resize_), with its geometry before the call. libtorch 1.13 resizes such a tensor
// (resize_, resize_output) by setting the new sizes first and allocating the storage after; when
// that allocation throws (out of memory, or lt_debug_alloc_limit's cap) the tensor is left sized
// past its storage, and any later read or write of it runs off the end of the buffer. PyTorch
// 1.13.1 leaves the same state (x = torch.zeros(3); x.resize_(2**40) raises and x.shape is then
// [1099511627776] over 12 bytes; torch.range(0.5, 2.**53, out=y) then y.sum() segfaults). ltorch
// puts back the sizes, strides and offset such a tensor had before the failed call: a failed
// call leaves it as it was (only when the new geometry does not fit its storage).
// Sizes and strides are kept inline up to 5 dimensions, and a call's list of written tensors up
// to 4 (a foreach op's in-place list): noting them allocates nothing in the common case, where
// two heap vectors per written tensor once cost a foreach call ~8 mallocs.
struct WrittenTensor {
  explicit WrittenTensor(const at::Tensor &tensor)
      : t(tensor), sizes(tensor.sizes().begin(), tensor.sizes().end()),
        strides(tensor.strides().begin(), tensor.strides().end()), offset(tensor.storage_offset()) {}
  at::Tensor t;
  c10::SmallVector<int64_t, 5> sizes, strides;
  int64_t offset;
};
using WrittenTensors = c10::SmallVector<WrittenTensor, 4>;

// The bytes of storage a strided tensor's geometry reaches (offset, sizes, strides), computed in
// 128 bits: a fuzzed 2^31 x 2^31 out= tensor would overflow int64 into a "fitting" negative.
__int128 needed_bytes(const at::Tensor &t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) == 0) return 0;
  __int128 last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    __int128 step = static_cast<__int128>(t.size(d) - 1) * t.stride(d);
    if (step > 0) last += step;  // a negative stride reaches below the offset, not past the end
  }
  return (last + 1) * static_cast<__int128>(t.element_size());
}

bool fits_storage(const at::Tensor &t) {
  if (!t.defined() || !t.has_storage()) return true;
  return needed_bytes(t) <= static_cast<__int128>(t.storage().nbytes());
}

void note_written(const c10::FunctionSchema &schema, const torch::jit::Stack &stack,
                  WrittenTensors &out) {
  const auto &params = schema.arguments();
  size_t n = std::min(params.size(), stack.size());
  for (size_t i = 0; i < n; ++i) {
    const auto *alias = params[i].alias_info();
    if (alias == nullptr || !alias->isWrite()) continue;
    auto note = [&](const at::Tensor &t) {
      if (t.defined() && t.layout() == at::kStrided && t.has_storage())
        out.emplace_back(t);   // built in place: no SmallVector moves
    };
    if (stack[i].isTensor()) {
      note(stack[i].toTensor());
    } else if (stack[i].isTensorList()) {
      for (const c10::IValue &t : stack[i].toListRef()) note(t.toTensor());   // read in place, not copied
    }
  }
}

// After a call that succeeded: libtorch 1.13's resize_/resize_as_ with a memory_format, on a
// tensor that already has the requested sizes (an expanded view, say: randn(1, 4):expand(3, 4)),
// returns early without growing the storage and then restrides it to contiguous, leaving a 3x4
// tensor with strides (4, 1) over 16 bytes; the next write runs off the heap buffer (found by
// tools/api_fuzz.lua, seed 20261202: the "corrupted double-linked list" abort). PyTorch 1.13.1
// does the same: x = torch.randn(1, 64).expand(64, 64); x.resize_(64, 64,
// memory_format=torch.contiguous_format); x.fill_(1) corrupts the heap (SIGSEGV). ltorch grows
// the storage as resize_ would have (the bytes the new geometry needs, shared with any views),
// or, when it cannot (a non-resizable or non-CPU storage, out of memory), puts the old geometry
// back and raises.
void grow_written(WrittenTensors &written) {
  for (auto &w : written) {
    if (fits_storage(w.t)) continue;
    const at::Tensor &t = w.t;
    __int128 need = needed_bytes(t);
    try {
      if (!t.is_cpu()) throw lt::ValueError("not a CPU tensor");
      if (need > static_cast<__int128>(std::numeric_limits<int64_t>::max()))
        throw lt::ValueError("its size in bytes overflows int64");
      at::native::resize_bytes_cpu(t.storage().unsafeGetStorageImpl(), static_cast<size_t>(need));
    } catch (const std::exception &e) {
      t.unsafeGetTensorImpl()->set_sizes_and_strides(w.sizes, w.strides, w.offset);
      throw lt::ValueError(std::string("the operator left a tensor sized past its storage and it could not be grown (") +
                           e.what() + "); its previous sizes were restored");
    }
  }
}

void restore_written(WrittenTensors &written) noexcept {
  for (auto &w : written) {
    try {
      if (!fits_storage(w.t))
        w.t.unsafeGetTensorImpl()->set_sizes_and_strides(w.sizes, w.strides, w.offset);
    } catch (...) {
    }
  }
}

// Runs the operator; a tensor it may write is never left sized past its storage (above).
__attribute__((noinline)) void call_guarded(const c10::OperatorHandle &handle, torch::jit::Stack &stack) {
  WrittenTensors written;
  note_written(handle.schema(), stack, written);
  try {
    handle.callBoxed(&stack);
  } catch (...) {
    restore_written(written);
    throw;
  }
  grow_written(written);
}

}  // namespace

extern "C" {

int lt_op_find(lt_op **out, const char *name, const char *overload) {
  LT_TRY
  if (name == nullptr) throw lt::ValueError("lt_op_find: NULL name");
  // Handles are interned for the process (nobody frees them: every Lua state caches the ones it
  // uses), so repeated lookups and many Lua states share one small lt_op per overload.
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<lt_op>> interned;
  std::pair<std::string, std::string> key{name, overload ? overload : ""};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = interned.find(key);
  if (it != interned.end()) {
    *out = it->second.get();
    return LT_OK;
  }
  auto handle = c10::Dispatcher::singleton().findSchema({key.first.c_str(), key.second.c_str()});
  if (!handle.has_value()) {
    *out = nullptr;
  } else {
    std::ostringstream s;
    s << handle->schema();
    int nargs = static_cast<int>(handle->schema().arguments().size());
    const std::string &op_name = key.first;
    bool in_place_foreach = op_name.rfind("aten::_foreach_", 0) == 0 && op_name.back() == '_';
    *out = interned.emplace(key, std::unique_ptr<lt_op>(new lt_op{*handle, s.str(), nargs, !in_place_foreach}))
               .first->second.get();
  }
  LT_CATCH
}

int lt_op_schema(const lt_op *op, const char **out) {
  LT_TRY
  if (op == nullptr) throw lt::ValueError("lt_op_schema: NULL operator");
  *out = op->schema.c_str();
  LT_CATCH
}

int lt_op_call(const lt_op *op, const lt_value *args, int nargs, lt_value *results, int capacity, int *nresults) {
  *nresults = 0;
  LT_TRY_OP
  if (op == nullptr) throw lt::ValueError("lt_op_call: NULL operator");
  // The boxed kernel pops exactly its schema's arguments: a shorter stack would be read past its
  // end. The Lua side binds against this schema (torch._dispatch), so this only trips for a
  // caller that packs its own arguments (or an op table bound against another libtorch).
  if (nargs != op->nargs)
    throw lt::ValueError(op->schema + ": takes " + std::to_string(op->nargs) + " arguments, called with " +
                         std::to_string(nargs));
  torch::jit::Stack stack;
  stack.reserve(static_cast<size_t>(nargs));
  for (int i = 0; i < nargs; ++i) stack.push_back(to_ivalue(args[i]));
  if (op->guard_writes) call_guarded(op->handle, stack);
  else op->handle.callBoxed(&stack);
  if (static_cast<int>(stack.size()) > capacity)
    throw lt::ValueError("operator returned " + std::to_string(stack.size()) + " values, room for " +
                         std::to_string(capacity));
  int n = 0;
  try {
    for (; n < static_cast<int>(stack.size()); ++n) from_ivalue(stack[static_cast<size_t>(n)], results[n]);
  } catch (...) {
    for (int i = 0; i < n; ++i) lt_value_release(&results[i]);
    throw;
  }
  *nresults = n;
  LT_CATCH
}

/* Releases what a result owns: a tensor handle, or a list (its tensor handles and the array). */
void lt_value_release(lt_value *v) {
  if (v == nullptr) return;
  if (v->tag == LT_V_TENSOR) {
    delete static_cast<const lt_tensor *>(v->p);
  } else if (v->tag == LT_V_TENSOR_LIST) {
    auto *handles = static_cast<lt_tensor *const *>(v->p);
    for (int64_t i = 0; i < v->n; ++i) delete handles[i];
    std::free(const_cast<void *>(v->p));
  } else if (v->tag == LT_V_INT_LIST || v->tag == LT_V_DOUBLE_LIST || v->tag == LT_V_STRING) {
    std::free(const_cast<void *>(v->p));
  }
  v->tag = LT_V_NONE;
  v->p = nullptr;
}

}  // extern "C"
