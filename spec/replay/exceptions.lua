--[[
  spec/replay/exceptions.lua — the entries of PyTorch's test databases that ltorch does not yet
  replay cleanly (issue #36), by database and entry, each with its category and reason:
    missing      ltorch has no such name
    refuses      ltorch raises an argument error for PyTorch's call
    raises       ltorch raises otherwise where PyTorch returns
    grad_raises  backward raises where PyTorch's does not
    no_error     an error input: PyTorch raises, ltorch returns
    state_dict   the module's state_dict keys differ from PyTorch's
    crash        the case killed its process (a bug: the reason names it)
  A silent difference (categories differs and grad: another value, dtype, shape or gradient
  returned without error) can never be listed: it is a bug to fix. spec/replay/*_db_spec.lua fail
  for an unlisted failure and for a listed one that no longer occurs: delete the line when fixed.
]]
return {
  ops = {
    ["cdist"] = { refuses = "compute_mode: ltorch binds ATen's int code, not torch.cdist's Python strings ('use_mm_for_euclid_dist_if_necessary', ...)" },
    ["cdouble"] = { missing = "Tensor.cdouble (to complex128) is not implemented" },
    ["cfloat"] = { missing = "Tensor.cfloat (to complex64) is not implemented" },
    ["chalf"] = { raises = "complex32 (chalf) is not an ltorch dtype: reading the result's dtype raises" },
    ["empty_permuted"] = { refuses = "the requires_grad keyword of the factory functions is not accepted" },
    ["empty_strided"] = { refuses = "the requires_grad keyword of the factory functions is not accepted" },
    ["gradient"] = { refuses = "spacing as a list of numbers (the Scalar[] overloads; docs/ops_skipped.md: Scalar lists are not bound) is refused" },
    ["hash_tensor"] = { raises = "its result is uint64, not an ltorch dtype: reading the result's dtype raises" },
    ["linspace"] = { no_error = "a non-integral steps: PyTorch's binding refuses a float (TypeError); ltorch accepts it" },
    ["logspace"] = { no_error = "a non-integral steps: PyTorch's binding refuses a float (TypeError); ltorch accepts it" },
    ["narrow"] = { refuses = "start as a 0-dim tensor (narrow.Tensor overload) is refused: an integer is expected" },
    ["nn.functional.adaptive_avg_pool2d"] = { refuses = "None in output_size (keep that input size) is not accepted" },
    ["nn.functional.adaptive_avg_pool3d"] = { raises = "None in output_size (keep that input size) is not accepted" },
    ["nn.functional.adaptive_max_pool3d"] = { raises = "None in output_size (keep that input size) is not accepted" },
    ["squeeze.multiple"] = { refuses = "a tuple of dims is refused: an integer is expected" },
    ["std.unbiased"] = { refuses = "the unbiased boolean as the second positional argument (std(x, True)) is refused" },
    ["var.unbiased"] = { refuses = "the unbiased boolean as the second positional argument (var(x, True)) is refused" },
    ["linspace.tensor_overload"] = { refuses = "start / end as 0-dim tensors are refused: a number is expected", no_error = "a non-integral steps: PyTorch's binding refuses a float (TypeError); ltorch accepts it" },
    ["logspace.tensor_overload"] = { no_error = "a non-integral steps: PyTorch's binding refuses a float (TypeError); ltorch accepts it" },
    ["signal.windows.hamming"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.hann"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.bartlett"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.blackman"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.cosine"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.exponential"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.gaussian"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.kaiser"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.general_cosine"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.general_hamming"] = { missing = "torch.signal.windows is not implemented" },
    ["signal.windows.nuttall"] = { missing = "torch.signal.windows is not implemented" },
  },
  modules = {
  },
  optims = {
  },
}
