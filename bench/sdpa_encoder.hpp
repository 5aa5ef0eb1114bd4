// bench/sdpa_encoder.hpp — the transformer workload's C++ model, written as PyTorch's Python
// computes nn.TransformerEncoder in training (PyTorch 2.11, torch/nn/modules/transformer.py and
// torch/nn/functional.py's multi_head_attention_forward with need_weights=False): the packed
// in-projection made contiguous as (3, L, N, E), scaled_dot_product_attention over (N, H, L, D)
// views, the out-projection, post-norm residuals, ReLU feed-forward. ltorch and the Python side
// of bench/run.lua run exactly this; libtorch's own C++ torch::nn::TransformerEncoder does not
// (its MultiheadAttention multiplies and soft-maxes whole matrices with bmm and averages the
// attention weights it was asked for), so it times other kernels. bench/workloads.cpp times
// both: this one against ltorch's row, libtorch's module on a row of its own.
// Dropout is 0, as in the workload, so the dropout calls (which return their input at p = 0 in
// libtorch, as in Python) are left out.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

struct SdpaEncoderLayerImpl : torch::nn::Module {
  long E, H;
  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr}, linear1{nullptr}, linear2{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};

  SdpaEncoderLayerImpl(long d_model, long nhead, long ff) : E(d_model), H(nhead) {
    // parameters registered in PyTorch's order, initialised as nn.MultiheadAttention does
    in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * E, E}));
    in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * E}));
    torch::nn::init::xavier_uniform_(in_proj_weight);
    out_proj = register_module("out_proj", torch::nn::Linear(E, E));
    torch::nn::init::zeros_(out_proj->bias);
    linear1 = register_module("linear1", torch::nn::Linear(E, ff));
    linear2 = register_module("linear2", torch::nn::Linear(ff, E));
    norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({E}).eps(1e-5)));
    norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({E}).eps(1e-5)));
  }

  // x: (N, L, E), batch first
  torch::Tensor self_attention(const torch::Tensor &x) {
    auto q_in = x.transpose(1, 0);                                   // (L, N, E)
    long L = q_in.size(0), N = q_in.size(1), D = E / H;
    auto proj = torch::linear(q_in, in_proj_weight, in_proj_bias)    // (L, N, 3E)
                    .unflatten(-1, {3, E}).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous();
    auto q = proj[0].view({L, N * H, D}).transpose(0, 1).view({N, H, L, D});
    auto k = proj[1].view({L, N * H, D}).transpose(0, 1).view({N, H, L, D});
    auto v = proj[2].view({L, N * H, D}).transpose(0, 1).view({N, H, L, D});
    auto out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, false);    // (N, H, L, D)
    out = out.permute({2, 0, 1, 3}).contiguous().view({N * L, E});
    out = out_proj->forward(out).view({L, N, E});
    return out.transpose(1, 0);
  }

  torch::Tensor forward(const torch::Tensor &src) {
    auto x = norm1->forward(src + self_attention(src));
    return norm2->forward(x + linear2->forward(torch::relu(linear1->forward(x))));
  }
};
TORCH_MODULE(SdpaEncoderLayer);

// num_layers SdpaEncoderLayers in a row (nn.TransformerEncoder without a final norm); libtorch's
// module names may not hold dots, so the children are layer0, layer1, ... (names only)
struct SdpaEncoderImpl : torch::nn::Module {
  std::vector<SdpaEncoderLayer> layers;
  SdpaEncoderImpl(long num_layers, long d_model, long nhead, long ff) {
    for (long i = 0; i < num_layers; i++)
      layers.push_back(register_module("layer" + std::to_string(i), SdpaEncoderLayer(d_model, nhead, ff)));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto &layer : layers) x = layer->forward(x);
    return x;
  }
};
TORCH_MODULE(SdpaEncoder);
