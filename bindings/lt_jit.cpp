/*
 * lt_jit.cpp — TorchScript modules exported from PyTorch (torch.jit.save), loaded with
 * torch::jit::load and run from Lua: forward/any method (tensors in, a tensor or a
 * tuple/list of tensors out), train/eval, named parameters and buffers.
 *
 * Kept in its own file: the jit headers are the heaviest in libtorch.
 */
#include "lt_internal.hpp"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <string>
#include <utility>
#include <vector>

struct lt_jit_module {
  torch::jit::Module m;
  std::vector<std::pair<std::string, at::Tensor>> named;  // filled by lt_jit_named_tensors
};

namespace {

torch::jit::Module &mod(lt_jit_module *m) {
  if (m == nullptr) throw lt::ValueError("TorchScript module was freed");
  return m->m;
}

void flatten(const c10::IValue &v, std::vector<at::Tensor> &out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto &e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto &e : v.toListRef()) flatten(e, out);
  } else {
    throw lt::ValueError("TorchScript method returned a " + v.tagKind() + "; only tensors and tuples/lists of tensors are supported");
  }
}

}  // namespace

extern "C" {

int lt_jit_load(lt_jit_module **out, const char *path) {
  LT_TRY
  *out = nullptr;
  auto m = std::make_unique<lt_jit_module>();
  m->m = torch::jit::load(std::string(path), c10::Device(c10::kCPU));
  *out = m.release();
  LT_CATCH
}

void lt_jit_free(lt_jit_module *m) { delete m; }

int lt_jit_call(lt_jit_module *m, const char *method, const lt_tensor *const *inputs, int n,
                lt_tensor **outputs, int capacity, int *nout, int *is_tuple) {
  LT_TRY
  auto &module = mod(m);
  auto fn = module.find_method(method);
  if (!fn) throw lt::ValueError(std::string("TorchScript module has no method '") + method + "'");
  std::vector<c10::IValue> args;
  for (int i = 0; i < n; ++i) args.emplace_back(lt::get(inputs[i]));
  c10::IValue r = (*fn)(std::move(args));
  std::vector<at::Tensor> ts;
  flatten(r, ts);
  *is_tuple = r.isTensor() ? 0 : 1;
  *nout = static_cast<int>(ts.size());
  if (*nout > capacity) throw lt::ValueError("TorchScript method returned too many tensors");
  for (size_t i = 0; i < ts.size(); ++i) outputs[i] = lt::wrap(ts[i]);
  LT_CATCH
}

int lt_jit_train(lt_jit_module *m, int mode) {
  LT_TRY
  mod(m).train(mode != 0);
  LT_CATCH
}

int lt_jit_is_training(lt_jit_module *m, int *out) {
  LT_TRY
  *out = mod(m).is_training() ? 1 : 0;
  LT_CATCH
}

/* which: 0 parameters, 1 buffers (recursive, PyTorch's dotted names). Returns the count; read
 * each with lt_jit_named_tensor. */
int lt_jit_named_tensors(lt_jit_module *m, int which, int *count) {
  LT_TRY
  auto &module = mod(m);
  m->named.clear();
  if (which == 0) {
    for (const auto &p : module.named_parameters(true)) m->named.emplace_back(p.name, p.value);
  } else {
    for (const auto &p : module.named_buffers(true)) m->named.emplace_back(p.name, p.value);
  }
  *count = static_cast<int>(m->named.size());
  LT_CATCH
}

int lt_jit_named_tensor(lt_jit_module *m, int i, const char **name, lt_tensor **out) {
  LT_TRY
  mod(m);
  if (i < 0 || i >= static_cast<int>(m->named.size())) throw lt::ValueError("index out of range");
  *name = m->named[i].first.c_str();
  *out = lt::wrap(m->named[i].second);
  LT_CATCH
}

}  // extern "C"
