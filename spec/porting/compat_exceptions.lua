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
    -- torch.cuda
    ["torch.cuda.CUDAPluggableAllocator"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.MemPool"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.use_mem_pool"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.caching_allocator_alloc"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.caching_allocator_delete"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.caching_allocator_enable"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.change_current_allocator"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.get_allocator_backend"] = "not implemented: a custom or pluggable CUDA allocator, raw caching-allocator blocks and memory pools are PyTorch extension-level APIs ltorch does not expose",
    ["torch.cuda.GreenContext"] = "not implemented: green contexts (SM partitions, CUDA 12.4+) are a prototype in PyTorch 2.11",
    ["torch.cuda.check_error"] = "not applicable: turns a raw cudaError_t from Python's ctypes calls into an exception; ltorch raises libtorch's errors itself",
    ["torch.cuda.cudaStatus"] = "not applicable: cudaError_t constants for check_error",
    ["torch.cuda.cudart"] = "not applicable: PyTorch's Python binding of the CUDA runtime module",
    ["torch.cuda.current_blas_handle"] = "not applicable: returns a raw cublasHandle_t for Python extensions",
    ["torch.cuda.get_stream_from_external"] = "not implemented: wrapping a cudaStream_t made outside libtorch (as ExternalStream)",
    ["torch.cuda.get_arch_list"] = "not implemented: the compiled architecture list is kept by PyTorch's Python extension (torch._C._cuda_getArchFlags), not by libtorch's C++ API",
    ["torch.cuda.get_gencode_flags"] = "not implemented: built from get_arch_list, which libtorch's C++ API does not give",
    ["torch.cuda.host_memory_stats"] = "not implemented yet: pinned host memory statistics",
    ["torch.cuda.host_memory_stats_as_nested_dict"] = "not implemented yet: pinned host memory statistics",
    ["torch.cuda.reset_accumulated_host_memory_stats"] = "not implemented yet: pinned host memory statistics",
    ["torch.cuda.reset_peak_host_memory_stats"] = "not implemented yet: pinned host memory statistics",
    ["torch.cuda.ipc_collect"] = "not applicable: frees CUDA memory shared with other processes through torch.multiprocessing, which ltorch does not have",
    ["torch.cuda.memory_snapshot"] = "not implemented: the allocator's block-by-block history (torch.cuda.memory._record_memory_history)",
    ["torch.cuda.list_gpu_processes"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.utilization"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.temperature"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.power_draw"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.clock_rate"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.memory_usage"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    ["torch.cuda.device_memory_used"] = "not implemented: queries NVML through the nvidia-ml-py package (PyTorch raises without it); ltorch does not load NVML",
    -- torch.cuda.amp
    ["torch.cuda.amp.custom_fwd"] = "not implemented: decorators of a Python autograd.Function's forward/backward; ltorch's torch.autograd.Function has no decorator form",
    ["torch.cuda.amp.custom_bwd"] = "not implemented: decorators of a Python autograd.Function's forward/backward; ltorch's torch.autograd.Function has no decorator form",
    -- torch.backends
    ["torch.backends.cpu.get_cpu_capability"] = "not implemented yet",
    ["torch.backends.cuda.can_use_cudnn_attention"] = "not implemented: takes torch.backends.cuda.SDPAParams, a binding ltorch does not have",
    ["torch.backends.cuda.can_use_efficient_attention"] = "not implemented: takes torch.backends.cuda.SDPAParams, a binding ltorch does not have",
    ["torch.backends.cuda.can_use_flash_attention"] = "not implemented: takes torch.backends.cuda.SDPAParams, a binding ltorch does not have",
    ["torch.backends.cuda.is_flash_attention_available"] = "not implemented: answered by libtorch_cuda's internal sdp utilities, not by a public C++ API",
    ["torch.backends.cuda.preferred_rocm_fa_library"] = "not applicable: ROCm only (ltorch runs on libtorch's CUDA build)",
    ["torch.backends.cuda.sdp_kernel"] = "deprecated in PyTorch (use torch.nn.attention.sdpa_kernel); the enable_*_sdp switches are provided",
    ["torch.backends.cusparselt.get_max_alg_id"] = "not implemented: cuSPARSELt semi-structured sparsity is not exposed",
    ["torch.backends.cusparselt.is_available"] = "not implemented: cuSPARSELt semi-structured sparsity is not exposed",
    ["torch.backends.cusparselt.version"] = "not implemented: cuSPARSELt semi-structured sparsity is not exposed",
    ["torch.backends.kleidiai.is_available"] = "not applicable: Arm KleidiAI kernels (aarch64 builds)",
    ["torch.backends.mha.get_fastpath_enabled"] = "not implemented: ltorch's nn.MultiheadAttention has no fused fast path to switch",
    ["torch.backends.mha.set_fastpath_enabled"] = "not implemented: ltorch's nn.MultiheadAttention has no fused fast path to switch",
    ["torch.backends.miopen.flags"] = "not applicable: MIOpen is ROCm only",
    ["torch.backends.miopen.immediate"] = "not applicable: MIOpen is ROCm only",
    ["torch.backends.miopen.set_flags"] = "not applicable: MIOpen is ROCm only",
    ["torch.backends.mkldnn.allow_tf32"] = "not implemented: PyTorch 2.11 reads it as None (its getter returns nothing); torch.backends.mkldnn.fp32_precision is the setting",
    ["torch.backends.mkldnn.is_acl_available"] = "not applicable: the Arm Compute Library (aarch64 builds)",
    ["torch.backends.mps.get_core_count"] = "not applicable: MPS is macOS only (torch.backends.mps.is_available() is false)",
    ["torch.backends.mps.get_name"] = "not applicable: MPS is macOS only (torch.backends.mps.is_available() is false)",
    ["torch.backends.mps.is_macos13_or_newer"] = "not applicable: MPS is macOS only (torch.backends.mps.is_available() is false)",
    ["torch.backends.mps.is_macos_or_newer"] = "not applicable: MPS is macOS only (torch.backends.mps.is_available() is false)",
    ["torch.backends.nnpack.flags"] = "not implemented yet",
    ["torch.backends.nnpack.is_available"] = "not implemented yet",
    ["torch.backends.nnpack.set_flags"] = "not implemented yet",
    ["torch.backends.opt_einsum.flags"] = "not applicable: the opt_einsum Python package's contraction-order search; ltorch's einsum is libtorch's",
    ["torch.backends.opt_einsum.get_opt_einsum"] = "not applicable: the opt_einsum Python package's contraction-order search; ltorch's einsum is libtorch's",
    ["torch.backends.opt_einsum.is_available"] = "not applicable: the opt_einsum Python package's contraction-order search; ltorch's einsum is libtorch's",
    ["torch.backends.opt_einsum.set_flags"] = "not applicable: the opt_einsum Python package's contraction-order search; ltorch's einsum is libtorch's",
  },
}
