/*
 * lt_optim.cpp — an optimizer's whole update in one call: Adam's and AdamW's multi-tensor step
 * (torch.optim.adam's foreach path), the same libtorch _foreach_* calls in the same order as
 * PyTorch 2.11's _multi_tensor_adam without capturable, with the scalars computed as it computes
 * them (doubles; the bias corrections from each step count read back as PyTorch's _get_value
 * does, as per-parameter scalar lists).
 *
 * Why: made from Lua, each of the step's ~10 foreach calls went through the generic dispatcher
 * (overload choice, a handle array per list) and cost ~1.2 µs more than the same call from C++;
 * in one call the step costs what the C++ program's does (docs/PERFORMANCE.md, optimisation 36).
 * Results are bit for bit those of the Lua path, which stays for the cases this does not take
 * (capturable, Tensor hyper-parameters: torch.optim.adam decides).
 */
#include "lt_internal.hpp"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcdiv.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_lerp.h>
#include <ATen/ops/_foreach_maximum.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_neg.h>
#include <ATen/ops/_foreach_sqrt.h>

#include <cmath>
#include <vector>

namespace {

std::vector<at::Tensor> tensor_list(const lt_tensor *const *handles, int n, const char *what) {
  std::vector<at::Tensor> list;
  list.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (handles[i] == nullptr) throw lt::ValueError(std::string("adam step: a freed or missing tensor in ") + what);
    list.push_back(lt::get(handles[i]));
  }
  return list;
}

}  // namespace

extern "C" {

int lt_optim_adam_foreach(const lt_tensor *const *params, const lt_tensor *const *grads,
                          const lt_tensor *const *exp_avgs, const lt_tensor *const *exp_avg_sqs,
                          const lt_tensor *const *max_exp_avg_sqs, const lt_tensor *const *steps, int n, double lr,
                          double beta1, double beta2, double eps, double weight_decay, int decoupled, int amsgrad,
                          int maximize) {
  LT_TRY_OP
  if (n <= 0) return LT_OK;
  if (amsgrad && max_exp_avg_sqs == nullptr) throw lt::ValueError("adam step: amsgrad needs max_exp_avg_sq states");
  auto p = tensor_list(params, n, "params");
  auto g = tensor_list(grads, n, "grads");
  auto m = tensor_list(exp_avgs, n, "exp_avg states");
  auto v = tensor_list(exp_avg_sqs, n, "exp_avg_sq states");
  auto t = tensor_list(steps, n, "step states");
  if (maximize) g = at::_foreach_neg(g);
  at::_foreach_add_(t, 1);
  if (weight_decay != 0) {
    if (decoupled) {
      at::_foreach_mul_(p, 1 - lr * weight_decay);
    } else if (maximize) {
      at::_foreach_add_(g, p, weight_decay);   // g is the negated copy: in place, as PyTorch
    } else {
      g = at::_foreach_add(g, p, weight_decay);
    }
  }
  at::_foreach_lerp_(m, g, 1 - beta1);
  at::_foreach_mul_(v, beta2);
  at::_foreach_addcmul_(v, g, g, 1 - beta2);
  std::vector<at::Tensor> denom;
  if (amsgrad) {
    auto vmax = tensor_list(max_exp_avg_sqs, n, "max_exp_avg_sq states");
    at::_foreach_maximum_(vmax, v);
    denom = at::_foreach_sqrt(vmax);
  } else {
    denom = at::_foreach_sqrt(v);
  }
  std::vector<c10::Scalar> bias_correction2_sqrt, step_size;
  bias_correction2_sqrt.reserve(static_cast<size_t>(n));
  step_size.reserve(static_cast<size_t>(n));
  for (const auto &step : t) {
    const double k = step.item<double>();
    bias_correction2_sqrt.emplace_back(std::pow(1 - std::pow(beta2, k), 0.5));
    step_size.emplace_back((lr / (1 - std::pow(beta1, k))) * -1);
  }
  at::_foreach_div_(denom, bias_correction2_sqrt);
  at::_foreach_add_(denom, eps);
  at::_foreach_addcdiv_(p, m, denom, step_size);
  LT_CATCH
}

}  // extern "C"
