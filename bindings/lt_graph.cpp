/*
 * lt_graph.cpp — the autograd graph above a tensor through the C ABI: x.grad_fn as an opaque node
 * handle, its name(), its next_functions (PyTorch's tuple of (Node|None, input_nr) pairs) and the
 * leaf tensor of an AccumulateGrad node (.variable), for inspecting a training graph from Lua.
 *
 * A handle holds a shared_ptr to its torch::autograd::Node, so a node stays alive (and its edges
 * stay valid) while Lua holds it, even after the output tensor is gone, as in PyTorch. Nodes are
 * only read here: nothing calls, releases or changes them.
 */
#include "lt_internal.hpp"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <cstdint>
#include <memory>
#include <string>

struct lt_node {
  std::shared_ptr<torch::autograd::Node> fn;
};

namespace {

const torch::autograd::Node &node_of(const lt_node *h) {
  if (h == nullptr || !h->fn) throw lt::ValueError("autograd node handle is NULL");
  return *h->fn;
}

}  // namespace

extern "C" {

int lt_tensor_grad_fn(const lt_tensor *t, lt_node **out) {
  LT_TRY
  const auto &fn = lt::get(t).grad_fn();
  *out = fn ? new lt_node{fn} : nullptr;
  LT_CATCH
}

int lt_node_name(const lt_node *node, const char **out) {
  LT_TRY
  thread_local std::string name;
  name = node_of(node).name();
  *out = name.c_str();
  LT_CATCH
}

int lt_node_num_next(const lt_node *node, int *out) {
  LT_TRY
  *out = static_cast<int>(node_of(node).num_outputs());
  LT_CATCH
}

int lt_node_next(const lt_node *node, int i, lt_node **out, int *input_nr) {
  LT_TRY
  const auto &fn = node_of(node);
  if (i < 0 || static_cast<uint32_t>(i) >= fn.num_outputs())
    throw lt::ValueError("lt_node_next: edge index " + std::to_string(i) + " out of range (the node has " +
                         std::to_string(fn.num_outputs()) + ")");
  const torch::autograd::Edge &edge = fn.next_edge(static_cast<size_t>(i));
  /* as PyTorch's next_functions: (None, edge.input_nr) for an input that needs no grad (0) */
  *out = edge.function ? new lt_node{edge.function} : nullptr;
  *input_nr = static_cast<int>(edge.input_nr);
  LT_CATCH
}

int lt_node_variable(const lt_node *node, lt_tensor **out) {
  LT_TRY
  const auto *acc = dynamic_cast<const torch::autograd::AccumulateGrad *>(&node_of(node));
  *out = acc ? lt::wrap(acc->variable) : nullptr;
  LT_CATCH
}

int lt_node_same(const lt_node *a, const lt_node *b, int *out) {
  LT_TRY
  *out = (&node_of(a) == &node_of(b)) ? 1 : 0;
  LT_CATCH
}

int lt_node_id(const lt_node *node, uint64_t *out) {
  LT_TRY
  *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&node_of(node)));
  LT_CATCH
}

int lt_node_free(lt_node *node) {
  LT_TRY
  delete node;
  LT_CATCH
}

}  // extern "C"
