/*
 * lt_autograd.cpp — autograd through the C ABI: requires_grad, leaf status, .grad read/write,
 * grad_fn's name, retain_grad, backward (with an explicit gradient), torch.autograd.grad, and
 * the thread-local modes (grad enabled, inference mode, anomaly detection).
 *
 * Inference mode is an RAII guard in libtorch; the Lua side brackets a function call with
 * lt_inference_mode_enter/exit, so the guard lives on the heap between the two calls and must
 * be exited in LIFO order on the same thread (torch.inference_mode(fn) does this with pcall).
 */
#include "lt_internal.hpp"

#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include <vector>

extern "C" {

int lt_tensor_requires_grad(const lt_tensor *t, int *out) {
  LT_TRY
  *out = lt::get(t).requires_grad() ? 1 : 0;
  LT_CATCH
}

int lt_tensor_set_requires_grad(lt_tensor *t, int requires_grad) {
  LT_TRY
  at::Tensor &self = lt::get_mut(t);
  /* libtorch would keep requires_grad true through the grad_fn: say so, as PyTorch does. */
  if (!requires_grad && !self.is_leaf())
    throw lt::ValueError("you can only change requires_grad flags of leaf variables. If you want to use a "
                         "computed variable in a subgraph that doesn't require differentiation use "
                         "var_no_grad = var.detach().");
  self.set_requires_grad(requires_grad != 0);
  LT_CATCH
}

int lt_tensor_is_leaf(const lt_tensor *t, int *out) {
  LT_TRY
  *out = lt::get(t).is_leaf() ? 1 : 0;
  LT_CATCH
}

int lt_tensor_grad(lt_tensor **out, const lt_tensor *t) {
  LT_TRY
  *out = lt::wrap(lt::get(t).grad());
  LT_CATCH
}

int lt_tensor_set_grad(lt_tensor *t, const lt_tensor *grad) {
  LT_TRY
  at::Tensor &self = lt::get_mut(t);
  if (grad == nullptr) {
    self.mutable_grad().reset();
  } else {
    const at::Tensor &g = lt::get(grad);
    if (!g.sizes().equals(self.sizes()))
      throw lt::ValueError("assigned grad has shape " + c10::str(g.sizes()) + " but the tensor has shape " +
                           c10::str(self.sizes()));
    if (g.scalar_type() != self.scalar_type() || g.device() != self.device())
      throw lt::ValueError("assigned grad must match the tensor's dtype and device");
    self.mutable_grad() = g;
  }
  LT_CATCH
}

int lt_tensor_grad_fn_name(const lt_tensor *t, const char **out) {
  LT_TRY
  thread_local std::string name;
  const auto &fn = lt::get(t).grad_fn();
  if (fn) {
    name = fn->name();
    *out = name.c_str();
  } else {
    *out = nullptr;
  }
  LT_CATCH
}

int lt_tensor_set_data(lt_tensor *t, const lt_tensor *data) {
  LT_TRY
  lt::get_mut(t).set_data(lt::get(data));
  LT_CATCH
}

int lt_tensor_retain_grad(lt_tensor *t) {
  LT_TRY
  lt::get_mut(t).retain_grad();
  LT_CATCH
}

int lt_tensor_backward(const lt_tensor *t, const lt_tensor *gradient, int retain_graph, int create_graph) {
  LT_TRY
  at::Tensor g = gradient != nullptr ? lt::get(gradient) : at::Tensor();
  c10::optional<bool> retain = retain_graph < 0 ? c10::nullopt : c10::optional<bool>(retain_graph != 0);
  lt::get(t).backward(g, retain, create_graph != 0);
  LT_CATCH
}

int lt_autograd_grad(lt_tensor **results, const lt_tensor *const *outputs, int n_outputs,
                     const lt_tensor *const *grad_outputs, const lt_tensor *const *inputs, int n_inputs,
                     int retain_graph, int create_graph, int allow_unused) {
  LT_TRY
  if (n_outputs <= 0 || n_inputs <= 0) throw lt::ValueError("autograd.grad: needs at least one output and one input");
  std::vector<at::Tensor> outs, ins, gouts;
  for (int i = 0; i < n_outputs; ++i) {
    outs.push_back(lt::get(outputs[i]));
    gouts.push_back(grad_outputs != nullptr && grad_outputs[i] != nullptr ? lt::get(grad_outputs[i]) : at::Tensor());
  }
  for (int i = 0; i < n_inputs; ++i) ins.push_back(lt::get(inputs[i]));
  c10::optional<bool> retain = retain_graph < 0 ? c10::nullopt : c10::optional<bool>(retain_graph != 0);
  auto grads = torch::autograd::grad(outs, ins, gouts, retain, create_graph != 0, allow_unused != 0);
  for (size_t i = 0; i < grads.size(); ++i) results[i] = lt::wrap(grads[i]);
  LT_CATCH
}

int lt_grad_enabled(int *out) {
  LT_TRY
  *out = c10::GradMode::is_enabled() ? 1 : 0;
  LT_CATCH
}

int lt_set_grad_enabled(int enabled) {
  LT_TRY
  c10::GradMode::set_enabled(enabled != 0);
  LT_CATCH
}

int lt_inference_mode_enter(void **guard) {
  LT_TRY
  *guard = new c10::InferenceMode(true);
  LT_CATCH
}

int lt_inference_mode_exit(void *guard) {
  LT_TRY
  delete static_cast<c10::InferenceMode *>(guard);
  LT_CATCH
}

int lt_is_inference_mode(int *out) {
  LT_TRY
  *out = c10::InferenceMode::is_enabled() ? 1 : 0;
  LT_CATCH
}

int lt_set_anomaly_enabled(int enabled) {
  LT_TRY
  torch::autograd::AnomalyMode::set_enabled(enabled != 0);
  LT_CATCH
}

int lt_anomaly_enabled(int *out) {
  LT_TRY
  *out = torch::autograd::AnomalyMode::is_enabled() ? 1 : 0;
  LT_CATCH
}

}  // extern "C"
