/*
 * lt_nn.cpp — the activations and losses a training loop needs from the first day: softmax and
 * log_softmax, nll_loss, cross_entropy (with ignore_index and label smoothing), mse_loss.
 * The full nn surface comes from the generated op wrappers; these stay because the foundation's
 * own MLP example and specs rely on them.
 *
 * Shapes: logits/logp (N, C) or (N, C, d1, ...); target (N) or (N, d1, ...) class indices int64.
 * reduction: 0 none, 1 mean, 2 sum (PyTorch's at::Reduction codes).
 */
#include "lt_internal.hpp"

#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/mse_loss.h>
#include <ATen/ops/nll_loss_nd.h>
#include <ATen/ops/softmax.h>

namespace {

int64_t reduction_code(int reduction) {
  if (reduction < 0 || reduction > 2)
    throw lt::ValueError("reduction must be 'none', 'mean' or 'sum' (code " + std::to_string(reduction) + ")");
  return reduction;
}

}  // namespace

extern "C" {

int lt_softmax(lt_tensor **out, const lt_tensor *t, int64_t dim, int log) {
  LT_TRY_OP
  *out = lt::wrap(log ? at::log_softmax(lt::get(t), dim) : at::softmax(lt::get(t), dim));
  LT_CATCH
}

int lt_nll_loss(lt_tensor **out, const lt_tensor *logp, const lt_tensor *target, int reduction, int64_t ignore_index) {
  LT_TRY_OP
  *out = lt::wrap(at::nll_loss_nd(lt::get(logp), lt::get(target), {}, reduction_code(reduction), ignore_index));
  LT_CATCH
}

int lt_cross_entropy(lt_tensor **out, const lt_tensor *logits, const lt_tensor *target, int reduction,
                     int64_t ignore_index, double label_smoothing) {
  LT_TRY_OP
  *out = lt::wrap(at::cross_entropy_loss(lt::get(logits), lt::get(target), {}, reduction_code(reduction),
                                         ignore_index, label_smoothing));
  LT_CATCH
}

int lt_mse_loss(lt_tensor **out, const lt_tensor *a, const lt_tensor *b, int reduction) {
  LT_TRY_OP
  *out = lt::wrap(at::mse_loss(lt::get(a), lt::get(b), reduction_code(reduction)));
  LT_CATCH
}

}  // extern "C"
