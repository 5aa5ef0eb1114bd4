--[[
  spec/porting/compat_exceptions.lua — the known gaps between ltorch and PyTorch's Python API (issue #24),
  by PyTorch's qualified name, each with its reason:
    missing   names ltorch does not have
    differs   names ltorch binds (torch._pysig) with parameters other than PyTorch's, on purpose
  spec/porting/conformance_spec.lua fails for a manifest entry (spec/porting/api_manifest.lua) that is
  missing and not in `missing`, or differs and not in `differs`: a regression fails while the known
  gaps stay visible (docs/COMPATIBILITY.md lists them; tools/gen_compatibility.lua). When a name is
  implemented, delete its line; the doc lists lines no longer needed as stale.
]]
return {
  differs = {
    ["torch.unique"] = "PyTorch's signature is (*args, **kwargs) (a TorchScript-friendly dispatcher); ltorch binds the documented parameters: input, sorted=True, return_inverse=False, return_counts=False, dim=None",
    ["torch.unique_consecutive"] = "PyTorch's signature is (*args, **kwargs); ltorch binds the documented parameters: input, return_inverse=False, return_counts=False, dim=None",
    ["torch.nn.GRU"] = "deliberate: accepts an extra keyword-only proj_size (0 only; non-zero raises as in PyTorch), the shared RNN/GRU/LSTM constructor's; PyTorch's GRU refuses the keyword even for 0. The documented parameters, order and defaults match",
    ["torch.nn.RNN"] = "deliberate: accepts an extra keyword-only proj_size (0 only; non-zero raises as in PyTorch), the shared RNN/GRU/LSTM constructor's; PyTorch's RNN refuses the keyword even for 0. The documented parameters, order and defaults match",
  },
  missing = {
    -- torch.nn
    ["torch.nn.DataParallel"] = "not implemented: single-process multi-GPU replication (ltorch runs one device per process)",
    ["torch.nn.SyncBatchNorm"] = "not implemented: batch statistics synchronised across processes need torch.distributed's process groups",
    -- torch.nn.functional
    ["torch.nn.functional.grouped_mm"] = "not implemented: CUDA-only float8 / grouped GEMM kernels",
    ["torch.nn.functional.scaled_grouped_mm"] = "not implemented: CUDA-only float8 / grouped GEMM kernels",
    ["torch.nn.functional.scaled_mm"] = "not implemented: CUDA-only float8 / grouped GEMM kernels",
    -- torch.nn.init
    -- torch.nn.utils
    -- torch.nn.utils.rnn
    -- torch.nn.utils.parametrizations
    -- torch.optim
    ["torch.optim.SparseAdam"] = "not implemented: needs sparse gradients (nn.Embedding(sparse=True)), which ltorch does not produce",
    -- torch.optim.lr_scheduler
    -- torch.utils.data
    -- torch
    ["torch.compile"] = "not applicable: torch.compile traces Python bytecode (TorchDynamo); a Lua program has none to trace",
    ["torch.compiled_with_cxx11_abi"] = "not implemented: reports how PyTorch's Python wheel was built; ltorch links one libtorch",
    ["torch.cond"] = "not implemented: a control-flow operator for torch.compile / torch.export graphs",
    ["torch.is_storage"] = "not implemented: ltorch exposes no Storage objects",
    ["torch.lobpcg"] = "not implemented yet",
    ["torch.set_default_tensor_type"] = "deprecated in PyTorch (use set_default_dtype / set_default_device): not provided",
    ["torch.vmap"] = "not implemented: functorch's vmap needs per-op batching rules exposed to Lua",
    -- Tensor
    ["torch.Tensor.align_to"] = "not implemented: named tensors (a prototype feature in PyTorch)",
    ["torch.Tensor.is_shared"] = "not implemented: ltorch exposes no Storage objects or shared-memory tensors",
    ["torch.Tensor.refine_names"] = "not implemented: named tensors (a prototype feature in PyTorch)",
    ["torch.Tensor.rename"] = "not implemented: named tensors (a prototype feature in PyTorch)",
    ["torch.Tensor.rename_"] = "not implemented: named tensors (a prototype feature in PyTorch)",
    ["torch.Tensor.share_memory_"] = "not implemented: ltorch exposes no Storage objects or shared-memory tensors",
    ["torch.Tensor.storage"] = "not implemented: ltorch exposes no Storage objects or shared-memory tensors",
    ["torch.Tensor.storage_type"] = "not implemented: ltorch exposes no Storage objects or shared-memory tensors",
    ["torch.Tensor.to_sparse_coo"] = "not implemented yet",
  },
}
